// The SQL floor: the statements a search runs, executed directly with postgres.js (no HTTP, no
// Bundle). Paths are parsed once up front with the server's own parser; each execution is the
// server's own Executor.run (src/store/executor.ts: the plan, the page, the count when the server
// would run it, the _include/_revinclude statement), without the lane.

import type { Config } from '../src/config.ts';
import type { Pools } from '../src/db.ts';
import { includeQuery, pageQuery, renderQuery } from '../src/fhir/compile.ts';
import { sortedPageQuery } from '../src/fhir/sort.ts';
import { sql, type Statement } from '../src/fhir/statement.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { PlanHints, SearchRequest } from '../src/fhir/search-request.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { fetchPage } from '../src/store/entries.ts';
import { Executor } from '../src/store/executor.ts';
import { Planner } from '../src/store/planner.ts';
import { run } from '../src/store/run.ts';

export interface FloorOp {
  path: string;
  req: SearchRequest;
  hints: PlanHints;
  /** the API version's base (fullUrls are rendered with it, as the server does). */
  base: string;
  /** where a later page starts: its rid and, for a sorted search, its phase and keys. */
  after?: string;
  sort?: { phase: 1 | 2; keys: string[] };
}

/** The keyset position inside a paging cursor (its payload is base64url JSON; the signature is not checked here). */
export function cursorAfter(cursor: string): Pick<FloorOp, 'after' | 'sort'> {
  const payload = JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as { a: string; s?: FloorOp['sort'] };
  return { after: payload.a, sort: payload.s };
}

/** The floor's pools, as the server has them (src/db.ts connectPools). */
export type { Pools };

export async function prepareOps(executor: Executor, config: Config, base: string, paths: string[]): Promise<FloorOp[]> {
  const planner = new Planner();
  const ops: FloorOp[] = [];
  for (const p of paths) {
    const u = new URL(p, base);
    const [, , version, type] = u.pathname.split('/');
    const req = parseSearch([...u.searchParams], {
      version: version as Version,
      type: type as ResourceType,
      registry,
      strict: false,
      bases: [`${base}/fhir/v1`, `${base}/fhir/v2`],
      now: Date.now(),
      defaultCount: config.defaultCount,
      maxCount: config.maxCount,
      maxValuesPerParam: config.maxValuesPerParam,
      maxParams: config.maxParams,
    });
    const hints = await planner.plan(executor.poolOf(req), req);
    ops.push({ path: p, req, hints, base: `${base}/fhir/${version}`, ...(req.cursor ? cursorAfter(req.cursor) : {}) });
  }
  return ops;
}

/**
 * The executor of the floor: the server's own (src/app.ts makeDeps) on the floor's pools, the
 * cursor secret the benchmark gives its server (deep pages are `next` links it signed).
 */
export function floorExecutor(pools: Pools, config: Config, cursorSecret: string): Executor {
  return new Executor({
    pools,
    cursorSecret,
    includeCap: config.includeCap,
    totalBudgetMs: config.totalBudgetMs,
    heavyWidth: Number.MAX_SAFE_INTEGER, // unused: run() is the search without the lane
  });
}

/** One search's statements: the server's Executor.run (plan, page, count, includes), no HTTP. */
export async function execOp(executor: Executor, op: FloorOp): Promise<void> {
  await executor.run(op.req, op.base);
}

const planText = (rows: readonly Record<string, unknown>[]) => rows.map((r) => String(r['QUERY PLAN'])).join('\n');

/** The statement of the page's matches: in rid order, or a sorted search's phase the cursor is in. */
function matchesQuery(op: FloorOp): Statement {
  const { req, hints } = op;
  if (req.sort.length === 0) return pageQuery(hints, req, op.after, req.count + 1);
  const cursor = op.sort && op.after ? { ...op.sort, rid: op.after } : undefined;
  return sortedPageQuery(hints, req, cursor?.phase ?? 1, cursor, req.count + 1);
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the page statement (the pending query nests as a fragment) and, for
 * a search with _include/_revinclude, of the include statements on the page's matches.
 */
export async function explainPage(executor: Executor, op: FloorOp, config: Config): Promise<string> {
  const { req } = op;
  const db = executor.poolOf(req);
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  const rendered = renderQuery(matchesQuery(op), { base: op.base, mode: 'match', shown: req.count, keys });
  const out = [planText(await run(db, sql`explain (analyze, buffers) ${rendered}`))];
  if (keys) {
    const page = await fetchPage(db, req, matchesQuery(op), op.base, keys);
    const include = includeQuery(req, page, config.includeCap + 1);
    if (include) {
      const rendered = renderQuery(include, { base: op.base, mode: 'include', shown: config.includeCap, keys: false });
      out.push('-- _include/_revinclude statement', planText(await run(db === executor.pools.generic ? executor.pools.sql : db, sql`explain (analyze, buffers) ${rendered}`)));
    }
  }
  return out.join('\n');
}
