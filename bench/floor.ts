// The SQL floor: the statements a search runs, executed directly with postgres.js (no HTTP, no
// Bundle). Paths are parsed once up front with the server's own parser and compiler; each execution
// runs the same functions the server runs (src/store/search.ts executeSearch): the page (limit
// _count + 1, fetchPage), the count when the server would run it, and the _include/_revinclude
// statements (fetchIncludes).

import type { Config } from '../src/config.ts';
import type { Sql } from '../src/db.ts';
import { countQuery, pageQuery, type CompileContext } from '../src/fhir/compile.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { IncludeSpec, SearchRequest } from '../src/fhir/search-request.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { fetchIncludes, fetchPage, SystemLookup } from '../src/store/search.ts';

export interface FloorOp {
  path: string;
  req: SearchRequest;
  ctx: CompileContext;
  after?: string;
}

/** The keyset position inside a paging cursor (its payload is base64url JSON; the signature is not checked here). */
export function cursorAfter(cursor: string): string {
  const payload = JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as { a: string };
  return payload.a;
}

export async function prepareOps(sql: Sql, config: Config, base: string, paths: string[]): Promise<FloorOp[]> {
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
    const ctx = await systems.prepare(sql, req);
    ops.push({ path: p, req, ctx, after: req.cursor ? cursorAfter(req.cursor) : undefined });
  }
  return ops;
}

const isTimeout = (err: unknown) => (err as { code?: string })?.code === '57014';

/** One search's statements, in the order the server runs them. */
export async function execOp(sql: Sql, op: FloorOp, config: Config): Promise<void> {
  const { req, ctx } = op;
  const page = await fetchPage(ctx, req, op.after, req.count + 1);
  const hasNext = page.length > req.count;
  const matches = hasNext ? page.slice(0, req.count) : page;
  if (op.after === undefined && hasNext && req.total !== 'none') {
    if (req.total === 'accurate') await countQuery(ctx, req);
    else if (req.total === undefined) {
      try {
        await sql.begin(async (tx) => {
          await tx.unsafe(`set local statement_timeout = ${Math.floor(config.totalBudgetMs)}`);
          await countQuery({ ...ctx, sql: tx as unknown as Sql }, req);
        });
      } catch (err) {
        if (!isTimeout(err)) throw err;
      }
    }
  }
  await fetchIncludes(sql, req, matches, config.includeCap);
}

const planText = (rows: readonly Record<string, unknown>[]) => rows.map((r) => String(r['QUERY PLAN'])).join('\n');

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the page statement (the pending query nests as a fragment) and, for
 * a search with _include/_revinclude, of the include statements on the page's matches.
 */
export async function explainPage(sql: Sql, op: FloorOp, config: Config): Promise<string> {
  const ctx = { ...op.ctx, sql };
  const { req } = op;
  const out = [planText(await sql`explain (analyze, buffers) ${pageQuery(ctx, req, op.after, req.count + 1)}`)];
  if (req.include.length || req.revinclude.length) {
    const page = (await fetchPage(ctx, req, op.after, req.count + 1)).slice(0, req.count);
    const rids = page.map((m) => m.rid);
    const ids = page.map((m) => m.id);
    const limit = config.includeCap + 1;
    if (req.include.length) {
      const cond = req.include
        .map((spec) => (spec.targetType ? sql`(x.param = ${spec.param.id} and x.target_type = ${spec.targetType})` : sql`x.param = ${spec.param.id}`))
        .reduce((a, b) => sql`${a} or ${b}`);
      out.push('-- _include statement', planText(await sql`explain (analyze, buffers)
        select r.rid, r.type, r.id, r.content::text as content from resource r
        where (r.type, r.id) in (select x.target_type, x.target_id from reference_idx x where x.rid = any(${rids}::bigint[]) and (${cond}))
        order by r.rid limit ${limit}`));
    }
    if (req.revinclude.length) {
      const params = [...new Set(req.revinclude.map((s) => s.param.id))];
      out.push('-- _revinclude statement', planText(await sql`explain (analyze, buffers)
        select r.rid, r.type, r.id, r.content::text as content from resource r
        where r.rid in (select x.rid from reference_idx x
          where x.param = any(${params}::int[]) and x.target_type = ${req.type} and x.target_id = any(${ids}::text[]))
        order by r.rid limit ${limit}`));
    }
  }
  return out.join('\n');
}
