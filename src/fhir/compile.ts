import { ENTRY_OPEN, ENTRY_RESOURCE, entryParts, type EntryMode } from './bundle.ts';
import type { Condition, SearchRequest } from './search-request.ts';
import { ident, join, sql, type Statement } from './statement.ts';
import { typeOf } from './types/index.ts';
import { readWhole } from './types/string.ts';
import type { PlanHints } from './search-request.ts';

/**
 * SearchRequest + PlanHints → SQL statements. Pure: it runs nothing (src/store/executor.ts does).
 * One generic compiler for every parameter, type and version: a condition becomes a rid-set
 * subquery over the index table of its parameter's type (src/fhir/types), conditions are ANDed on
 * the resource, the values of one condition are ORed inside its subquery. Values are always bound
 * parameters; identifiers come only from the code's own fixed sets (tables, the aliases below).
 */

const ALIASES = ['r', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

type Positive = Extract<Condition, { kind: 'token' | 'string' | 'date' | 'reference' | 'chain' | 'has' }>;
const isPositive = (c: Condition): c is Positive =>
  ['string', 'date', 'reference', 'chain', 'has'].includes(c.kind) || (c.kind === 'token' && !c.not);

/** The rids of the `type` resources a positive condition selects (a rid may repeat). */
function ridSet(hints: PlanHints, c: Positive, type: string, depth: number): Statement {
  const next = ALIASES[depth + 1];
  if (!next) throw new Error('search nesting too deep');
  switch (c.kind) {
    case 'chain': {
      const n = ident(next);
      return sql`select x.rid from reference_idx x join resource ${n} on ${n}.type = x.target_type and ${n}.id = x.target_id
        where x.param = ${c.param.id} and x.target_type = ${c.targetType} and ${condition(hints, c.inner, c.targetType, next, depth + 1)}`;
    }
    case 'has': {
      // The referring resource is the reference row's own rid: no join with its resource row.
      const n = ident(next);
      return sql`select h.rid from resource h where h.type = ${type} and h.id in (
        select ${n}.target_id from reference_idx ${n}
        where ${n}.param = ${c.param.id} and ${n}.target_type = ${type} and ${condition(hints, c.inner, c.param.resourceType, next, depth + 1)})`;
    }
    default:
      return typeOf(c.param).rows(c, hints, type as never);
  }
}

/** The index rows of a condition's parameter for the resource `alias`.rid, its values matched. */
function rowsOfResource(hints: PlanHints, c: Extract<Condition, { param: unknown }>, alias: string, values: boolean): Statement {
  const { table } = typeOf(c.param);
  const t = ident(table.alias);
  const match = values ? typeOf(c.param).match(c, hints) : undefined;
  return sql`select 1 from ${ident(table.name)} ${t} where ${t}.rid = ${ident(alias)}.rid and ${t}.param = ${c.param.id}${match ? sql` and ${match}` : sql``}`;
}

/** A condition on the rid of the row aliased `alias` (one of ALIASES, or a sort walk's). */
export function condition(hints: PlanHints, c: Condition, type: string, alias: string, depth = 0): Statement {
  const a = ident(alias);
  if (isPositive(c)) return sql`${a}.rid in (${ridSet(hints, c, type, depth)})`;
  if (c.kind === 'none') return sql`false`;
  if (c.kind === 'missing') {
    if (c.param.column === 'id') return c.missing ? sql`false` : sql`true`;
    const sub = rowsOfResource(hints, c, alias, false);
    return c.missing ? sql`not exists (${sub})` : sql`exists (${sub})`;
  }
  // token:not — no matching value, including resources without any value.
  const not = c as Extract<Condition, { kind: 'token' }>;
  if (not.param.column === 'id') return sql`${a}.rid not in (${typeOf(not.param).rows({ ...not, not: false }, hints, type as never)})`;
  return sql`not exists (${rowsOfResource(hints, not, alias, true)})`;
}

/**
 * A condition checked for one candidate `alias`.rid: its index probed by (param, rid), never a set
 * built first (a sort walk checks each candidate it reads). `offset 0` keeps the probe a per-row
 * check: PostgreSQL would otherwise turn it into a join and may read the whole set.
 */
export function probe(hints: PlanHints, c: Condition, type: string, alias: string): Statement {
  const indexed = (c.kind === 'token' && !c.not) || c.kind === 'string' || c.kind === 'date';
  if (!indexed || c.param.column) return condition(hints, c, type, alias);
  return sql`exists (${rowsOfResource(hints, c, alias, true)} offset 0)`;
}

/**
 * The keys of the matches. A positive condition drives (its index yields candidate rids without
 * touching the resource table; identifiers and references first, booleans and dates last, the
 * planner may still reorder the semi-joins); the other conditions filter. With no positive
 * condition the resource table's (type, rid) index drives.
 */
const DRIVER_RANK: Record<Positive['kind'], number> = { token: 0, reference: 1, chain: 2, has: 3, string: 4, date: 5 };

function matchKeys(hints: PlanHints, req: SearchRequest, afterRid: string | undefined): Statement {
  const rank = (c: Positive) => DRIVER_RANK[c.kind] + (c.kind === 'token' && c.param.boolean ? 10 : 0);
  const driver = req.conditions.filter(isPositive).sort((a, b) => rank(a) - rank(b))[0];
  // A driver read whole is small (a rare prefix or needle) and PostgreSQL cannot see how small:
  // the other conditions are probed for each of its rows rather than joined as sets.
  const small = driver?.kind === 'string' && readWhole(driver, hints);
  const rest = req.conditions.filter((c) => c !== driver).map((c) => (small ? probe(hints, c, req.type, 'r') : condition(hints, c, req.type, 'r')));
  if (afterRid !== undefined) rest.push(sql`r.rid > ${afterRid}`);
  if (!driver) return sql`select r.rid from resource r where ${join([sql`r.type = ${req.type}`, ...rest], 'and')}`;
  // Parameter identities are per resource type: the driver's rids are all of the searched type.
  return sql`select distinct r.rid from (${ridSet(hints, driver, req.type, 0)}) r where ${join(rest, 'and')}`;
}

/** The set of matching keys (counts, estimates, the sort of few matches). */
export function matchSet(hints: PlanHints, req: SearchRequest): Statement {
  return matchKeys(hints, req, undefined);
}

/**
 * A page's rows (rid, type, id, content, ord, key) in key order, after `afterRid`: the keys of the
 * matches come from the indexes alone, then only the page's resources are read. `limit` is one
 * more than the page, to know whether there is a next one.
 */
export function pageQuery(hints: PlanHints, req: SearchRequest, afterRid: string | undefined, limit: number): Statement {
  return sql`
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
    from (${matchKeys(hints, req, afterRid)} order by 1 limit ${limit}) page
    join resource r on r.rid = page.rid
    order by r.rid`;
}

export function countQuery(hints: PlanHints, req: SearchRequest): Statement {
  return sql`select count(*) as count from (${matchKeys(hints, req, undefined)}) m`;
}

/**
 * The rows (rid, type, id, content, ord, key) of a page's _include and _revinclude resources, each
 * once, never one of the page's matches, in key order, `limit` at most. It takes the page's keys as
 * arrays: its plan is the same for any page.
 */
export function includeQuery(req: SearchRequest, page: { rids: string[]; ids: string[] }, limit: number): Statement | undefined {
  if (page.rids.length === 0) return undefined;
  const sources: Statement[] = [];
  if (req.include.length) {
    const cond = join(
      req.include.map((spec) => (spec.targetType ? sql`(x.param = ${spec.param.id} and x.target_type = ${spec.targetType})` : sql`x.param = ${spec.param.id}`)),
      'or',
    );
    sources.push(sql`select t.rid from reference_idx x join resource t on t.type = x.target_type and t.id = x.target_id
      where x.rid = any(${page.rids}::bigint[]) and (${cond})`);
  }
  if (req.revinclude.length) {
    const params = [...new Set(req.revinclude.map((s) => s.param.id))];
    sources.push(sql`select x.rid from reference_idx x
      where x.param = any(${params}::int[]) and x.target_type = ${req.type} and x.target_id = any(${page.ids}::text[])`);
  }
  if (sources.length === 0) return undefined;
  return sql`
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key from resource r
    where r.rid in (${join(sources, 'union')}) and r.rid <> all(${page.rids}::bigint[])
    order by r.rid limit ${limit}`;
}

export interface RenderOptions {
  /** base of the API version (…/fhir/v2): fullUrl = base/type/id. */
  base: string;
  mode: EntryMode;
  /** rows to render at most (the statement may return one more: a next page). */
  shown: number;
  /** return the keys and ids of the entries (for _include/_revinclude). */
  keys: boolean;
}

/**
 * The statement that has PostgreSQL write `rows` (rid, type, id, content, ord, key) as Bundle
 * entries (the format of src/fhir/bundle.ts), in one row: the entries, comma-separated, in `ord`
 * order, how many rows there were, the key of the last entry shown (where a next page starts), and
 * the entries' keys and ids when includes need them. A page of any size then reaches the server as
 * one value instead of four per resource.
 */
export function renderQuery(rows: Statement, o: RenderOptions): Statement {
  const shown = sql`p.n <= ${o.shown}`;
  const [prefix, suffix] = entryParts(o.base, o.mode);
  const entry = sql`${ENTRY_OPEN}::text || to_json(${prefix}::text || p.type || '/' || p.id)::text || ${ENTRY_RESOURCE}::text || p.content || ${suffix}::text`;
  return sql`
    select count(*) as rows, (array_agg(p.key order by p.n desc) filter (where ${shown}))[1] as last,
      ${o.keys ? sql`string_agg(p.rid::text, ',' order by p.n) filter (where ${shown})` : sql`null`} as rids,
      ${o.keys ? sql`string_agg(p.id, ',' order by p.n) filter (where ${shown})` : sql`null`} as ids,
      string_agg(${entry}, ',' order by p.n) filter (where ${shown}) as entries
    from (select q.rid, q.type, q.id, q.content, q.key, row_number() over (order by q.ord) as n from (${rows}) q) p`;
}

/**
 * True when no statement of the search has a plan that depends on its values: every condition is
 * an equality on a `selective` parameter (identifiers, ids, references: a handful of rows whatever
 * the value), possibly through a chain, or there is no condition (the type's rids in key order).
 * Those statements are planned once per connection (src/db.ts, the generic pool). Anything else —
 * codes, booleans, strings, dates, `:not`, `:missing`, `system|` — is planned for its values.
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
 * `_summary=count`, `_count=0`). They go through a lane of bounded width (src/store/lane.ts) so
 * that a crowd of them is served in turn, not all at once.
 */
export function heavySearch(req: SearchRequest): boolean {
  const contains = (c: Condition): boolean =>
    (c.kind === 'string' && c.mode === 'contains') || ((c.kind === 'chain' || c.kind === 'has') && contains(c.inner));
  return req.count > 100 || req.count === 0 || req.total === 'accurate' || req.summary === 'count' || req.conditions.some(contains);
}
