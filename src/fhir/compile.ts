import type { Sql } from '../db.ts';
import { normalize, prefixUpperBound } from './normalize.ts';
import type { Condition, DateValue, SearchRequest, TokenValue } from './search-request.ts';
import { ident, join, sql, type Statement } from './statement.ts';

/**
 * SearchRequest → SQL. One generic compiler for every parameter, type and version: a condition
 * becomes a rid-set subquery over the index table of its parameter type, conditions are ANDed on
 * the resource, the values of one condition are ORed inside its subquery. Values are always bound
 * parameters; identifiers come only from the fixed set of aliases below. Statements are composed
 * as text (src/fhir/statement.ts) and run as one prepared statement.
 */
export interface CompileContext {
  /** the pool the search's statements run on (src/db.ts: planned once, or for their values). */
  db: Sql;
  /** id of an interned token system, undefined when no stored token uses it. */
  systemId(uri: string): number | undefined;
  /** `param/needle` of :contains values the planner expects to be common (see ridSet). */
  commonNeedles?: ReadonlySet<string>;
  /** `param/norm` of prefix values whose range holds fewer rows than a key-order walk would read (see ridSet). */
  rarePrefixes?: ReadonlySet<string>;
  /** a sorted search with conditions: walk the first sort key's index (many matches) or sort the matches (few). */
  sortWalk?: boolean;
}

/**
 * Folded :contains needles with a run of 3 letters or digits (at least one trigram pg_trgm can look
 * up: it splits on anything else) are candidates for the trigram index.
 */
export const containsNeedle = (v: string): string | undefined => {
  const n = normalize(v);
  return /[a-z0-9]{3}/.test(n) ? n : undefined;
};

const ALIASES = ['r', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

function tokenValue(ctx: CompileContext, v: TokenValue): Statement {
  const sys = v.system === undefined ? undefined : v.system === null ? 0 : (ctx.systemId(v.system) ?? -1);
  if (v.code === undefined) return sql`t.sys = ${sys!}`;
  if (sys === undefined) return sql`t.code = ${v.code}`;
  return sql`(t.code = ${v.code} and t.sys = ${sys})`;
}

function tokenValues(ctx: CompileContext, values: TokenValue[]): Statement {
  const plain = values.filter((v) => v.system === undefined && v.code !== undefined).map((v) => v.code!);
  const rest = values.filter((v) => !(v.system === undefined && v.code !== undefined));
  const parts = rest.map((v) => tokenValue(ctx, v));
  if (plain.length === 1) parts.unshift(sql`t.code = ${plain[0]}`);
  else if (plain.length > 1) parts.unshift(sql`t.code = any(${plain}::text[])`);
  return parts.length === 1 ? parts[0] : sql`(${join(parts, 'or')})`;
}

export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function stringValues(ctx: CompileContext, mode: 'prefix' | 'exact' | 'contains', values: string[]): Statement | undefined {
  const parts: Statement[] = [];
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
  return parts.length === 1 ? parts[0] : sql`(${join(parts, 'or')})`;
}

/** The FHIR prefixes on [low, high) ranges, or on the point `low` of an instant (docs/fhir-search §3.2). */
function dateValue(v: DateValue, instant: boolean): Statement {
  const lo = new Date(v.low);
  const hi = new Date(v.high);
  if (instant) {
    switch (v.prefix) {
      case 'eq': case 'ap': return sql`(d.low >= ${lo} and d.low < ${hi})`;
      case 'ne': return sql`(d.low < ${lo} or d.low >= ${hi})`;
      case 'gt': case 'sa': return sql`d.low >= ${hi}`;
      case 'lt': case 'eb': return sql`d.low < ${lo}`;
      case 'ge': return sql`d.low >= ${lo}`;
      case 'le': return sql`d.low < ${hi}`;
    }
  }
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

type Positive = Extract<Condition, { kind: 'token' | 'string' | 'date' | 'reference' | 'chain' | 'has' }>;
const isPositive = (c: Condition): c is Positive =>
  ['string', 'date', 'reference', 'chain', 'has'].includes(c.kind) || (c.kind === 'token' && !c.not);

/** The rids of the `type` resources a positive condition selects (a rid may repeat). */
function ridSet(ctx: CompileContext, c: Positive, type: string, depth: number): Statement {
  const next = ALIASES[depth + 1];
  if (!next) throw new Error('search nesting too deep');
  switch (c.kind) {
    case 'token':
      if (c.param.column === 'id') return sql`select i.rid from resource i where i.type = ${type} and i.id = any(${c.values.map((v) => v.code!)}::text[])`;
      return sql`select t.rid from token_idx t where t.param = ${c.param.id} and ${tokenValues(ctx, c.values)}`;
    case 'string': {
      const match = stringValues(ctx, c.mode, c.values);
      if (!match) return sql`select s.rid from string_idx s where s.param = ${c.param.id}`;
      const set = sql`select s.rid from string_idx s where s.param = ${c.param.id} and ${match}`;
      // :contains — the key-order walk of the parameter is fast for a common needle and slow for a
      // rare one, the trigram index the other way round, and PostgreSQL's cost model for
      // '%needle%' favours the walk. Needles with a trigram (containsNeedle) that the statistics
      // do not find common (store/search.ts) take their whole set from the trigram index first
      // (OFFSET 0 keeps the subquery from being flattened into the ordered walk).
      const rare = (v: string) => {
        const n = containsNeedle(v);
        return n !== undefined && !ctx.commonNeedles?.has(`${c.param.id}/${n}`);
      };
      if (c.mode === 'contains' && c.values.every(rare)) return sql`select s.rid from (${set} offset 0) s`;
      // A prefix whose range is small (counted in store/search.ts): the whole range first, whatever
      // the planner estimates from statistics that mix every string parameter.
      if (c.mode === 'prefix' && c.values.every((v) => ctx.rarePrefixes?.has(`${c.param.id}/${normalize(v)}`))) {
        return sql`select s.rid from (${set} offset 0) s`;
      }
      return set;
    }
    case 'date':
      return sql`select d.rid from date_idx d where d.param = ${c.param.id} and (${join(c.values.map((v) => dateValue(v, c.param.instant === true)), 'or')})`;
    case 'reference': {
      const typed = c.values.filter((v) => v.type !== undefined);
      const untyped = c.values.filter((v) => v.type === undefined).map((v) => v.id);
      const parts: Statement[] = [];
      for (const t of new Set(typed.map((v) => v.type!))) {
        const ids = typed.filter((v) => v.type === t).map((v) => v.id);
        parts.push(ids.length === 1 ? sql`(x.target_type = ${t} and x.target_id = ${ids[0]})` : sql`(x.target_type = ${t} and x.target_id = any(${ids}::text[]))`);
      }
      if (untyped.length) parts.push(sql`x.target_id = any(${untyped}::text[])`);
      return sql`select x.rid from reference_idx x where x.param = ${c.param.id} and (${join(parts, 'or')})`;
    }
    case 'chain': {
      const n = ident(next);
      return sql`select x.rid from reference_idx x join resource ${n} on ${n}.type = x.target_type and ${n}.id = x.target_id
        where x.param = ${c.param.id} and x.target_type = ${c.targetType} and ${condition(ctx, c.inner, c.targetType, next, depth + 1)}`;
    }
    case 'has': {
      // The referring resource is the reference row's own rid: no join with its resource row.
      const n = ident(next);
      return sql`select h.rid from resource h where h.type = ${type} and h.id in (
        select ${n}.target_id from reference_idx ${n}
        where ${n}.param = ${c.param.id} and ${n}.target_type = ${type} and ${condition(ctx, c.inner, c.param.resourceType, next, depth + 1)})`;
    }
  }
}

/** A condition on the rid of the row aliased `alias` (one of ALIASES). */
export function condition(ctx: CompileContext, c: Condition, type: string, alias: string, depth = 0): Statement {
  const a = ident(alias);
  if (isPositive(c)) return sql`${a}.rid in (${ridSet(ctx, c, type, depth)})`;
  if (c.kind === 'none') return sql`false`;
  if (c.kind === 'missing') {
    if (c.param.column === 'id') return c.missing ? sql`false` : sql`true`;
    const { table, alias: ta } = TABLE[c.param.type];
    const sub = sql`select 1 from ${ident(table)} ${ident(ta)} where ${ident(ta)}.rid = ${a}.rid and ${ident(ta)}.param = ${c.param.id}`;
    return c.missing ? sql`not exists (${sub})` : sql`exists (${sub})`;
  }
  // token:not — no matching value, including resources without any value.
  const not = c as Extract<Condition, { kind: 'token' }>;
  if (not.param.column === 'id') {
    return sql`${a}.rid not in (select i.rid from resource i where i.type = ${type} and i.id = any(${not.values.map((v) => v.code!)}::text[]))`;
  }
  return sql`not exists (select 1 from token_idx t where t.rid = ${a}.rid and t.param = ${not.param.id} and ${tokenValues(ctx, not.values)})`;
}

/**
 * A condition checked for one candidate `alias`.rid: its index probed by (param, rid), never a set
 * built first (a sort walk checks each candidate it reads). `offset 0` keeps the probe a per-row
 * check: PostgreSQL would otherwise turn it into a join and may read the whole set.
 */
export function probe(ctx: CompileContext, c: Condition, type: string, alias: string): Statement {
  const a = ident(alias);
  switch (c.kind) {
    case 'token':
      if (c.not || c.param.column === 'id') return condition(ctx, c, type, alias);
      return sql`exists (select 1 from token_idx t where t.rid = ${a}.rid and t.param = ${c.param.id} and ${tokenValues(ctx, c.values)} offset 0)`;
    case 'string': {
      const match = stringValues(ctx, c.mode, c.values);
      return sql`exists (select 1 from string_idx s where s.rid = ${a}.rid and s.param = ${c.param.id}${match ? sql` and ${match}` : sql``} offset 0)`;
    }
    case 'date':
      return sql`exists (select 1 from date_idx d where d.rid = ${a}.rid and d.param = ${c.param.id} and (${join(c.values.map((v) => dateValue(v, c.param.instant === true)), 'or')}) offset 0)`;
    default:
      return condition(ctx, c, type, alias);
  }
}

/**
 * The keys of the matches. A positive condition drives (its index yields candidate rids without
 * touching the resource table; identifiers and references first, booleans and dates last, the
 * planner may still reorder the semi-joins); the other conditions filter. With no positive
 * condition the resource table's (type, rid) index drives.
 */
const DRIVER_RANK: Record<Positive['kind'], number> = { token: 0, reference: 1, chain: 2, has: 3, string: 4, date: 5 };

function matchKeys(ctx: CompileContext, req: SearchRequest, afterRid: string | undefined): Statement {
  const rank = (c: Positive) => DRIVER_RANK[c.kind] + (c.kind === 'token' && c.param.boolean ? 10 : 0);
  const driver = req.conditions.filter(isPositive).sort((a, b) => rank(a) - rank(b))[0];
  const rest = req.conditions.filter((c) => c !== driver).map((c) => condition(ctx, c, req.type, 'r'));
  if (afterRid !== undefined) rest.push(sql`r.rid > ${afterRid}`);
  if (!driver) return sql`select r.rid from resource r where ${join([sql`r.type = ${req.type}`, ...rest], 'and')}`;
  // Parameter identities are per resource type: the driver's rids are all of the searched type.
  return sql`select distinct r.rid from (${ridSet(ctx, driver, req.type, 0)}) r where ${join(rest, 'and')}`;
}

/**
 * One page: the keys of the matches after `afterRid` come from the indexes alone, then only the
 * page's resources are read. One more than the page is asked for, to know if there is a next page.
 */
export function pageQuery(ctx: CompileContext, req: SearchRequest, afterRid: string | undefined, limit: number): Statement {
  return sql`
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
    from (${matchKeys(ctx, req, afterRid)} order by 1 limit ${limit}) page
    join resource r on r.rid = page.rid
    order by r.rid`;
}

export function countQuery(ctx: CompileContext, req: SearchRequest): Statement {
  return sql`select count(*) as count from (${matchKeys(ctx, req, undefined)}) m`;
}

/**
 * True when no statement of the search has a plan that depends on its values: every condition is
 * an equality on a `selective` parameter (identifiers, ids, references: a handful of rows whatever
 * the value), possibly through a chain, or there is no condition (the type's rids in key order).
 * Those statements are planned once per connection (src/db.ts, the generic pool): planning was
 * two thirds of PostgreSQL's time for an identifier lookup (0.25 of 0.39 ms). Anything else — codes,
 * booleans, strings, dates, `:not`, `:missing`, `system|` — is planned for its values every time.
 */
export function valueIndependent(req: SearchRequest): boolean {
  const independent = (c: Condition): boolean => {
    switch (c.kind) {
      case 'token':
        return !c.not && c.param.selective === true && c.values.every((v) => v.code !== undefined);
      case 'reference':
        return c.param.selective === true;
      case 'chain':
        return c.param.selective === true && independent(c.inner);
      default:
        return false;
    }
  };
  return req.conditions.every(independent);
}

/**
 * Searches that may make PostgreSQL read thousands of rows: pages of more than 100 resources,
 * `:contains` (a trigram set or a walk of the parameter), exact counts (`_total=accurate`,
 * `_summary=count`, `_count=0`). They go through a lane of
 * bounded width (src/store/lane.ts) so that a crowd of them is served in turn, not all at once.
 */
export function heavySearch(req: SearchRequest): boolean {
  const contains = (c: Condition): boolean =>
    (c.kind === 'string' && c.mode === 'contains') || ((c.kind === 'chain' || c.kind === 'has') && contains(c.inner));
  return req.count > 100 || req.count === 0 || req.total === 'accurate' || req.summary === 'count' || req.conditions.some(contains);
}

/** The set of matching keys, for EXPLAIN-based estimates. */
export function matchSet(ctx: CompileContext, req: SearchRequest): Statement {
  return matchKeys(ctx, req, undefined);
}
