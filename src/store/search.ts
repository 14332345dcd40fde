import type { Sql } from '../db.ts';
import { containsNeedle, countQuery, heavySearch, likeEscape, matchSet, pageQuery, valueIndependent, type CompileContext } from '../fhir/compile.ts';
import type { CursorState } from '../fhir/cursor.ts';
import { hasPhase2, sortedPageQuery } from '../fhir/sort.ts';
import { normalize, prefixUpperBound } from '../fhir/normalize.ts';
import { join, run, sql, type Statement } from '../fhir/statement.ts';
import type { CursorCodec } from '../fhir/cursor.ts';
import { FhirError } from '../fhir/outcome.ts';
import type { Condition, IncludeSpec, SearchRequest } from '../fhir/search-request.ts';
import type { BoundParam } from '../registry/index.ts';
import type { Lane } from './lane.ts';
import { concatEntries, Entries, fetchEntries, fetchPage } from './render.ts';

/**
 * Executes a SearchRequest: the page, the total, the included resources. The Bundle's entries are
 * rendered by PostgreSQL (src/store/render.ts): a page arrives as one value, however many resources
 * it has.
 */
export interface SearchResult {
  matches: Entries;
  includes: Entries;
  total?: number;
  /** cursor of the next page, when there is one. */
  next?: string;
  warnings: string[];
}

export interface SearchDeps {
  sql: Sql;
  /** the pool of statements planned once (src/db.ts): value-independent searches and includes. */
  generic: Sql;
  /** the pool of heavy searches (src/db.ts Database.heavy). */
  heavySql: Sql;
  /** the pool of the counts behind first pages' totals, their statement timeout the budget (Database.count). */
  countSql: Sql;
  systems: SystemLookup;
  cursors: CursorCodec;
  includeCap: number;
  totalBudgetMs: number;
  /** the most a search may take once it runs (0: no limit); see withDeadline. */
  deadlineMs?: number;
  /** the lane of heavy searches (compile.ts `heavySearch`). */
  heavy: Lane;
}

/** Token system URIs → interned ids, cached (only hits: a system may appear with the next load). */
export class SystemLookup {
  private cache = new Map<string, number>();

  /**
   * `lookups`: the pool of statements planned once (the bounded counts of prefix values run there);
   * the search's own pool when not given.
   */
  async prepare(db: Sql, req: SearchRequest, lookups: Sql = db): Promise<CompileContext> {
    const uris = new Set<string>();
    const walk = (c: Condition): void => {
      if (c.kind === 'token') for (const v of c.values) if (typeof v.system === 'string') uris.add(v.system);
      if (c.kind === 'chain' || c.kind === 'has') walk(c.inner);
    };
    const needles: { param: number; needle: string }[] = [];
    const prefixes: { param: number; norm: string }[] = [];
    const walkAll = (c: Condition): void => {
      walk(c);
      if (c.kind === 'string' && c.mode === 'contains') {
        for (const v of c.values) {
          const needle = containsNeedle(v);
          if (needle) needles.push({ param: c.param.id, needle });
        }
      }
      if (c.kind === 'string' && c.mode === 'prefix') {
        for (const v of c.values) {
          const norm = normalize(v);
          if (norm !== '' && prefixUpperBound(norm) !== undefined) prefixes.push({ param: c.param.id, norm });
        }
      }
      if (c.kind === 'chain' || c.kind === 'has') walkAll(c.inner);
    };
    req.conditions.forEach(walkAll);
    const missing = [...uris].filter((u) => !this.cache.has(u));
    if (missing.length) {
      for (const r of await run<{ id: number; uri: string }[]>(db, sql`select id, uri from token_system where uri = any(${missing}::text[])`)) {
        this.cache.set(r.uri, r.id);
      }
    }
    const commonNeedles = new Set<string>();
    for (const { param, needle } of needles) if (await this.isCommon(db, param, needle, req.count + 1)) commonNeedles.add(`${param}/${needle}`);
    const rarePrefixes = new Set<string>();
    for (const { param, norm } of prefixes) if (await this.isRarePrefix(db, lookups, param, norm, req.count + 1)) rarePrefixes.add(`${param}/${norm}`);
    const ctx: CompileContext = { db, systemId: (uri) => this.cache.get(uri), commonNeedles, rarePrefixes };
    if (req.sort.length && req.conditions.length && req.count > 0) ctx.sortWalk = await this.walksSortKey(ctx, lookups, req);
    return ctx;
  }

  /**
   * A sorted search with conditions walks its first key's index, probing the conditions for each
   * resource read, unless its matches are fewer than the crossover: reading and sorting them then
   * costs less than walking past the resources that do not match (src/fhir/sort.ts). The matches
   * are counted, up to the crossover.
   */
  private async walksSortKey(ctx: CompileContext, lookups: Sql, req: SearchRequest): Promise<boolean> {
    const first = req.sort[0].param;
    const crossover = Math.ceil(Math.sqrt(((req.count + 1) * (await this.keyRows(ctx.db, first, req.type))) / SORT_ROW_COST));
    const criteria = req.criteria.map(([k, v]) => `${k}=${v}`).sort().join('&');
    return this.decided(`sort/${req.type}/${first.id}/${criteria}/${crossover}`, async () => {
      const [{ n }] = await run<{ n: string }[]>(lookups, sql`select count(*) as n from (${matchSet(ctx, req)} limit ${crossover}) x`);
      return Number(n) >= crossover;
    });
  }

  /** Estimated index rows of a sort key (for `_id`, the resources of the type), refreshed every minute. */
  private async keyRows(db: Sql, param: BoundParam, type: string): Promise<number> {
    if (param.column === 'id') return this.estimate(db, `type/${type}`, sql`select 1 from resource r where r.type = ${type}`);
    if (param.type === 'date') return this.estimate(db, `date/${param.id}`, sql`select 1 from date_idx d where d.param = ${param.id}`);
    return this.rowsOf(db, param.id);
  }

  /**
   * Path decisions made lately (rare prefix, common needle), for a minute: the answer only steers
   * the plan, so a stale one costs time, never results. Keyed with the crossover, which moves with
   * the page size and the parameter's rows.
   */
  private decisions = new Map<string, { yes: boolean; at: number }>();

  private async decided(key: string, decide: () => Promise<boolean>): Promise<boolean> {
    const hit = this.decisions.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.yes;
    const yes = await decide();
    if (this.decisions.size >= 10_000) this.decisions.clear();
    this.decisions.set(key, { yes, at: Date.now() });
    return yes;
  }

  /**
   * Where a string value's two paths cost the same: the key-order walk of the parameter reads about
   * n × P / m entries to fill a page of n over its P rows when m of them match, the value's own set
   * m rows, each `rowCost` times dearer than a walked entry, so the crossover is m = √(n × P / rowCost).
   */
  private async crossover(db: Sql, param: number, pageRows: number, rowCost: number): Promise<number> {
    return Math.ceil(Math.sqrt((pageRows * (await this.rowsOf(db, param))) / rowCost));
  }

  /**
   * A prefix is rare when its range of the parameter's index holds fewer rows than the crossover
   * (RANGE_ROW_COST: the range's rows are de-duplicated and sorted as well): reading the whole range
   * and keeping the page's first keys then costs less than walking the parameter in key order until
   * the page is full. The rows are counted, up to the crossover, rather than estimated: the
   * statistics of `norm` mix every string parameter, so a prefix common in addresses ("pha…":
   * pharmacies) looked common in names too, and a name prefix of 2,890 rows walked 160 k (14.5 ms
   * against 2 ms at national scale).
   */
  private async isRarePrefix(db: Sql, lookups: Sql, param: number, norm: string, pageRows: number): Promise<boolean> {
    const crossover = await this.crossover(db, param, pageRows, RANGE_ROW_COST);
    return this.decided(`prefix/${param}/${norm}/${crossover}`, async () => {
      const [{ n }] = await run<{ n: string }[]>(lookups, sql`
        select count(*) as n from (select 1 from string_idx s where s.param = ${param} and s.norm >= ${norm} and s.norm < ${prefixUpperBound(norm)!} limit ${crossover}) x`);
      return Number(n) < crossover;
    });
  }

  /** Planner estimates of rows (a string parameter, a sort key), refreshed every minute. */
  private paramRows = new Map<string, { n: number; at: number }>();

  private rowsOf(db: Sql, param: number): Promise<number> {
    return this.estimate(db, `string/${param}`, sql`select 1 from string_idx s where s.param = ${param}`);
  }

  private async estimate(db: Sql, key: string, rows: Statement): Promise<number> {
    const hit = this.paramRows.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.n;
    const n = await planRows(db, rows);
    this.paramRows.set(key, { n, at: Date.now() });
    return n;
  }

  /**
   * A :contains needle is common when the planner's estimate m of its rows (the bare condition) is
   * above the crossover (CONTAINS_ROW_COST: a row of the trigram set against a walked entry), about
   * 4.8 k rows for a page of 50 over the 7.3 M name rows of 1.8 M practitioners: the key-order walk
   * then fills the page sooner than the trigram path reads the needle's rows.
   */
  private async isCommon(db: Sql, param: number, needle: string, pageRows: number): Promise<boolean> {
    const crossover = await this.crossover(db, param, pageRows, CONTAINS_ROW_COST);
    return this.decided(`needle/${param}/${needle}/${crossover}`, async () => {
      const pattern = `%${likeEscape(needle)}%`;
      return (await planRows(db, sql`select 1 from string_idx s where s.param = ${param} and s.norm like ${pattern}`)) > crossover;
    });
  }
}

/**
 * Cost of a row read from a prefix's range (index entry, de-duplication, sort) against an entry of
 * the key-order walk, measured at national scale: a range of 2,890 rows took 2 ms and a walk of
 * 160 k entries 14.5 ms (0.69 against 0.09 µs). With the bare √(n × P) (19.3 k rows for a page of
 * 50 over the 7.3 M name rows), prefixes of 6.8–19.3 k rows read their range: over 43 such sampled
 * name prefixes the range was faster 9 times, and 17 % slower in all than the planner's path.
 */
const RANGE_ROW_COST = 8;

/**
 * Cost of a row of a :contains needle's trigram set (posting lists, bitmap, heap recheck,
 * de-duplication) against an entry of the key-order walk, measured at national scale on 150
 * needles of 3–5 letters from inside sampled family names, each run both ways: 1–10 µs per row
 * of the set against 0.2–0.5 µs per walked entry. With the bare √(n × P) (19.3 k rows) the needles
 * of 2–19 k rows took the trigram index and were slower nearly every time: 2.9 s for the 150
 * (p99 69 ms) against 1.45 s (p99 44 ms) with 16.
 */
const CONTAINS_ROW_COST = 16;

/**
 * Cost of a match read and sorted against a resource read by a sort key's walk (an index entry, the
 * check that it is the resource's key, the probes of the conditions).
 */
const SORT_ROW_COST = 0.5;

async function planRows(db: Sql, query: Statement): Promise<number> {
  const [row] = await run<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>(db, sql`explain (format json) ${query}`);
  return row['QUERY PLAN'][0].Plan['Plan Rows'];
}

const isTimeout = (err: unknown) => (err as { code?: string })?.code === '57014';

/** The number of matches, however long counting takes. */
export async function countAll(db: Sql, ctx: CompileContext, req: SearchRequest): Promise<number> {
  return Number((await run<{ count: string }[]>(db, countQuery(ctx, req)))[0].count);
}

/**
 * The number of matches, or undefined when it is not known within `budgetMs` of asking, waiting
 * for a connection included (`db`: the count pool, whose statement timeout is the same budget).
 */
export async function countWithin(db: Sql, ctx: CompileContext, req: SearchRequest, budgetMs: number): Promise<number | undefined> {
  if (budgetMs <= 0) return undefined;
  const query = run<{ count: string }[]>(db, countQuery(ctx, req));
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      // Still in the pool's queue (no connection yet, postgres.js's `state`): taken out, it never
      // starts. Handed to a connection, it is left to the pool's statement timeout: cancelling a
      // query pipelined behind another makes postgres.js skip it while its answer still arrives,
      // and the connection's next queries read the wrong rows.
      if (!(query as unknown as { state?: unknown }).state) Promise.resolve(query.cancel() as unknown).catch(() => {});
      resolve(undefined);
    }, budgetMs);
  });
  try {
    const rows = await Promise.race([query, expired]);
    return rows === undefined ? undefined : Number(rows[0].count);
  } catch (err) {
    if (isTimeout(err)) return undefined;
    throw err;
  } finally {
    clearTimeout(timer);
    query.catch(() => {});
  }
}

async function estimate(ctx: CompileContext, req: SearchRequest): Promise<number> {
  return Math.round(await planRows(ctx.db, matchSet(ctx, req)));
}

/**
 * The statement of a page's _include and _revinclude resources (rid, type, id, content::text), each
 * once, never one of the page's matches, in key order, `limit` at most. It takes the page's keys as
 * arrays: its plan is the same for any page, so it belongs on the pool of statements planned once.
 */
export function includeStatement(req: SearchRequest, page: { rids: string[]; ids: string[] }, limit: number): Statement | undefined {
  if (page.rids.length === 0) return undefined;
  const sources: Statement[] = [];
  if (req.include.length) {
    const cond = join(
      req.include.map((spec: IncludeSpec) => (spec.targetType ? sql`(x.param = ${spec.param.id} and x.target_type = ${spec.targetType})` : sql`x.param = ${spec.param.id}`)),
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

/** The page's _include and _revinclude entries, at most `cap` (capped: there were more). */
export async function fetchIncludes(db: Sql, base: string, req: SearchRequest, page: { rids: string[]; ids: string[] }, cap: number): Promise<{ entries: Entries; capped: boolean }> {
  const statement = includeStatement(req, page, cap + 1);
  if (!statement) return { entries: Entries.none, capped: false };
  const entries = await fetchEntries(db, statement, { base, mode: 'include', shown: cap, keys: false });
  return { entries, capped: entries.rows > cap };
}

/**
 * The pool a search's statements run on: a heavy search's (src/fhir/compile.ts heavySearch) on a
 * pool of their own, so that they never wait in line in front of light ones on the connections
 * those pipeline on; light ones planned once when their plan cannot depend on the values, unless
 * sorted (a sorted page reads more: lookups are not kept waiting behind it).
 */
export const searchSql = (deps: Pick<SearchDeps, 'sql' | 'generic' | 'heavySql'>, req: SearchRequest): Sql =>
  heavySearch(req) ? deps.heavySql : valueIndependent(req) && req.sort.length === 0 ? deps.generic : deps.sql;

/**
 * Runs a search. `base` is the absolute base of the API version (…/fhir/v2): fullUrls are rendered
 * with it.
 */
export function executeSearch(deps: SearchDeps, req: SearchRequest, base: string): Promise<SearchResult> {
  const search = () => withDeadline(runSearch(deps, req, base), deps.deadlineMs);
  return heavySearch(req) ? deps.heavy.run(search) : search();
}

/**
 * A search's statements each end within the statement timeout, and a silent connection is closed
 * (src/db-socket.ts); this is the net below both: past `ms`, the answer is a 503 whatever the driver
 * still waits for (a query issued while its connection was failing can be left unanswered).
 */
export function withDeadline<T>(work: Promise<T>, ms: number | undefined): Promise<T> {
  if (!ms) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FhirError(503, 'transient', 'the database did not answer in time; try again', { 'retry-after': '1' })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A search's statements, in order, without the lane (the benchmark's SQL floor runs exactly this). */
export async function runSearch(deps: SearchDeps, req: SearchRequest, base: string): Promise<SearchResult> {
  const ctx = await deps.systems.prepare(searchSql(deps, req), req, deps.generic);
  const warnings = [...req.warnings];
  const state = req.cursor ? deps.cursors.decode(req, req.cursor) : undefined;
  if (req.count === 0 || req.summary === 'count') {
    return { matches: Entries.none, includes: Entries.none, total: await countAll(ctx.db, ctx, req), warnings };
  }
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  // A first page's count runs beside the page, within its budget, on a pool of its own; a lookup
  // (value-independent conditions: a handful of matches) is never counted, its page holds them all.
  const lookup = req.conditions.length > 0 && valueIndependent(req);
  const counting = !state && req.total === undefined && !lookup ? countWithin(deps.countSql, ctx, req, deps.totalBudgetMs) : undefined;
  counting?.catch(() => {});
  let page: Entries;
  try {
    page = await fetchMatches(ctx, req, state, base, keys);
  } catch (err) {
    if (isTimeout(err)) throw new FhirError(503, 'timeout', 'the search took too long and was cancelled; narrow it down with more selective parameters');
    throw err;
  }
  const hasNext = page.rows > req.count;
  let total: number | undefined = state?.total;
  if (total === undefined && req.total !== 'none') {
    if (!state && !hasNext) total = page.count;
    else if (req.total === 'accurate') total = await countAll(ctx.db, ctx, req);
    else if (req.total === 'estimate') total = await estimate(ctx, req);
    else if (!state) total = await (counting ?? countWithin(deps.countSql, ctx, req, deps.totalBudgetMs));
  }
  let includes = Entries.none;
  if (keys) {
    const inc = await fetchIncludes(heavySearch(req) ? deps.heavySql : deps.generic, base, req, page, deps.includeCap);
    if (inc.capped) warnings.push(`more than ${deps.includeCap} resources to include on this page: only the first ${deps.includeCap} are given`);
    includes = inc.entries;
  }
  const next = hasNext ? deps.cursors.encode(req, { ...cursorAfter(req, page.last!), total: req.total === 'estimate' ? undefined : total }) : undefined;
  return { matches: page, includes, total, next, warnings };
}

/**
 * The page of matches after the cursor. A sorted page is read from its phase (src/fhir/sort.ts):
 * phase 1 first, then, when phase 1 ends within the page, the start of phase 2.
 */
async function fetchMatches(ctx: CompileContext, req: SearchRequest, state: CursorState | undefined, base: string, keys: boolean): Promise<Entries> {
  if (req.sort.length === 0) return fetchPage(ctx.db, req, pageQuery(ctx, req, state?.after, req.count + 1), base, keys);
  const cursor = state?.sort ? { ...state.sort, rid: state.after } : undefined;
  let page = Entries.none;
  if (cursor?.phase !== 2) {
    page = await fetchPage(ctx.db, req, sortedPageQuery(ctx, req, 1, cursor, req.count + 1), base, keys);
    if (page.rows > req.count || !hasPhase2(req)) return page;
  }
  const rest = sortedPageQuery(ctx, req, 2, cursor?.phase === 2 ? cursor : undefined, req.count + 1 - page.rows);
  return concatEntries(page, await fetchPage(ctx.db, req, rest, base, keys, req.count - page.count));
}

/** The cursor state of the row whose `key` column is `last`: a rid, or a sorted row's JSON key. */
function cursorAfter(req: SearchRequest, last: string): Pick<CursorState, 'after' | 'sort'> {
  if (req.sort.length === 0) return { after: last };
  const [phase, ...rest] = JSON.parse(last) as [1 | 2, ...string[]];
  return { after: rest.at(-1)!, sort: { phase, keys: rest.slice(0, -1) } };
}
