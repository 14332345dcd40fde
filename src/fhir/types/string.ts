import { unescape } from '../escape.ts';
import { normalize, prefixUpperBound } from '../normalize.ts';
import { badRequest, notSupported } from '../outcome.ts';
import type { Condition, PlanHints } from '../search-request.ts';
import { join, stmt, type Statement } from '../statement.ts';
import { copyText } from './copy.ts';
import { describe, type SearchType } from './search-type.ts';

/**
 * String: starts-with after folding (src/fhir/normalize.ts), `:exact` on the stored text,
 * `:contains` anywhere in the folded text, and sub-parameter modifiers (`name:family`). Indexed into
 * string_idx (param, norm, exact): prefixes are ranges of `norm` under COLLATE "C", which a btree
 * serves with any plan; `:contains` has a trigram index on the distinct (param, norm) of string_value.
 */
export interface StringRow {
  param: number;
  norm: string;
  exact: string;
}

type StringCondition = Extract<Condition, { kind: 'string' }>;

/** Prefixes counted per value (sql/012 string_count_keys): a value's first 1, 2 and 3 characters. */
const COUNTED_PREFIX = 3;

export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The value_count key of a folded value's first COUNTED_PREFIX characters (by code points, as string_count_keys). */
export const countedPrefixKey = (norm: string) => `p:${Array.from(norm).slice(0, COUNTED_PREFIX).join('')}`;

/**
 * A probe of a prefix for one row of a small driver (a lookup of the parameter's index by rid),
 * against a row of the prefix's range read once and hashed.
 */
const PROBE_ROW_COST = 50;

/**
 * The most rows of a set hashed beside a driver: PostgreSQL hashes it only when its estimate fits
 * the hash memory (4 MB of work_mem × 2 by default: about 150,000 rows), else scans it per row.
 */
const HASHED_SET_ROWS = 100_000;

/**
 * Folded :contains needles with a run of 3 letters or digits (at least one trigram pg_trgm can look
 * up: it splits on anything else) are candidates for the trigram index.
 */
export const containsNeedle = (v: string): string | undefined => {
  const n = normalize(v);
  return /[a-z0-9]{3}/.test(n) ? n : undefined;
};

/**
 * Whether a condition's whole set is read first, before the other conditions are checked on it:
 * :contains — the key-order walk of the parameter is fast for a common needle and slow for a rare
 * one, the trigram index the other way round, and PostgreSQL's cost model for '%needle%' favours
 * the walk, so needles the planner does not find common read their trigram set first; a prefix
 * the planner counted rare reads its whole range, whatever PostgreSQL estimates from statistics
 * that mix every string parameter.
 */
export function readWhole(c: StringCondition, hints: PlanHints): boolean {
  const rare = (v: string) => {
    const n = containsNeedle(v);
    return n !== undefined && !hints.commonNeedles?.has(`${c.param.id}/${n}`);
  };
  if (c.mode === 'contains') return c.values.every(rare);
  return c.mode === 'prefix' && c.values.every((v) => hints.rarePrefixes?.has(`${c.param.id}/${normalize(v)}`) === true);
}

/**
 * Beside a small driver (a condition read whole), whether the prefix condition `c` is read as a set,
 * its ranges once, rather than probed for each of the driver's rows: when its ranges hold fewer rows
 * than PROBE_ROW_COST × the driver's, and few enough to be hashed. A rare prefix drives with its
 * counted rows; the other prefixes are weighed by their bounds (the planner's hints). A needle's
 * rows are not counted: probed.
 */
export function setBeside(c: Condition, driver: StringCondition, hints: PlanHints): boolean {
  if (c.kind !== 'string' || c.mode !== 'prefix' || driver.mode !== 'prefix') return false;
  const rows = (d: StringCondition) =>
    d.values.reduce<number | undefined>((sum, v) => {
      const key = `${d.param.id}/${normalize(v)}`;
      const n = hints.rarePrefixes?.get(key) ?? hints.prefixBounds?.get(key);
      return sum === undefined || n === undefined ? undefined : sum + n;
    }, 0);
  const [driverRows, range] = [rows(driver), rows(c)];
  return driverRows !== undefined && range !== undefined && range < PROBE_ROW_COST * driverRows && range <= HASHED_SET_ROWS;
}

/** A folded prefix as a range of a `C`-collated column: the values starting with it. */
function prefixRange(column: Statement, n: string): Statement {
  const hi = prefixUpperBound(n);
  return hi === undefined ? stmt`${column} >= ${n}` : stmt`(${column} >= ${n} and ${column} < ${hi})`;
}

/** A condition per value, any of them matching; undefined when one value matches anything (`part` gives undefined). */
function anyOf(values: readonly string[], part: (v: string) => Statement | undefined): Statement | undefined {
  const parts: Statement[] = [];
  for (const v of values) {
    const one = part(v);
    if (one === undefined) return undefined;
    parts.push(one);
  }
  return parts.length === 1 ? parts[0] : stmt`(${join(parts, 'or')})`;
}

/** Prefixes (folded here) as ranges of a `C`-collated column of folded values, any of them matching. */
export function prefixRanges(column: Statement, values: readonly string[]): Statement | undefined {
  return anyOf(values, (v) => {
    const n = normalize(v);
    return n === '' ? undefined : prefixRange(column, n);
  });
}

export const string: SearchType<StringCondition, StringRow> = {
  table: { name: 'string_idx', alias: 's', columns: 'norm, exact' },

  parse(param, modifier, raws, name, ctx, type) {
    let mode: StringCondition['mode'] = 'prefix';
    const unsupported = () => notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on string parameter ${param.code}`, name);
    if (modifier === 'exact' || modifier === 'contains') mode = modifier;
    else if (modifier !== undefined && param.parts?.[modifier]) {
      const sub = ctx.registry.byCode(type, param.parts[modifier]);
      if (!sub) throw unsupported();
      param = sub;
    } else if (modifier !== undefined) throw unsupported();
    const values = raws.map((r) => unescape(r, name));
    if (mode !== 'exact' && values.some((v) => normalize(v) === '' && v !== '')) {
      throw badRequest(`parameter ${name}: "${raws.join(',')}" has no letter or digit to search for`, name);
    }
    return { kind: 'string', param, mode, values };
  },

  modifiers: (param) => ['exact', 'contains', ...Object.keys(param.parts ?? {})],

  match(c) {
    if (c.mode === 'prefix') return prefixRanges(stmt`s.norm`, c.values);
    return anyOf(c.values, (v) => {
      const n = normalize(v);
      if (c.mode === 'exact') return stmt`(s.norm = ${n} and s.exact = ${v})`;
      return n === '' ? undefined : stmt`s.norm like ${`%${likeEscape(n)}%`}`; // '' matches any value
    });
  },

  counts: {
    counted: () => true,
    keys: (row) => {
      // By code points, as PostgreSQL's left(norm, n) in string_count_keys (sql/012).
      const keys: string[] = [];
      let prefix = 'p:';
      for (const ch of row.norm) {
        prefix += ch;
        keys.push(prefix);
        if (keys.length === COUNTED_PREFIX) break;
      }
      return keys;
    },
    // The broad prefixes (a letter to three, a department) are read; longer ones are counted.
    total(c) {
      if (c.mode !== 'prefix' || c.values.length !== 1) return undefined;
      const norm = normalize(c.values[0]);
      const n = Array.from(norm).length;
      return n >= 1 && n <= COUNTED_PREFIX ? { keys: [countedPrefixKey(norm)] } : undefined;
    },
  },

  rows(c, hints) {
    const match = string.match(c, hints);
    if (!match) return stmt`select s.rid from string_idx s where s.param = ${c.param.id}`;
    const whole = readWhole(c, hints);
    if (c.mode === 'contains' && whole) {
      // The needles' values from the trigram index of the distinct values (sql/016), then each
      // value's rows by one lookup (OFFSET 0 in the lateral): a join PostgreSQL chose on its estimate
      // of the values could hash every row of the parameter.
      const values = join(c.values.map((v) => stmt`v.norm like ${`%${likeEscape(normalize(v))}%`}`), 'or');
      return stmt`select s.rid from (select s.rid from (select v.norm from string_value v where v.param = ${c.param.id} and (${values})) v,
        lateral (select s.rid from string_idx s where s.param = ${c.param.id} and s.norm = v.norm offset 0) s offset 0) s`;
    }
    const set = stmt`select s.rid from string_idx s where s.param = ${c.param.id} and ${match}`;
    // OFFSET 0 keeps the subquery from being flattened into a key-order walk (see readWhole).
    return whole ? stmt`select s.rid from (${set} offset 0) s` : set;
  },

  rowsOf: {
    index(param, value, emit, fail) {
      if (typeof value !== 'string') fail(`must be a string, found ${describe(value)}`);
      const exact = value as string;
      if (exact.trim() !== '') emit({ param: param.id, norm: normalize(exact), exact });
    },

    // The folded value follows from the stored one.
    same: (a, b) => a.exact === b.exact,

    copyText: (row) => `${copyText(row.norm)}\t${copyText(row.exact)}`,

    searchValue: (row) => row.exact,
  },
};
