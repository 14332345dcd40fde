import type { Pools, Sql } from '../db.ts';
import { countQuery, heavySearch, includeQuery, pageQuery, valueIndependent } from '../fhir/compile.ts';
import { CursorCodec, type CursorState } from '../fhir/cursor.ts';
import { FhirError } from '../fhir/outcome.ts';
import type { PlanHints, SearchRequest } from '../fhir/search-request.ts';
import { hasPhase2, sortedPageQuery } from '../fhir/sort.ts';
import { sql } from '../fhir/statement.ts';
import { concatEntries, Entries, fetchEntries, fetchPage } from './entries.ts';
import { Lane } from './lane.ts';
import { Planner } from './planner.ts';
import { formatLsn, parseLsn, type ReplicaSet } from './replicas.ts';
import { readResource } from './read.ts';
import { run } from './run.ts';

/**
 * The executor: it owns the pools (src/db.ts), the lane of heavy searches and the running of a
 * search's statements — plan (src/store/planner.ts), compile (src/fhir/compile.ts, sort.ts), then
 * the page, the count behind `total` and the included resources — and gives the Bundle's parts to
 * src/fhir/bundle.ts.
 */
export interface SearchResult {
  matches: Entries;
  includes: Entries;
  total?: number;
  /** cursor of the next page, when there is one. */
  next?: string;
  warnings: string[];
}

export interface ExecutorOptions {
  /** the primary's pools (DATABASE_URL). */
  pools: Pools;
  /** hot standbys (DATABASE_READ_URL): searches and reads run on them, the primary as a fallback. */
  replicas?: ReplicaSet;
  /** HMAC key of paging cursors; the same on every instance (random when unset). */
  cursorSecret?: string;
  /** included resources per page at most. */
  includeCap: number;
  /** time a first page's count may take (TOTAL_BUDGET_MS). */
  totalBudgetMs: number;
  /** the most a search may take once it runs (0: no limit); see withDeadline. */
  deadlineMs?: number;
  /** heavy searches run at once (the lane's width). */
  heavyWidth: number;
}

/** Rows the fastest count (an index-only range) reads in a millisecond, at best. */
const COUNTED_ROWS_PER_MS = 20_000;

const isTimeout = (err: unknown) => (err as { code?: string })?.code === '57014';

export class Executor {
  readonly pools: Pools;
  readonly replicas?: ReplicaSet;
  readonly planner = new Planner();
  readonly cursors: CursorCodec;
  /** heavy searches (src/fhir/compile.ts heavySearch). */
  readonly lane: Lane;
  /** the other searches but lookups. */
  readonly pageLane: Lane;

  constructor(private readonly o: ExecutorOptions) {
    this.pools = o.pools;
    this.replicas = o.replicas;
    this.cursors = new CursorCodec(o.cursorSecret);
    this.lane = new Lane(o.heavyWidth);
    this.pageLane = new Lane(o.heavyWidth);
  }

  /**
   * Runs a search. `base` is the absolute base of the API version (…/fhir/v2): fullUrls are
   * rendered with it. Every search but a lookup waits for a lane as wide as the machine has cores
   * (heavy ones for a lane of their own): PostgreSQL then runs as many of them at once as it has
   * cores to run them on, and a lookup, which needs a fraction of a millisecond, finds a core
   * instead of queueing behind a crowd of backends.
   */
  search(req: SearchRequest, base: string): Promise<SearchResult> {
    const search = () => withDeadline(this.routed(req, base), this.o.deadlineMs);
    if (heavySearch(req)) return this.lane.run(search);
    return isLookup(req) ? search() : this.pageLane.run(search);
  }

  /**
   * The stored resources of each type, as the planner's statistics estimate them (GET /). An empty
   * table is said to be empty: never analyzed, PostgreSQL would guess a few rows of each.
   */
  async typeEstimates(types: readonly string[]): Promise<Record<string, number>> {
    const db = this.pools.generic;
    const estimate = async () => {
      const [{ any }] = await run<{ any: boolean }[]>(db, sql`select exists (select 1 from resource) as any`);
      return Promise.all(types.map((t) => (any ? this.planner.typeRows(db, t) : 0)));
    };
    const rows = await withDeadline(estimate(), this.o.deadlineMs);
    return Object.fromEntries(types.map((t, i) => [t, rows[i]]));
  }

  /** The read interaction: the stored JSON text of one resource, or undefined. */
  read(type: string, id: string): Promise<string | undefined> {
    const read = (pools: Pools) => readResource(pools.sql, type, id);
    return withDeadline(this.replicas ? this.replicas.run(read) : read(this.pools), this.o.deadlineMs);
  }

  /** A search on the primary, or on the replicas: a next page on one that has replayed its cursor's position. */
  private async routed(req: SearchRequest, base: string): Promise<SearchResult> {
    const state = req.cursor ? this.cursors.decode(req, req.cursor) : undefined;
    if (!this.replicas) return this.run(req, base, this.pools, state);
    return this.replicas.run((pools) => this.run(req, base, pools, state), state?.lsn === undefined ? undefined : parseLsn(state.lsn));
  }

  /**
   * The pool a search's statements run on: a heavy search's on a pool of their own, so that they
   * never wait in line in front of light ones on the connections those pipeline on; a lookup's page
   * on the pool planned once (its plan cannot depend on the values), which runs nothing else; the
   * others on the pool planned for their values.
   */
  poolOf(req: SearchRequest, pools: Pools = this.pools): Sql {
    if (heavySearch(req)) return pools.heavy;
    return valueIndependent(req) && req.sort.length === 0 ? pools.generic : pools.sql;
  }

  /**
   * A search's statements, in order, on one database's `pools`, without the lane (the benchmark's
   * SQL floor runs exactly this).
   */
  async run(
    req: SearchRequest,
    base: string,
    pools: Pools = this.pools,
    state: CursorState | undefined = req.cursor ? this.cursors.decode(req, req.cursor) : undefined,
  ): Promise<SearchResult> {
    const db = this.poolOf(req, pools);
    const warnings = [...req.warnings];
    const systems = await this.planner.systemsOf(db, req);
    if (req.count === 0 || req.summary === 'count') {
      return { matches: Entries.none, includes: Entries.none, total: await countAll(db, systems, req), warnings };
    }
    // A first page's count runs beside the planning and the page, within its budget, on a pool of
    // its own; a lookup is never counted, its page holds its matches.
    const counting = !state && req.total === undefined && !isLookup(req) ? this.countFirstPage(pools.count, systems, req) : undefined;
    counting?.catch(() => {});
    // The planner's bounded counts run on the search's own pool: the generic one is the lookups'.
    const hints = await this.planner.decide(db, req, db, systems);
    const keys = req.include.length > 0 || req.revinclude.length > 0;
    let page: Entries;
    try {
      page = await this.matches(db, hints, req, state, base, keys);
    } catch (err) {
      if (isTimeout(err)) throw new FhirError(503, 'timeout', 'the search took too long and was cancelled; narrow it down with more selective parameters');
      throw err;
    }
    const hasNext = page.rows > req.count;
    let total: number | undefined = state?.total;
    if (total === undefined && req.total !== 'none') {
      if (!state && !hasNext) total = page.count;
      else if (req.total === 'accurate') total = await countAll(db, hints, req);
      else if (req.total === 'estimate') total = await this.planner.estimateMatches(db, hints, req);
      else if (!state) total = await (counting ?? this.countFirstPage(pools.count, hints, req));
    }
    let includes = Entries.none;
    if (keys) {
      // On the search's own pool, or the pool planned for its values beside a lookup's: the lookups'
      // connections run nothing that could keep them waiting.
      const statement = includeQuery(req, page, this.o.includeCap + 1);
      if (statement) includes = await fetchEntries(db === pools.generic ? pools.sql : db, statement, { base, mode: 'include', shown: this.o.includeCap, keys: false });
      if (includes.rows > this.o.includeCap) warnings.push(`more than ${this.o.includeCap} resources to include on this page: only the first ${this.o.includeCap} are given`);
    }
    const lsn = hasNext && this.replicas ? await this.positionAfter(pools, state) : undefined;
    const next = hasNext ? this.cursors.encode(req, { ...cursorAfter(req, page.last!), total: req.total === 'estimate' ? undefined : total, lsn }) : undefined;
    return { matches: page, includes, total, next, warnings };
  }

  /** The position a next page must be read at, at least: the cursor's, or where `pools` is now. */
  private async positionAfter(pools: Pools, state: CursorState | undefined): Promise<string> {
    const now = await this.replicas!.position(pools);
    const before = state?.lsn === undefined ? 0n : parseLsn(state.lsn);
    return formatLsn(now > before ? now : before);
  }

  /**
   * The count behind a first page's total, within TOTAL_BUDGET_MS. A set the planner estimates far
   * larger than any count could read in the budget is not counted at all: its total would be
   * omitted anyway, and the count would take the whole budget from the answer and the machine.
   */
  private async countFirstPage(count: Sql, hints: PlanHints, req: SearchRequest): Promise<number | undefined> {
    const budget = this.o.totalBudgetMs;
    if (budget <= 0) return undefined;
    const started = Date.now();
    const estimate = this.planner.estimateMatches(count, hints, req);
    estimate.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), budget)));
    const estimated = await Promise.race([estimate, late]).finally(() => clearTimeout(timer));
    if (estimated === undefined || estimated > budget * COUNTED_ROWS_PER_MS) return undefined;
    return countWithin(count, hints, req, budget - (Date.now() - started));
  }

  /**
   * The page of matches after the cursor. A sorted page is read from its phase (src/fhir/sort.ts):
   * phase 1 first, then, when phase 1 ends within the page, the start of phase 2.
   */
  private async matches(db: Sql, hints: PlanHints, req: SearchRequest, state: CursorState | undefined, base: string, keys: boolean): Promise<Entries> {
    if (req.sort.length === 0) return fetchPage(db, req, pageQuery(hints, req, state?.after, req.count + 1), base, keys);
    const cursor = state?.sort ? { ...state.sort, rid: state.after } : undefined;
    let page = Entries.none;
    if (cursor?.phase !== 2) {
      page = await fetchPage(db, req, sortedPageQuery(hints, req, 1, cursor, req.count + 1), base, keys);
      if (page.rows > req.count || !hasPhase2(req)) return page;
    }
    const rest = sortedPageQuery(hints, req, 2, cursor?.phase === 2 ? cursor : undefined, req.count + 1 - page.rows);
    return concatEntries(page, await fetchPage(db, req, rest, base, keys, req.count - page.count));
  }
}

/** A search by value-independent conditions (identifiers, ids, references): a handful of matches, found at once. */
const isLookup = (req: SearchRequest) => req.conditions.length > 0 && valueIndependent(req) && req.sort.length === 0;

/** The cursor state of the row whose `key` column is `last`: a rid, or a sorted row's JSON key. */
function cursorAfter(req: SearchRequest, last: string): Pick<CursorState, 'after' | 'sort'> {
  if (req.sort.length === 0) return { after: last };
  const [phase, ...rest] = JSON.parse(last) as [1 | 2, ...string[]];
  return { after: rest.at(-1)!, sort: { phase, keys: rest.slice(0, -1) } };
}

/** The number of matches, however long counting takes. */
export async function countAll(db: Sql, hints: PlanHints, req: SearchRequest): Promise<number> {
  return Number((await run<{ count: string }[]>(db, countQuery(hints, req)))[0].count);
}

/**
 * The number of matches, or undefined when it is not known within `budgetMs` of asking, waiting
 * for a connection included (`db`: the count pool, whose statement timeout is the same budget).
 */
export async function countWithin(db: Sql, hints: PlanHints, req: SearchRequest, budgetMs: number): Promise<number | undefined> {
  if (budgetMs <= 0) return undefined;
  const query = run<{ count: string }[]>(db, countQuery(hints, req));
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

/**
 * A search's statements each end within the statement timeout, and a silent connection is closed
 * (src/db-socket.ts); this is the net below both: past `ms`, the answer is a 503 whatever the driver
 * still waits for.
 */
export function withDeadline<T>(work: Promise<T>, ms: number | undefined): Promise<T> {
  if (!ms) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FhirError(503, 'transient', 'the database did not answer in time; try again', { 'retry-after': '1' })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
