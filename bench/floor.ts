// The SQL floor: the statements a search runs, executed directly with postgres.js (no HTTP, no
// Bundle). Paths are parsed once up front with the server's own parser and compiler; each execution
// runs the same functions the server runs (src/store/search.ts executeSearch): the page (limit
// _count + 1, fetchPage), the count when the server would run it, and the _include/_revinclude
// statements (fetchIncludes).

import type { Config } from '../src/config.ts';
import type { Sql } from '../src/db.ts';
import { pageQuery, type CompileContext } from '../src/fhir/compile.ts';
import { run, sql } from '../src/fhir/statement.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { IncludeSpec, SearchRequest } from '../src/fhir/search-request.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { countWithin, fetchIncludes, includeStatement, searchSql, SystemLookup } from '../src/store/search.ts';
import { fetchPage, renderStatement } from '../src/store/render.ts';

export interface FloorOp {
  path: string;
  req: SearchRequest;
  ctx: CompileContext;
  /** the API version's base (fullUrls are rendered with it, as the server does). */
  base: string;
  after?: string;
}

/** The keyset position inside a paging cursor (its payload is base64url JSON; the signature is not checked here). */
export function cursorAfter(cursor: string): string {
  const payload = JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as { a: string };
  return payload.a;
}

/** The floor's two pools, as the server has them (src/db.ts connectPools). */
export interface Pools {
  sql: Sql;
  generic: Sql;
}

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
    const ctx = await systems.prepare(searchSql(pools, req), req);
    ops.push({ path: p, req, ctx, base: `${base}/fhir/${version}`, after: req.cursor ? cursorAfter(req.cursor) : undefined });
  }
  return ops;
}

/** One search's statements, in the order the server runs them. */
export async function execOp(pools: Pools, op: FloorOp, config: Config): Promise<void> {
  const { req, ctx } = op;
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  const page = await fetchPage(ctx, req, op.after, op.base, keys);
  const hasNext = page.rows > req.count;
  if (op.after === undefined && hasNext && req.total !== 'none') {
    if (req.total === 'accurate') await countWithin(ctx, req, undefined);
    else if (req.total === undefined) await countWithin(ctx, req, config.totalBudgetMs);
  }
  if (keys) await fetchIncludes(pools.generic, op.base, req, page, config.includeCap);
}

const planText = (rows: readonly Record<string, unknown>[]) => rows.map((r) => String(r['QUERY PLAN'])).join('\n');

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the page statement (the pending query nests as a fragment) and, for
 * a search with _include/_revinclude, of the include statements on the page's matches.
 */
export async function explainPage(pools: Pools, op: FloorOp, config: Config): Promise<string> {
  const { req, ctx } = op;
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  const rendered = renderStatement(pageQuery(ctx, req, op.after, req.count + 1), { base: op.base, mode: 'match', shown: req.count, keys });
  const out = [planText(await run(ctx.db, sql`explain (analyze, buffers) ${rendered}`))];
  if (keys) {
    const page = await fetchPage(ctx, req, op.after, op.base, keys);
    const include = includeStatement(req, page, config.includeCap + 1);
    if (include) {
      const rendered = renderStatement(include, { base: op.base, mode: 'include', shown: config.includeCap, keys: false });
      out.push('-- _include/_revinclude statement', planText(await run(pools.generic, sql`explain (analyze, buffers) ${rendered}`)));
    }
  }
  return out.join('\n');
}
