import type { Sql } from '../db.ts';
import { containsNeedle, countQuery, likeEscape, matchSet, pageQuery, type CompileContext, type Fragment } from '../fhir/compile.ts';
import type { CursorCodec } from '../fhir/cursor.ts';
import { FhirError } from '../fhir/outcome.ts';
import type { Condition, IncludeSpec, SearchRequest } from '../fhir/search-request.ts';

/** Executes a SearchRequest: the page, the total, the included resources. */
export interface StoredRow {
  rid: string;
  type: string;
  id: string;
  /** the resource JSON as the database sent it, UTF-8 (spliced into the Bundle as bytes). */
  content: Buffer;
}

/**
 * Runs a statement selecting (rid, type, id, content::text) and keeps the content as the bytes the
 * database sent (postgres.js `.raw()`): a page of 1000 resources is 2 MB that would otherwise be
 * decoded to a string only to be encoded again.
 */
async function storedRows(query: Fragment): Promise<StoredRow[]> {
  const rows = (await query.raw()) as unknown as (Buffer | null)[][];
  return rows.map(([rid, type, id, content]) => ({ rid: rid!.toString('latin1'), type: type!.toString('utf8'), id: id!.toString('utf8'), content: content! }));
}

/** The page of matches after `after` (keyset), `limit` rows at most. */
export function fetchPage(ctx: CompileContext, req: SearchRequest, after: string | undefined, limit: number): Promise<StoredRow[]> {
  return storedRows(pageQuery(ctx, req, after, limit));
}

export interface SearchResult {
  matches: StoredRow[];
  includes: StoredRow[];
  total?: number;
  /** cursor of the next page, when there is one. */
  next?: string;
  warnings: string[];
}

export interface SearchDeps {
  sql: Sql;
  systems: SystemLookup;
  cursors: CursorCodec;
  includeCap: number;
  totalBudgetMs: number;
}

/** Token system URIs → interned ids, cached (only hits: a system may appear with the next load). */
export class SystemLookup {
  private cache = new Map<string, number>();

  async prepare(sql: Sql, req: SearchRequest): Promise<CompileContext> {
    const uris = new Set<string>();
    const walk = (c: Condition): void => {
      if (c.kind === 'token') for (const v of c.values) if (typeof v.system === 'string') uris.add(v.system);
      if (c.kind === 'chain' || c.kind === 'has') walk(c.inner);
    };
    const needles: { param: number; needle: string }[] = [];
    const walkAll = (c: Condition): void => {
      walk(c);
      if (c.kind === 'string' && c.mode === 'contains') {
        for (const v of c.values) {
          const needle = containsNeedle(v);
          if (needle) needles.push({ param: c.param.id, needle });
        }
      }
      if (c.kind === 'chain' || c.kind === 'has') walkAll(c.inner);
    };
    req.conditions.forEach(walkAll);
    const missing = [...uris].filter((u) => !this.cache.has(u));
    if (missing.length) {
      for (const r of await sql<{ id: number; uri: string }[]>`select id, uri from token_system where uri = any(${missing}::text[])`) {
        this.cache.set(r.uri, r.id);
      }
    }
    const commonNeedles = new Set<string>();
    for (const { param, needle } of needles) if (await this.isCommon(sql, param, needle, req.count + 1)) commonNeedles.add(`${param}/${needle}`);
    return { sql, systemId: (uri) => this.cache.get(uri), commonNeedles };
  }

  /** Estimated rows of each string parameter, refreshed every minute. */
  private paramRows = new Map<number, { n: number; at: number }>();

  private async rowsOf(sql: Sql, param: number): Promise<number> {
    const hit = this.paramRows.get(param);
    if (hit && Date.now() - hit.at < 60_000) return hit.n;
    const n = await planRows(sql, sql`select 1 from string_idx s where s.param = ${param}`);
    this.paramRows.set(param, { n, at: Date.now() });
    return n;
  }

  /**
   * A :contains needle is common when the key-order walk of its parameter is expected to fill a
   * page of n rows sooner than the trigram path reads the needle's rows: the walk reads about
   * n × P / m rows of a parameter with P rows for a needle with m matches, the trigram path about
   * m, so the crossover is m = √(n × P) (about 13 k rows for a page of 50 over the 3.6 M name rows
   * of 1.8 M practitioners). m is the planner's estimate for the bare condition.
   */
  private async isCommon(sql: Sql, param: number, needle: string, pageRows: number): Promise<boolean> {
    const pattern = `%${likeEscape(needle)}%`;
    const m = await planRows(sql, sql`select 1 from string_idx s where s.param = ${param} and s.norm like ${pattern}`);
    return m > Math.sqrt(pageRows * (await this.rowsOf(sql, param)));
  }
}

async function planRows(sql: Sql, query: Fragment): Promise<number> {
  const [row] = await sql<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>`explain (format json) ${query}`;
  return row['QUERY PLAN'][0].Plan['Plan Rows'];
}

const isTimeout = (err: unknown) => (err as { code?: string })?.code === '57014';

async function countWithin(ctx: CompileContext, req: SearchRequest, budgetMs: number | undefined): Promise<number | undefined> {
  try {
    if (budgetMs === undefined) return Number((await countQuery(ctx, req))[0].count);
    if (budgetMs === 0) return undefined;
    return await ctx.sql.begin(async (tx) => {
      await tx.unsafe(`set local statement_timeout = ${Math.floor(budgetMs)}`);
      return Number((await countQuery({ ...ctx, sql: tx as unknown as Sql }, req))[0].count);
    });
  } catch (err) {
    if (isTimeout(err) && budgetMs !== undefined) return undefined;
    throw err;
  }
}

async function estimate(ctx: CompileContext, req: SearchRequest): Promise<number> {
  return Math.round(await planRows(ctx.sql, matchSet(ctx, req)));
}

export async function fetchIncludes(sql: Sql, req: SearchRequest, matches: StoredRow[], cap: number): Promise<{ rows: StoredRow[]; capped: boolean }> {
  if (matches.length === 0 || (req.include.length === 0 && req.revinclude.length === 0)) return { rows: [], capped: false };
  const rids = matches.map((m) => m.rid);
  const ids = matches.map((m) => m.id);
  const out = new Map<string, StoredRow>();
  const limit = cap + 1;
  const forward = (spec: IncludeSpec) =>
    spec.targetType ? sql`(x.param = ${spec.param.id} and x.target_type = ${spec.targetType})` : sql`x.param = ${spec.param.id}`;
  if (req.include.length) {
    const cond = req.include.map(forward).reduce((a, b) => sql`${a} or ${b}`);
    const rows = await storedRows(sql`
      select r.rid, r.type, r.id, r.content::text as content from resource r
      where (r.type, r.id) in (select x.target_type, x.target_id from reference_idx x where x.rid = any(${rids}::bigint[]) and (${cond}))
      order by r.rid limit ${limit}`);
    for (const r of rows) out.set(r.rid, r);
  }
  if (req.revinclude.length && out.size <= cap) {
    const params = [...new Set(req.revinclude.map((s) => s.param.id))];
    const rows = await storedRows(sql`
      select r.rid, r.type, r.id, r.content::text as content from resource r
      where r.rid in (select x.rid from reference_idx x
        where x.param = any(${params}::int[]) and x.target_type = ${req.type} and x.target_id = any(${ids}::text[]))
      order by r.rid limit ${limit}`);
    for (const r of rows) out.set(r.rid, r);
  }
  const matched = new Set(rids);
  const rows = [...out.values()].filter((r) => !matched.has(r.rid));
  return { rows: rows.slice(0, cap), capped: rows.length > cap };
}

export async function executeSearch(deps: SearchDeps, req: SearchRequest): Promise<SearchResult> {
  const ctx = await deps.systems.prepare(deps.sql, req);
  const warnings = [...req.warnings];
  const state = req.cursor ? deps.cursors.decode(req, req.cursor) : undefined;
  if (req.count === 0 || req.summary === 'count') {
    return { matches: [], includes: [], total: await countWithin(ctx, req, undefined), warnings };
  }
  let page: StoredRow[];
  try {
    page = await fetchPage(ctx, req, state?.after, req.count + 1);
  } catch (err) {
    if (isTimeout(err)) throw new FhirError(503, 'timeout', 'the search took too long and was cancelled; narrow it down with more selective parameters');
    throw err;
  }
  const hasNext = page.length > req.count;
  const matches = hasNext ? page.slice(0, req.count) : page;
  let total: number | undefined = state?.total;
  if (total === undefined && req.total !== 'none') {
    if (!state && !hasNext) total = matches.length;
    else if (req.total === 'accurate') total = await countWithin(ctx, req, undefined);
    else if (req.total === 'estimate') total = await estimate(ctx, req);
    else if (!state) total = await countWithin(ctx, req, deps.totalBudgetMs);
  }
  const inc = await fetchIncludes(deps.sql, req, matches, deps.includeCap);
  if (inc.capped) warnings.push(`more than ${deps.includeCap} resources to include on this page: only the first ${deps.includeCap} are given`);
  const next = hasNext
    ? deps.cursors.encode(req, { after: matches[matches.length - 1].rid, total: req.total === 'estimate' ? undefined : total })
    : undefined;
  return { matches, includes: inc.rows, total, next, warnings };
}
