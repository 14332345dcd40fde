import type { BoundParam } from '../../registry/index.ts';
import { splitUnescaped, unescape } from '../escape.ts';
import { normalize } from '../normalize.ts';
import { badRequest, notSupported } from '../outcome.ts';
import type { Condition, ParseContext, PlanHints, TokenValue } from '../search-request.ts';
import { join, stmt, type Statement } from '../statement.ts';
import { copyText } from './copy.ts';
import { describe, isObject, subPath, type Fail, type SearchType } from './search-type.ts';
import { likeEscape } from './string.ts';

/**
 * Token: `code`, `system|code`, `|code` (no system) or `system|`, `:not`, and `:text` (codes whose
 * label has a word starting with each word of the value, folded like strings). Indexed from
 * booleans, codes, Codings, CodeableConcepts and Identifiers into token_idx (param, sys, code), the
 * system interned in token_system (0: none); a Coding's display, or its CodeableConcept's text, is
 * its `label`, which the write path keeps in code_label beside the shipped terminology's.
 */
export interface TokenRow {
  param: number;
  system: string | null;
  code: string;
  label?: string;
}

type TokenCondition = Extract<Condition, { kind: 'token' }>;

/** A token value's system (undefined without a `|`) and code, unescaped. */
export function tokenParts(raw: string, name: string): [string | undefined, string] {
  const parts = splitUnescaped(raw, '|');
  if (parts.length > 2) throw badRequest(`parameter ${name}: "${raw}" has more than one unescaped "|"`, name);
  return parts.length === 1 ? [undefined, unescape(parts[0], name)] : [unescape(parts[0], name), unescape(parts[1], name)];
}

function parseValue(p: BoundParam, raw: string, name: string, ctx: ParseContext): TokenValue {
  const [sys, code] = tokenParts(raw, name);
  if (p.boolean) {
    // A boolean has no system: `|true` (explicitly none) is `true`.
    if (sys || (code !== 'true' && code !== 'false')) throw badRequest(`parameter ${name}: "${raw}" is not a boolean (true, false, |true or |false)`, name);
    return sys === undefined ? { code } : { system: null, code };
  }
  if (sys === undefined) return { code };
  if (sys === '' && code === '') throw badRequest(`parameter ${name}: "|" needs a system or a code`, name);
  const aliases = ctx.registry.systemAliases(ctx.version);
  const system = sys === '' ? null : (aliases[sys] ?? sys);
  return code === '' ? { system } : { system, code };
}

/**
 * A token on a `code` element, whose codes are stored without their implied system: that system
 * with a code is the bare code, that system alone is any value, `|code` (no system) is nothing.
 */
function impliedSystemCondition(param: BoundParam, implied: string, not: boolean, values: TokenValue[]): Condition {
  if (values.some((v) => v.system === implied && v.code === undefined)) return { kind: 'missing', param, missing: not };
  const kept = values.filter((v) => v.system !== null).map((v) => (v.system === implied ? { code: v.code } : v));
  if (kept.length === 0 && !not) return { kind: 'none' };
  return { kind: 'token', param, not, values: kept };
}

function valueMatch(hints: PlanHints, v: TokenValue): Statement {
  const sys = v.system === undefined ? undefined : v.system === null ? 0 : (hints.systemId(v.system) ?? -1);
  if (v.code === undefined) return stmt`t.sys = ${sys!}`;
  if (sys === undefined) return stmt`t.code = ${v.code}`;
  return stmt`(t.code = ${v.code} and t.sys = ${sys})`;
}

/** One token's values or'ed: the bare codes as one `any(…)`, the others one by one. */
function valuesMatch(hints: PlanHints, values: TokenValue[]): Statement {
  const plain = values.filter((v) => v.system === undefined && v.code !== undefined).map((v) => v.code!);
  const parts = values.filter((v) => !(v.system === undefined && v.code !== undefined)).map((v) => valueMatch(hints, v));
  if (plain.length === 1) parts.unshift(stmt`t.code = ${plain[0]}`);
  else if (plain.length > 1) parts.unshift(stmt`t.code = any(${plain}::text[])`);
  return parts.length === 1 ? parts[0] : stmt`(${join(parts, 'or')})`;
}

/**
 * The tokens of a boolean, code, Coding, CodeableConcept or Identifier; `at`: where in the element
 * value; `text`: the CodeableConcept's text, the label of its codings without a display.
 */
function tokens(param: BoundParam, v: unknown, at: string | undefined, emit: (row: TokenRow) => void, fail: Fail, text?: string): void {
  if (typeof v === 'boolean') return emit({ param: param.id, system: null, code: String(v) });
  if (typeof v === 'string') return emit({ param: param.id, system: null, code: v });
  if (!isObject(v)) return fail(`must be a code, Coding, CodeableConcept or Identifier, found ${describe(v)}`, at);
  if ('coding' in v) {
    const codings = v.coding;
    if (codings === undefined || codings === null) return;
    if (!Array.isArray(codings)) return fail(`must be an array, found ${describe(codings)}`, subPath(at, 'coding'));
    const label = stringAt(v, 'text', at, fail);
    for (let i = 0; i < codings.length; i++) if (codings[i] !== null) tokens(param, codings[i], subPath(at, `coding[${i}]`), emit, fail, label);
    return;
  }
  const system = stringAt(v, 'system', at, fail) ?? null;
  if ('code' in v) {
    const code = stringAt(v, 'code', at, fail);
    const label = stringAt(v, 'display', at, fail) ?? text;
    if (code !== undefined && code !== '') emit(label?.trim() ? { param: param.id, system, code, label } : { param: param.id, system, code });
    return;
  }
  const value = stringAt(v, 'value', at, fail);
  if (value !== undefined && value !== '') emit({ param: param.id, system, code: value });
}

/** The words of a `:text` value, folded like strings. */
const textWords = (v: string): string[] => normalize(v).split(' ').filter((w) => w !== '');

/**
 * The codes whose label has, for one of the values, a word starting with each of its words. A code
 * of a parameter with an implied system is stored without it, and labelled with or without it.
 */
function labelMatch(param: BoundParam, text: string[][]): Statement {
  const value = (words: string[]) => join(words.map((w) => stmt`(' ' || l.norm) like ${`% ${likeEscape(w)}%`}`), 'and');
  const matched = join(text.map((words) => stmt`(${value(words)})`), 'or');
  if (param.impliedSystem === undefined) return stmt`(t.sys, t.code) in (select l.sys, l.code from code_label l where ${matched})`;
  return stmt`(t.sys = 0 and t.code in (select l.code from code_label l
    where (l.sys = 0 or l.sys = (select s.id from token_system s where s.uri = ${param.impliedSystem})) and ${matched}))`;
}

function conditionMatch(hints: PlanHints, c: TokenCondition): Statement {
  return c.text ? labelMatch(c.param, c.text) : valuesMatch(hints, c.values);
}

/** An optional string property; `fail` names it, below `at`, when it is something else. */
function stringAt(o: Record<string, unknown>, key: string, at: string | undefined, fail: Fail): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(`must be a string, found ${describe(v)}`, subPath(at, key));
  return v as string;
}

export const token: SearchType<TokenCondition, TokenRow> = {
  table: { name: 'token_idx', alias: 't', columns: 'sys, code' },

  parse(param, modifier, raws, name, ctx) {
    if (modifier !== undefined && modifier !== 'not' && modifier !== 'text') {
      throw notSupported(`parameter ${name}: the modifier ":${modifier}" is not supported on token parameter ${param.code}`, name);
    }
    if (modifier === 'text') {
      const text = raws.map((r) => textWords(unescape(r, name)));
      if (text.some((w) => w.length === 0)) throw badRequest(`parameter ${name}: "${raws.join(',')}" has no letter or digit to search for`, name);
      return { kind: 'token', param, not: false, values: [], text };
    }
    const values = raws.map((r) => parseValue(param, r, name, ctx));
    const not = modifier === 'not';
    return param.impliedSystem === undefined ? { kind: 'token', param, not, values } : impliedSystemCondition(param, param.impliedSystem, not, values);
  },

  modifiers: () => ['not', 'text'],

  match: (c, hints) => conditionMatch(hints, c),

  // Selective parameters (identifiers) are not counted: a page of their lookup holds its matches.
  counts: {
    counted: (param) => param.selective !== true && param.column === undefined,
    keys: (row, system) => {
      const sys = row.system === null ? '0' : system(row.system);
      return [`c:${row.code}`, `s:${sys}:${row.code}`, `y:${sys}`];
    },
    total(c, hints) {
      if (c.not || c.text || c.values.length !== 1) return undefined;
      const [{ system, code }] = c.values;
      const sys = system === undefined ? undefined : system === null ? 0 : (hints.systemId(system) ?? -1);
      if (code === undefined) return { keys: [`y:${sys}`] };
      return { keys: [sys === undefined ? `c:${code}` : `s:${sys}:${code}`] };
    },
  },

  rows: (c, hints) => stmt`select t.rid from token_idx t where t.param = ${c.param.id} and ${conditionMatch(hints, c)}`,

  rowsOf: {
    index(param, value, emit, fail) {
      if (param.boolean && typeof value !== 'boolean') fail(`must be a boolean, found ${describe(value)}`);
      tokens(param, value, undefined, emit, fail);
    },

    same: (a, b) => a.code === b.code && a.system === b.system,

    copyText: (row, system) => `${row.system === null ? '0' : system(row.system)}\t${copyText(row.code)}`,

    searchValue: (row) => (row.system === null ? row.code : `${row.system}|${row.code}`),
  },
};
