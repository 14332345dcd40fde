import type postgres from 'postgres';
import type { Sql } from '../db.ts';
import { normalize, prefixUpperBound } from './normalize.ts';
import type { Condition, DateValue, SearchRequest, TokenValue } from './search-request.ts';

/**
 * SearchRequest → SQL. One generic compiler for every parameter, type and version: a condition
 * becomes a rid-set subquery over the index table of its parameter type, conditions are ANDed on
 * the resource, the values of one condition are ORed inside its subquery. Values are always bound
 * parameters; identifiers come only from the fixed set of aliases below.
 */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

export interface CompileContext {
  sql: Sql;
  /** id of an interned token system, undefined when no stored token uses it. */
  systemId(uri: string): number | undefined;
}

const ALIASES = ['r', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

function join(sql: Sql, parts: Fragment[], op: 'and' | 'or'): Fragment {
  if (parts.length === 0) return op === 'and' ? sql`true` : sql`false`;
  return parts.slice(1).reduce((acc, p) => (op === 'and' ? sql`${acc} and ${p}` : sql`${acc} or ${p}`), parts[0]);
}

function tokenValue(ctx: CompileContext, v: TokenValue): Fragment {
  const { sql } = ctx;
  const sys = v.system === undefined ? undefined : v.system === null ? 0 : (ctx.systemId(v.system) ?? -1);
  if (v.code === undefined) return sql`t.sys = ${sys!}`;
  if (sys === undefined) return sql`t.code = ${v.code}`;
  return sql`(t.code = ${v.code} and t.sys = ${sys})`;
}

function tokenValues(ctx: CompileContext, values: TokenValue[]): Fragment {
  const { sql } = ctx;
  const plain = values.filter((v) => v.system === undefined && v.code !== undefined).map((v) => v.code!);
  const rest = values.filter((v) => !(v.system === undefined && v.code !== undefined));
  const parts = rest.map((v) => tokenValue(ctx, v));
  if (plain.length === 1) parts.unshift(sql`t.code = ${plain[0]}`);
  else if (plain.length > 1) parts.unshift(sql`t.code = any(${plain}::text[])`);
  return parts.length === 1 ? parts[0] : sql`(${join(sql, parts, 'or')})`;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function stringValues(ctx: CompileContext, mode: 'prefix' | 'exact' | 'contains', values: string[]): Fragment | undefined {
  const { sql } = ctx;
  const parts: Fragment[] = [];
  for (const v of values) {
    const n = normalize(v);
    if (mode === 'exact') parts.push(sql`(s.norm = ${n} and s.exact = ${v})`);
    else if (n === '') return undefined; // matches any value
    else if (mode === 'contains') parts.push(sql`s.norm like ${`%${likeEscape(n)}%`}`);
    else {
      const hi = prefixUpperBound(n);
      parts.push(hi === undefined ? sql`s.norm >= ${n}` : sql`(s.norm >= ${n} and s.norm < ${hi})`);
    }
  }
  return parts.length === 1 ? parts[0] : sql`(${join(sql, parts, 'or')})`;
}

/** The FHIR prefixes on [low, high) ranges (docs/fhir-search §3.2). */
function dateValue(ctx: CompileContext, v: DateValue): Fragment {
  const { sql } = ctx;
  const lo = new Date(v.low);
  const hi = new Date(v.high);
  switch (v.prefix) {
    case 'eq': return sql`(d.low >= ${lo} and d.high <= ${hi})`;
    case 'ne': return sql`(d.low < ${lo} or d.high > ${hi})`;
    case 'gt': return sql`d.high > ${hi}`;
    case 'lt': return sql`d.low < ${lo}`;
    case 'ge': return sql`(d.low >= ${lo} or d.high > ${hi})`;
    case 'le': return sql`(d.high <= ${hi} or d.low < ${lo})`;
    case 'sa': return sql`d.low >= ${hi}`;
    case 'eb': return sql`d.high <= ${lo}`;
    case 'ap': return sql`(d.low < ${hi} and d.high > ${lo})`;
  }
}

const TABLE: Record<string, { table: string; alias: string }> = {
  token: { table: 'token_idx', alias: 't' },
  string: { table: 'string_idx', alias: 's' },
  date: { table: 'date_idx', alias: 'd' },
  reference: { table: 'reference_idx', alias: 'x' },
};

/** A condition on the resource row aliased `alias` (one of ALIASES). */
export function condition(ctx: CompileContext, c: Condition, type: string, alias: string, depth = 0): Fragment {
  const { sql } = ctx;
  const a = sql(alias);
  const next = ALIASES[depth + 1];
  if (!next) throw new Error('search nesting too deep');
  switch (c.kind) {
    case 'none':
      return sql`false`;
    case 'token': {
      if (c.param.column === 'id') {
        const ids = c.values.map((v) => v.code!);
        return c.not ? sql`${a}.id <> all(${ids}::text[])` : sql`${a}.id = any(${ids}::text[])`;
      }
      const match = tokenValues(ctx, c.values);
      return c.not
        ? sql`not exists (select 1 from token_idx t where t.rid = ${a}.rid and t.param = ${c.param.id} and ${match})`
        : sql`${a}.rid in (select t.rid from token_idx t where t.param = ${c.param.id} and ${match})`;
    }
    case 'string': {
      const match = stringValues(ctx, c.mode, c.values);
      return match
        ? sql`${a}.rid in (select s.rid from string_idx s where s.param = ${c.param.id} and ${match})`
        : sql`${a}.rid in (select s.rid from string_idx s where s.param = ${c.param.id})`;
    }
    case 'date':
      return sql`${a}.rid in (select d.rid from date_idx d where d.param = ${c.param.id} and ${join(sql, c.values.map((v) => dateValue(ctx, v)), 'or')})`;
    case 'reference': {
      const typed = c.values.filter((v) => v.type !== undefined);
      const untyped = c.values.filter((v) => v.type === undefined).map((v) => v.id);
      const parts: Fragment[] = [];
      for (const t of new Set(typed.map((v) => v.type!))) {
        const ids = typed.filter((v) => v.type === t).map((v) => v.id);
        parts.push(ids.length === 1 ? sql`(x.target_type = ${t} and x.target_id = ${ids[0]})` : sql`(x.target_type = ${t} and x.target_id = any(${ids}::text[]))`);
      }
      if (untyped.length) parts.push(sql`x.target_id = any(${untyped}::text[])`);
      return sql`${a}.rid in (select x.rid from reference_idx x where x.param = ${c.param.id} and (${join(sql, parts, 'or')}))`;
    }
    case 'missing': {
      if (c.param.column === 'id') return c.missing ? sql`false` : sql`true`;
      const { table, alias: ta } = TABLE[c.param.type];
      const sub = sql`select 1 from ${sql(table)} ${sql(ta)} where ${sql(ta)}.rid = ${a}.rid and ${sql(ta)}.param = ${c.param.id}`;
      return c.missing ? sql`not exists (${sub})` : sql`exists (${sub})`;
    }
    case 'chain': {
      const n = sql(next);
      return sql`${a}.rid in (
        select x.rid from reference_idx x join resource ${n} on ${n}.type = x.target_type and ${n}.id = x.target_id
        where x.param = ${c.param.id} and x.target_type = ${c.targetType} and ${condition(ctx, c.inner, c.targetType, next, depth + 1)})`;
    }
    case 'has': {
      const n = sql(next);
      return sql`${a}.id in (
        select x.target_id from reference_idx x join resource ${n} on ${n}.rid = x.rid
        where x.param = ${c.param.id} and x.target_type = ${type} and ${condition(ctx, c.inner, c.param.resourceType, next, depth + 1)})`;
    }
  }
}

export function where(ctx: CompileContext, req: SearchRequest): Fragment {
  const { sql } = ctx;
  return join(sql, [sql`r.type = ${req.type}`, ...req.conditions.map((c) => condition(ctx, c, req.type, 'r'))], 'and');
}

/** One page: matches after `afterRid` in key order, one more than the page to know if there is a next. */
export function pageQuery(ctx: CompileContext, req: SearchRequest, afterRid: string | undefined, limit: number) {
  const { sql } = ctx;
  const after = afterRid === undefined ? sql`` : sql`and r.rid > ${afterRid}`;
  return sql<{ rid: string; id: string; content: string }[]>`
    select r.rid, r.id, r.content::text as content from resource r
    where ${where(ctx, req)} ${after}
    order by r.rid limit ${limit}`;
}

export function countQuery(ctx: CompileContext, req: SearchRequest) {
  return ctx.sql<{ count: string }[]>`select count(*) as count from resource r where ${where(ctx, req)}`;
}
