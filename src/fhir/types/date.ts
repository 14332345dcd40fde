import { singleValued } from '../../registry/index.ts';
import { parseFhirDate, pgTimestamp } from '../date.ts';
import { badRequest, notSupported } from '../outcome.ts';
import type { Condition, DateValue, ParseContext } from '../search-request.ts';
import { join, stmt, type Statement } from '../statement.ts';
import { describe, type SearchType } from './search-type.ts';

/**
 * Date: a prefix (eq ne gt lt ge le sa eb ap) and a FHIR date of any precision, compared as
 * [low, high) ranges (docs/fhir-search §3.2); an instant element (registry `instant`) is a point,
 * its `low`. Indexed into date_idx (param, low, high).
 */
export interface DateRow {
  param: number;
  low: number;
  high: number;
}

type DateCondition = Extract<Condition, { kind: 'date' }>;

const DAY = 86_400_000;
/** Days whose keys (YYYY-MM-DD) sort as they follow each other: years 1 to 9999. */
const MIN_DAY = Date.parse('0001-01-01T00:00:00Z');
const MAX_DAY = Date.parse('9999-12-31T00:00:00Z');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const PREFIXES = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'] as const;

/** `implied`: the prefix an alias stands for (`_since=T` is `_lastUpdated=geT`); the value then takes none. */
function parseValue(raw: string, name: string, ctx: ParseContext, implied?: string): DateValue {
  const m = /^([a-z]{2})?(.*)$/s.exec(raw)!;
  let prefix = m[1];
  let text = m[2];
  if (prefix && !(PREFIXES as readonly string[]).includes(prefix)) {
    throw badRequest(`parameter ${name}: unknown date prefix "${prefix}" in "${raw}" (eq ne gt lt ge le sa eb ap)`, name);
  }
  if (implied) {
    if (prefix) throw badRequest(`parameter ${name}: takes an instant without a prefix, got "${raw}"`, name);
    prefix = implied;
  }
  // A raw "+" in a query string decodes to a space: "…T10:00:00 01:00" means +01:00.
  text = text.replace(/ (\d{2}:\d{2})$/, '+$1');
  const range = parseFhirDate(text);
  if (!range) {
    throw badRequest(`parameter ${name}: "${raw}" is not a FHIR date (YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.sss]][Z|±hh:mm])`, name);
  }
  let { low, high } = range;
  const p = (prefix ?? 'eq') as DateValue['prefix'];
  if (p === 'ap') {
    // ±10 % of the distance between now and the value (at least the value's own precision).
    const slack = Math.ceil(0.1 * Math.abs(ctx.now - low));
    low -= slack;
    high += slack;
  }
  return { prefix: p, low, high };
}

/** The FHIR prefixes on [low, high) ranges, or on the point `low` of an instant. */
function valueMatch(v: DateValue, instant: boolean): Statement {
  const lo = new Date(v.low);
  const hi = new Date(v.high);
  if (instant) {
    switch (v.prefix) {
      case 'eq': case 'ap': return stmt`(d.low >= ${lo} and d.low < ${hi})`;
      case 'ne': return stmt`(d.low < ${lo} or d.low >= ${hi})`;
      case 'gt': case 'sa': return stmt`d.low >= ${hi}`;
      case 'lt': case 'eb': return stmt`d.low < ${lo}`;
      case 'ge': return stmt`d.low >= ${lo}`;
      case 'le': return stmt`d.low < ${hi}`;
    }
  }
  switch (v.prefix) {
    case 'eq': return stmt`(d.low >= ${lo} and d.high <= ${hi})`;
    case 'ne': return stmt`(d.low < ${lo} or d.high > ${hi})`;
    case 'gt': return stmt`d.high > ${hi}`;
    case 'lt': return stmt`d.low < ${lo}`;
    case 'ge': return stmt`(d.low >= ${lo} or d.high > ${hi})`;
    case 'le': return stmt`(d.high <= ${hi} or d.low < ${lo})`;
    case 'sa': return stmt`d.low >= ${hi}`;
    case 'eb': return stmt`d.high <= ${lo}`;
    case 'ap': return stmt`(d.low < ${hi} and d.high > ${lo})`;
  }
}

/** The points an instant's value matches, [from, to) (undefined: unbounded); undefined for `ne`, two intervals. */
function pointsOf(v: DateValue): { from?: number; to?: number } | undefined {
  switch (v.prefix) {
    case 'eq': case 'ap': return { from: v.low, to: v.high };
    case 'gt': case 'sa': return { from: v.high };
    case 'ge': return { from: v.low };
    case 'lt': case 'eb': return { to: v.low };
    case 'le': return { to: v.high };
    case 'ne': return undefined;
  }
}

export const date: SearchType<DateCondition, DateRow> = {
  table: { name: 'date_idx', alias: 'd', columns: 'low, high' },

  parse(param, modifier, raws, name, ctx, _type, implied) {
    if (modifier !== undefined) throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on date parameter ${param.code}`, name);
    return { kind: 'date', param, values: raws.map((r) => parseValue(r, name, ctx, implied)) };
  },

  modifiers: () => [],

  match: (c) => stmt`(${join(c.values.map((v) => valueMatch(v, c.param.instant === true)), 'or')})`,

  // An instant (one per resource) is counted per UTC day: a range of whole days is a sum of days.
  counts: {
    counted: (param) => param.instant === true,
    keys: (row) => [`d:${day(row.low)}`],
    total(c) {
      if (c.values.length !== 1) return undefined;
      const { prefix, low, high } = c.values[0];
      const bound = (ms: number) => (ms % DAY === 0 && ms >= MIN_DAY && ms <= MAX_DAY ? `d:${day(ms)}` : undefined);
      const [lo, hi] = { eq: [low, high], ge: [low, undefined], gt: [high, undefined], sa: [high, undefined], le: [undefined, high], lt: [undefined, low], eb: [undefined, low] }[prefix as 'eq'] ?? [];
      if (lo === undefined && hi === undefined) return undefined;
      const from = lo === undefined ? 'd:' : bound(lo);
      const to = hi === undefined ? 'd;' : bound(hi);
      return from && to ? { from, to } : undefined;
    },
  },

  // A single-valued instant is one point per resource: two one-value conditions on it are the
  // intersection of their intervals, written with the prefixes valueMatch reads as points.
  conjoin(a, b) {
    if (a.kind !== 'date' || b.kind !== 'date' || !a.param.instant || !singleValued(a.param) || a.values.length !== 1 || b.values.length !== 1) return undefined;
    const x = pointsOf(a.values[0]);
    const y = pointsOf(b.values[0]);
    if (!x || !y) return undefined;
    const from = x.from === undefined ? y.from : y.from === undefined ? x.from : Math.max(x.from, y.from);
    const to = x.to === undefined ? y.to : y.to === undefined ? x.to : Math.min(x.to, y.to);
    const value: DateValue = from === undefined ? { prefix: 'lt', low: to!, high: to! }
      : to === undefined ? { prefix: 'ge', low: from, high: from }
      : { prefix: 'eq', low: from, high: Math.max(from, to) };
    return { kind: 'date', param: a.param, values: [value] };
  },

  rows: (c, hints) => stmt`select d.rid from date_idx d where d.param = ${c.param.id} and ${date.match(c, hints)!}`,

  rowsOf: {
    index(param, value, emit, fail) {
      if (typeof value !== 'string') fail(`must be a string, found ${describe(value)}`);
      const range = parseFhirDate(value as string);
      if (!range) fail(`is not a valid FHIR date: "${String(value)}"`);
      emit({ param: param.id, low: range!.low, high: range!.high });
    },

    same: (a, b) => a.low === b.low && a.high === b.high,

    copyText: (row) => `${pgTimestamp(row.low)}\t${pgTimestamp(row.high)}`,

    // `ge` the day of the value (UTC): a value of that day or later finds it.
    searchValue: (row) => `ge${new Date(row.low).toISOString().slice(0, 10)}`,
  },
};
