import { singleValued } from '../registry/index.ts';
import type { Condition, SearchRequest } from './search-request.ts';
import { ident, join, stmt, type Statement } from './statement.ts';
import { searchType, type CountedKeys } from './types/index.ts';
import { readWhole, setBeside } from './types/string.ts';
import type { PlanHints } from './search-request.ts';

/**
 * SearchRequest + PlanHints → SQL statements. Pure: it runs nothing (src/store/runner.ts does).
 * One generic compiler for every parameter, type and version: a condition becomes a rid-set
 * subquery over the index table of its parameter's type (src/fhir/types), conditions are ANDed on
 * the resource, the values of one condition are ORed inside its subquery. Values are always bound
 * parameters; identifiers come only from the code's own fixed sets (tables, the aliases below).
 */

const ALIASES = ['r', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

type Positive = Extract<Condition, { kind: 'token' | 'string' | 'date' | 'reference' | 'phonetic' | 'near' | 'pair' | 'chain' | 'has' }>;
const isPositive = (c: Condition): c is Positive =>
  ['string', 'date', 'reference', 'phonetic', 'near', 'pair', 'chain', 'has'].includes(c.kind) || (c.kind === 'token' && !c.not);

/** The rids of the `type` resources a positive condition selects (a rid may repeat). */
function ridSet(hints: PlanHints, c: Positive, type: string, depth: number): Statement {
  const next = ALIASES[depth + 1];
  if (!next) throw new Error('search nesting too deep');
  switch (c.kind) {
    case 'chain': {
      const n = ident(next);
      return stmt`select x.rid from reference_idx x join resource ${n} on ${n}.type = x.target_type and ${n}.id = x.target_id
        where x.param = ${c.param.id} and x.target_type = ${c.targetType} and ${condition(hints, c.inner, c.targetType, next, depth + 1)}`;
    }
    case 'has': {
      // The referring resource is the reference row's own rid: no join with its resource row.
      const n = ident(next);
      return stmt`select h.rid from resource h where h.type = ${type} and h.id in (
        select ${n}.target_id from reference_idx ${n}
        where ${n}.param = ${c.param.id} and ${n}.target_type = ${type} and ${condition(hints, c.inner, c.param.resourceType, next, depth + 1)})`;
    }
    default:
      return searchType(c.param).rows(c, hints, type as never);
  }
}

/** The index rows of a condition's parameter for the resource `alias`.rid, its values matched. */
function rowsOfResource(hints: PlanHints, c: Extract<Condition, { param: unknown }>, alias: string, values: boolean): Statement {
  const { table } = searchType(c.param);
  const t = ident(table.alias);
  const match = values ? searchType(c.param).match(c, hints) : undefined;
  return stmt`select 1 from ${ident(table.name)} ${t} where ${t}.rid = ${ident(alias)}.rid and ${t}.param = ${c.param.id}${match ? stmt` and ${match}` : stmt``}`;
}

/** A condition on the rid of the row aliased `alias` (one of ALIASES, or a sort walk's). */
export function condition(hints: PlanHints, c: Condition, type: string, alias: string, depth = 0): Statement {
  const a = ident(alias);
  if (isPositive(c)) return stmt`${a}.rid in (${ridSet(hints, c, type, depth)})`;
  if (c.kind === 'none') return stmt`false`;
  if (c.kind === 'missing') {
    if (c.param.column === 'id') return c.missing ? stmt`false` : stmt`true`;
    const sub = rowsOfResource(hints, c, alias, false);
    return c.missing ? stmt`not exists (${sub})` : stmt`exists (${sub})`;
  }
  // token:not — no matching value, including resources without any value.
  const not = c as unknown as Extract<Condition, { kind: 'token' }>;
  if (not.param.column === 'id') return stmt`${a}.rid not in (${searchType(not.param).rows({ ...not, not: false }, hints, type as never)})`;
  return stmt`not exists (${rowsOfResource(hints, not, alias, true)})`;
}

/**
 * A condition checked for one candidate `alias`.rid: its index probed by (param, rid), never a set
 * built first (a sort walk checks each candidate it reads). `offset 0` keeps the probe a per-row
 * check: PostgreSQL would otherwise turn it into a join and may read the whole set.
 */
export function probe(hints: PlanHints, c: Condition, type: string, alias: string): Statement {
  const indexed = (c.kind === 'token' && !c.not) || c.kind === 'string' || c.kind === 'date' || c.kind === 'pair';
  if (!indexed || c.param.column) return condition(hints, c, type, alias);
  return stmt`exists (${rowsOfResource(hints, c, alias, true)} offset 0)`;
}

/**
 * A condition checked for each candidate `alias`.rid against its set, built once: inside an
 * expression PostgreSQL keeps the set a SubPlan and hashes it when its estimate fits the hash memory
 * (never a join it could repeat for each row, as it does beside a range it estimates at one row).
 */
function hashedSet(hints: PlanHints, c: Condition, type: string, alias: string): Statement {
  return stmt`coalesce(${condition(hints, c, type, alias)}, false)`;
}

/**
 * The keys of the matches. A positive condition drives (its index yields candidate rids without
 * touching the resource table; a near circle first, read by a few index ranges and never wider than
 * its maximum distance, then identifiers and references, a pair's one range, booleans and dates last, the planner may
 * still reorder the semi-joins); the other conditions filter. With no positive condition the
 * resource table's (type, rid) index drives.
 */
const DRIVER_RANK: Record<Positive['kind'], number> = { near: -1, token: 0, reference: 1, pair: 2, phonetic: 2, chain: 3, has: 4, string: 5, date: 6 };

function matchKeys(hints: PlanHints, req: SearchRequest, afterRid: string | undefined, limit?: number): Statement {
  const rank = (c: Positive) => DRIVER_RANK[c.kind] + (c.kind === 'token' && c.param.boolean ? 10 : 0);
  const driver = req.conditions.filter(isPositive).sort((a, b) => rank(a) - rank(b))[0];
  // A driver read whole is small (a rare prefix or needle) and PostgreSQL cannot see how small:
  // the other conditions are probed for each of its rows rather than joined as sets, but a prefix
  // whose range is smaller than the probes would cost (setBeside) is read once, hashed.
  const small = driver?.kind === 'string' && readWhole(driver, hints) ? driver : undefined;
  const rest = req.conditions.filter((c) => c !== driver).map((c) => {
    if (!small) return condition(hints, c, req.type, 'r');
    return setBeside(c, small, hints) ? hashedSet(hints, c, req.type, 'r') : probe(hints, c, req.type, 'r');
  });
  if (afterRid !== undefined) rest.push(stmt`r.rid > ${afterRid}`);
  if (!driver) return stmt`select r.rid from resource r where ${join([stmt`r.type = ${req.type}`, ...rest], 'and')}`;
  // A page of a driver read lookup by lookup: at most `limit` rows of each.
  const bounded = limit !== undefined && driver.kind !== 'chain' && driver.kind !== 'has'
    ? searchType(driver.param).pageRows?.(driver as never, hints, join(rest, 'and'), limit) : undefined;
  if (bounded) return stmt`select distinct r.rid from (${bounded}) r`;
  // Parameter identities are per resource type: the driver's rids are all of the searched type.
  return stmt`select distinct r.rid from (${ridSet(hints, driver, req.type, 0)}) r where ${join(rest, 'and')}`;
}

/**
 * The order of a search's matches, one rule: `_sort` when given (src/fhir/sort.ts); else the measure
 * of its first measured condition, smallest first (near: nearest first), ties by key; else, with a
 * phonetic condition, its rank phases; else key order. A measured or ranked condition that does
 * not order only selects; so does one inside a chain or `_has`. Whatever the order, the match
 * entries carry the measure of the first measured condition on the type itself.
 */
export function measuredBy(req: SearchRequest): Positive | undefined {
  return req.conditions.find((c): c is Positive => isPositive(c) && c.kind !== 'chain' && c.kind !== 'has' && searchType(c.param).measure !== undefined);
}

/** Whether the search is read in its measure's order (`measuredBy`). */
export const measureOrdered = (req: SearchRequest): boolean => req.sort.length === 0 && measuredBy(req) !== undefined;

/** Page rows (rid, type, id, content, ord, key) of a measured search in another order, with their `extension` (measuredPageQuery's). */
export function withMeasure(req: SearchRequest, rows: Statement): Statement {
  const by = measuredBy(req)!;
  const measure = searchType(by.param).measure!;
  return stmt`select q.rid, q.type, q.id, q.content, q.ord, q.key, ${measure.extension(measure.of(by as never, stmt`q.rid`))} as extension from (${rows}) q order by q.ord`;
}

/** The match levels of a phonetic search without `_sort`, read in this order: the best matches first. */
export const RANK_PHASES = [0, 1, 2] as const;
export type RankPhase = (typeof RANK_PHASES)[number];

/**
 * Whether the search is read in rank phases (`measuredBy` says when): its exact spellings first,
 * then its sound-alikes, then its typos (the first phonetic condition ranks; each phase is read in
 * key order, so paging stays keyset).
 */
export const ranked = (req: SearchRequest): boolean =>
  req.sort.length === 0 && req.conditions.some((c) => c.kind === 'phonetic') && !measureOrdered(req);

/** The search restricted to one rank phase: its ranking condition matched at exactly that level. */
export function rankPhase(req: SearchRequest, phase: RankPhase): SearchRequest {
  const i = req.conditions.findIndex((c) => c.kind === 'phonetic');
  const c = req.conditions[i] as Extract<Condition, { kind: 'phonetic' }>;
  const conditions = [...req.conditions];
  conditions[i] = { ...c, levels: phase === 0 ? { upTo: 0 } : { upTo: phase, above: (phase - 1) as RankPhase } };
  return { ...req, conditions };
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
  return stmt`
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key
    from (${matchKeys(hints, req, afterRid, limit)} order by 1 limit ${limit}) page
    join resource r on r.rid = page.rid
    order by r.rid`;
}

/** Where a measured page starts: after the row of this measure (its float8 text) and rid. */
export interface MeasureCursor {
  measure: string;
  rid: string;
}

/**
 * A measured search's page rows (rid, type, id, content, ord, key, extension), smallest measure
 * first, ties by rid, after `cursor`: every match is measured (its least measure when it has
 * several rows), the other conditions filter its rids. `key` is the JSON array [measure, rid],
 * the measure as float8 text, which reads back as the same double; `extension` the entry's
 * `search.extension`. A measure that can narrow its condition (near: a smaller circle) is read
 * narrow first.
 */
export function measuredPageQuery(hints: PlanHints, req: SearchRequest, cursor: MeasureCursor | undefined, limit: number): Statement {
  const by = measuredBy(req)!;
  const measure = searchType(by.param).measure!;
  const rest = req.conditions.filter((c) => c !== by).map((c) => condition(hints, c, req.type, 'r'));
  const after = cursor === undefined ? stmt`true` : stmt`(k.m, k.rid) > (${cursor.measure}::text::float8, ${cursor.rid}::bigint)`;
  // The first `limit` (rid, m) after the cursor of the condition `c` in place of `by`.
  const first = (c: Positive) => {
    // A resource's measure is its least; a parameter of one element has one row per resource.
    const rows = stmt`select r.rid, r.m from (${measure.rows(c as never, hints, req.type)}) r where ${join(rest, 'and')}`;
    const measured = singleValued(by.param) ? rows : stmt`select r.rid, min(r.m) as m from (${rows}) r group by r.rid`;
    return stmt`select k.rid, k.m from (${measured}) k where ${after} order by k.m, k.rid limit ${limit}`;
  };
  const narrow = measure.narrowed?.(by as never, cursor === undefined ? undefined : Number(cursor.measure));
  // One statement: the narrow condition's page when it fills the page below its bound (a one-time
  // filter), else the whole condition's.
  const page = narrow === undefined
    ? first(by)
    : stmt`with n as materialized (${first(narrow.c as Positive)}),
             filled as (select count(*) = ${limit} and max(m) < ${narrow.bound}::float8 as yes from n)
        select n.rid, n.m from n where (select yes from filled)
        union all
        select w.rid, w.m from (${first(by)}) w where not (select yes from filled)`;
  return stmt`
    select r.rid, r.type, r.id, r.content::text as content, page.ord, page.key, page.extension
    from (select k.rid, row_number() over (order by k.m, k.rid) as ord, json_build_array(k.m::text, k.rid::text)::text as key, ${measure.extension(stmt`k.m`)} as extension
          from (${page}) k) page
    join resource r on r.rid = page.rid
    order by page.ord`;
}

/**
 * The total of a search read from the counts the write path keeps (value_count, sql/012): a search
 * without conditions (its type's resources), or one condition with one value of a counted kind
 * (src/fhir/types `counts`). undefined: it must be counted.
 */
export function countedQuery(hints: PlanHints, req: SearchRequest): Statement | undefined {
  const sum = (param: number, where: Statement) => stmt`select coalesce(sum(v.n), 0)::bigint as count from value_count v where v.param = ${param} and ${where}`;
  if (req.conditions.length === 0) return sum(0, stmt`v.key = ${`t:${req.type}`}`);
  const totals: CountedKeys[] = [];
  const params = new Set<number>();
  for (const c of req.conditions) {
    if (c.kind !== 'token' && c.kind !== 'string' && c.kind !== 'date') return undefined;
    const counts = searchType(c.param).counts;
    const keys = counts?.counted(c.param) ? counts.total(c, hints) : undefined;
    if (!keys) return undefined;
    totals.push(keys);
    params.add(c.param.id);
  }
  const [param] = params;
  if (totals.length === 1 && 'keys' in totals[0]) return sum(param, stmt`v.key = any(${totals[0].keys}::text[])`);
  // Ranges come from a parameter with one value per resource: several on it intersect.
  if (params.size > 1 || totals.some((t) => 'keys' in t)) return undefined;
  const ranges = totals as { from: string; to: string }[];
  const from = ranges.reduce((a, r) => (r.from > a ? r.from : a), ranges[0].from);
  const to = ranges.reduce((a, r) => (r.to < a ? r.to : a), ranges[0].to);
  return sum(param, stmt`v.key >= ${from} and v.key < ${to}`);
}

/** Every match counted: each :contains needle read whole (the key-order walk only pays for a page). */
export function countQuery(hints: PlanHints, req: SearchRequest): Statement {
  return stmt`select count(*) as count from (${matchKeys({ ...hints, commonNeedles: undefined }, req, undefined)}) m`;
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
      req.include.map((spec) => (spec.targetType ? stmt`(x.param = ${spec.param.id} and x.target_type = ${spec.targetType})` : stmt`x.param = ${spec.param.id}`)),
      'or',
    );
    sources.push(stmt`select t.rid from reference_idx x join resource t on t.type = x.target_type and t.id = x.target_id
      where x.rid = any(${page.rids}::bigint[]) and (${cond})`);
  }
  if (req.revinclude.length) {
    const params = [...new Set(req.revinclude.map((s) => s.param.id))];
    sources.push(stmt`select x.rid from reference_idx x
      where x.param = any(${params}::int[]) and x.target_type = ${req.type} and x.target_id = any(${page.ids}::text[])`);
  }
  if (sources.length === 0) return undefined;
  return stmt`
    select r.rid, r.type, r.id, r.content::text as content, r.rid as ord, r.rid::text as key from resource r
    where r.rid in (${join(sources, 'union')}) and r.rid <> all(${page.rids}::bigint[])
    order by r.rid limit ${limit}`;
}
