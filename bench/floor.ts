// The SQL floor: the statements a search runs, executed directly with postgres.js (no HTTP, no
// Bundle). Paths are parsed once up front with the server's own parser; each execution is the
// server's own src/store/search.ts runSearch (token systems and :contains estimates, the page, the
// count when the server would run it, the _include/_revinclude statement), without the lane.

import type { Config } from '../src/config.ts';
import type { Pools } from '../src/db.ts';
import { pageQuery, type CompileContext } from '../src/fhir/compile.ts';
import { sortedPageQuery } from '../src/fhir/sort.ts';
import { run, sql, type Statement } from '../src/fhir/statement.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { SearchRequest } from '../src/fhir/search-request.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { CursorCodec } from '../src/fhir/cursor.ts';
import { Lane } from '../src/store/lane.ts';
import { includeStatement, runSearch, searchSql, SystemLookup, type SearchDeps } from '../src/store/search.ts';
import { fetchPage, renderStatement } from '../src/store/render.ts';

export interface FloorOp {
  path: string;
  req: SearchRequest;
  ctx: CompileContext;
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

export async function prepareOps(pools: Pools, config: Config, base: string, paths: string[]): Promise<FloorOp[]> {
  const systems = new SystemLookup();
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
    const ctx = await systems.prepare(searchSql({ sql: pools.sql, generic: pools.generic, heavySql: pools.heavy }, req), req, pools.generic);
    ops.push({ path: p, req, ctx, base: `${base}/fhir/${version}`, ...(req.cursor ? cursorAfter(req.cursor) : {}) });
  }
  return ops;
}

/**
 * The search deps of the floor: the server's own (src/app.ts makeDeps) on the floor's pools, the
 * cursor secret the benchmark gives its server (deep pages are `next` links it signed).
 */
export function floorDeps(pools: Pools, config: Config, cursorSecret: string): SearchDeps {
  return {
    sql: pools.sql,
    generic: pools.generic,
    heavySql: pools.heavy,
    countSql: pools.count,
    systems: new SystemLookup(),
    cursors: new CursorCodec(cursorSecret),
    includeCap: config.includeCap,
    totalBudgetMs: config.totalBudgetMs,
    heavy: new Lane(Number.MAX_SAFE_INTEGER), // unused: runSearch is the search without the lane
  };
}

/** One search's statements: the server's runSearch (system lookups, page, count, includes), no HTTP. */
export async function execOp(deps: SearchDeps, op: FloorOp): Promise<void> {
  await runSearch(deps, op.req, op.base);
}

const planText = (rows: readonly Record<string, unknown>[]) => rows.map((r) => String(r['QUERY PLAN'])).join('\n');

/** The statement of the page's matches: in rid order, or a sorted search's phase the cursor is in. */
function matchesQuery(op: FloorOp): Statement {
  const { req, ctx } = op;
  if (req.sort.length === 0) return pageQuery(ctx, req, op.after, req.count + 1);
  const cursor = op.sort && op.after ? { ...op.sort, rid: op.after } : undefined;
  return sortedPageQuery(ctx, req, cursor?.phase ?? 1, cursor, req.count + 1);
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the page statement (the pending query nests as a fragment) and, for
 * a search with _include/_revinclude, of the include statements on the page's matches.
 */
export async function explainPage(pools: Pools, op: FloorOp, config: Config): Promise<string> {
  const { req, ctx } = op;
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  const rendered = renderStatement(matchesQuery(op), { base: op.base, mode: 'match', shown: req.count, keys });
  const out = [planText(await run(ctx.db, sql`explain (analyze, buffers) ${rendered}`))];
  if (keys) {
    const page = await fetchPage(ctx.db, req, matchesQuery(op), op.base, keys);
    const include = includeStatement(req, page, config.includeCap + 1);
    if (include) {
      const rendered = renderStatement(include, { base: op.base, mode: 'include', shown: config.includeCap, keys: false });
      out.push('-- _include/_revinclude statement', planText(await run(pools.generic, sql`explain (analyze, buffers) ${rendered}`)));
    }
  }
  return out.join('\n');
}
