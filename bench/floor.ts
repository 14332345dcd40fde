// The SQL floor: the statements a search runs, executed directly with postgres.js (no HTTP, no
// Bundle). Paths are parsed once up front with the server's own parser; each execution is the
// server's own runner (src/store/runner.ts: the plan, the page, the count when the server would run
// it, the _include/_revinclude statement), without the router's lanes and deadline.

import type { Config } from '../src/config.ts';
import type { Pools } from '../src/db.ts';
import { includeQuery, pageQuery } from '../src/fhir/compile.ts';
import { renderedEntries, renderStatement, type Bases } from '../src/fhir/entries.ts';
import { sortedPageQuery } from '../src/fhir/sort.ts';
import { stmt, type Statement } from '../src/fhir/statement.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import type { PlanHints, SearchRequest } from '../src/fhir/search-request.ts';
import { registry, type ResourceType, type Version } from '../src/registry/index.ts';
import { decideExecution, executionPolicy, type Execution, type ExecutionPolicy } from '../src/store/execution.ts';
import { Planner } from '../src/store/planner.ts';
import { query } from '../src/store/query.ts';
import { SearchRunner, statements } from '../src/store/runner.ts';

export interface FloorOp {
  path: string;
  req: SearchRequest;
  /** how the server runs it (src/store/execution.ts): its pools, its count budget. */
  execution: Execution;
  hints: PlanHints;
  /** where each type is read (fullUrls are rendered with them, as the server does). */
  bases: Bases;
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

export async function prepareOps(floor: Floor, config: Config, base: string, paths: string[]): Promise<FloorOp[]> {
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
    const execution = decideExecution(req, floor.policy);
    const hints = await planner.plan(statements(floor.pools[execution.pool]), req);
    const others: Record<string, string> = version === 'v1' ? { PractitionerRole: `${base}/fhir/v2`, Device: `${base}/fhir/v2`, HealthcareService: `${base}/fhir/v2` } : {};
    ops.push({ path: p, req, execution, hints, bases: { base: `${base}/fhir/${version}`, others }, ...(req.cursor ? cursorAfter(req.cursor) : {}) });
  }
  return ops;
}

/** The floor: the server's own runner (src/store/runner.ts) on the floor's pools. */
export interface Floor {
  runner: SearchRunner;
  pools: Pools;
  policy: ExecutionPolicy;
}

export function floorRunner(pools: Pools, config: Config): Floor {
  return { pools, policy: executionPolicy(config), runner: new SearchRunner(new Planner(), { includeCap: config.includeCap }) };
}

/** One search's statements: the server's runner (plan, page, count, includes), no HTTP, no lane. */
export async function execOp(floor: Floor, op: FloorOp): Promise<void> {
  const state = op.after === undefined ? undefined : { after: op.after, sort: op.sort, total: undefined };
  await floor.runner.search(floor.pools, op.req, op.execution, state, op.bases);
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
export async function explainPage(floor: Floor, op: FloorOp, config: Config): Promise<string> {
  const { req } = op;
  const db = floor.pools[op.execution.pool];
  const keys = req.include.length > 0 || req.revinclude.length > 0;
  const rendered = renderStatement(matchesQuery(op), { bases: op.bases, mode: 'match', shown: req.count, keys });
  const out = [planText(await query(db, stmt`explain (analyze, buffers) ${rendered}`))];
  if (keys) {
    const [row] = (await query(db, rendered).raw()) as unknown as (Buffer | null)[][];
    const include = includeQuery(req, renderedEntries(row, req.count), config.includeCap + 1);
    if (include) {
      const rendered = renderStatement(include, { bases: op.bases, mode: 'include', shown: config.includeCap, keys: false });
      out.push('-- _include/_revinclude statement', planText(await query(floor.pools[op.execution.includePool], stmt`explain (analyze, buffers) ${rendered}`)));
    }
  }
  return out.join('\n');
}
