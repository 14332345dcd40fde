import { availableParallelism } from 'node:os';
import type { Config } from '../config.ts';
import { SILENCE_MARGIN_MS, splitPool, type PoolOptions, type Pools } from '../db.ts';
import type { SearchRequest } from '../fhir/search-request.ts';
import { classify, planOnce, type SearchClass } from './classify.ts';

/**
 * How a search runs, decided once from the parsed request (`decideExecution`) under the numbers
 * of `executionPolicy`, and carried as one value: the route labels its metrics with the class, the
 * router admits it to its lane and bounds it by its deadline, the runner runs its statements on
 * its pools. Nothing else classifies a search or chooses its pools.
 */
export interface Execution {
  readonly class: SearchClass;
  /** the lane it waits its turn in; a lookup or a nearby search never waits. */
  readonly lane: 'page' | 'heavy' | undefined;
  /** the pool of its plan, its page and its exact count. */
  readonly pool: Extract<keyof Pools, 'generic' | 'sql' | 'heavy'>;
  /** the pool of its _include/_revinclude statement: never the lookups' (generic) connections. */
  readonly includePool: Extract<keyof Pools, 'sql' | 'heavy'>;
  /** the pool of the estimate and count behind a first page's total. */
  readonly countPool: Extract<keyof Pools, 'count'>;
  /** a search is a read: it may run on a hot standby (DATABASE_READ_URL) that has replayed its cursor. */
  readonly replica: boolean;
  /** the most it may take once admitted (0: no limit). */
  readonly deadlineMs: number;
  /** the most its first page may wait for a count (0: never counted unless asked). */
  readonly countBudgetMs: number;
  /** whether its first page's total is read (when kept) or estimated beside the page, rather than once the page is full. */
  readonly totalBeside: boolean;
}

/** The numbers every decision shares, computed once from the configuration. */
export interface ExecutionPolicy {
  /** searches each lane runs at once, and connections of the heavy and count pools: this process's share of HEAVY_SEARCHES. */
  readonly laneWidth: number;
  /** the most a search or read may take once it runs (0: no limit). */
  readonly deadlineMs: number;
  /** TOTAL_BUDGET_MS. */
  readonly countBudgetMs: number;
}

export function executionPolicy(config: Pick<Config, 'heavySearches' | 'workers' | 'statementTimeoutMs' | 'totalBudgetMs'>): ExecutionPolicy {
  return {
    laneWidth: Math.max(1, Math.round((config.heavySearches || availableParallelism()) / (config.workers || availableParallelism()))),
    // Up to four statements, each within the statement timeout, and a silent connection's margin.
    deadlineMs: config.statementTimeoutMs ? 4 * config.statementTimeoutMs + SILENCE_MARGIN_MS : 0,
    // Applied twice, both needed: the count pool's statement timeout (searchPoolOptions) frees the
    // backend, the runner's wait (`within`) bounds the answer, time queued for a connection included.
    countBudgetMs: config.totalBudgetMs,
  };
}

/**
 * The search pools of `processes` server processes (src/db.ts connectPools): DB_POOL_SIZE split
 * between the planned and the generic pool, the heavy and count pools as wide as the lanes, counts
 * stopped at the count budget, statements with SEARCH_PARALLEL_WORKERS.
 */
export function searchPoolOptions(config: Config, processes = 1): PoolOptions {
  const policy = executionPolicy(config);
  return {
    ...splitPool(config.dbPoolSize * processes),
    heavyMax: policy.laneWidth * processes,
    countTimeoutMs: policy.countBudgetMs || undefined,
    parallelWorkers: config.searchParallelWorkers,
  };
}

/**
 * The execution of `req` (src/store/classify.ts gives its class). A heavy search runs on the pool
 * of heavy searches, so that it never waits in line in front of light ones on the connections
 * those pipeline on; a search whose plans cannot depend on its values on the pool planned once;
 * the others on the pool planned for their values.
 */
export function decideExecution(req: SearchRequest, policy: ExecutionPolicy): Execution {
  const cls = classify(req);
  const pool = cls === 'heavy' ? 'heavy' : planOnce(req) && req.sort.length === 0 ? 'generic' : 'sql';
  return {
    class: cls,
    lane: cls === 'lookup' || cls === 'nearby' ? undefined : cls,
    pool,
    includePool: pool === 'generic' ? 'sql' : pool,
    countPool: 'count',
    replica: true,
    deadlineMs: policy.deadlineMs,
    countBudgetMs: policy.countBudgetMs,
    // Not for a lookup (a handful of matches), a next page (its total rides in its cursor), nor a search that says which total it wants.
    totalBeside: cls !== 'lookup' && req.cursor === undefined && req.total === undefined,
  };
}
