import type { Pools, Sql } from '../db.ts';
import { countedQuery, countQuery, includeQuery, measuredBy, measuredPageQuery, measureOrdered, pageQuery, RANK_PHASES, ranked, rankPhase, withMeasure, type RankPhase } from '../fhir/compile.ts';
import type { CursorState } from '../fhir/cursor.ts';
import { concatEntries, noEntries, renderedEntries, renderStatement, subsettedEntries, subsetting, type Bases, type Entries } from '../fhir/entries.ts';
import type { PlanHints, SearchRequest } from '../fhir/search-request.ts';
import { hasPhase2, sortedPageQuery } from '../fhir/sort.ts';
import type { Statement } from '../fhir/statement.ts';
import { within } from '../timeout.ts';
import { SearchTimedOut } from './errors.ts';
import type { Execution } from './execution.ts';
import { Planner } from './planner.ts';
import { query, runOn, type Run } from './query.ts';

/**
 * The runner: one search's statements on one database, on the pools its execution names
 * (src/store/execution.ts) — plan (src/store/planner.ts), compile (src/fhir/compile.ts, sort.ts),
 * then the page, the count behind `total` and the included resources, in that order. Where and
 * when a search runs (lanes, replicas, the deadline, cursors) is the router's (src/store/router.ts).
 */
export interface PageResult {
  matches: Entries;
  includes: Entries;
  total?: number;
  /** where the next page starts, when there is one. */
  next?: Pick<CursorState, 'after' | 'sort' | 'rank' | 'measure'>;
  warnings: string[];
}

export interface RunnerOptions {
  /** included resources per page at most (INCLUDE_CAP). */
  includeCap: number;
  /** true while searches wait for a core (the router's lanes): no count is started then. */
  saturated?: () => boolean;
}

/** Rows the fastest count (an index-only range) reads in a millisecond, at best. */
const COUNTED_ROWS_PER_MS = 20_000;

const isTimeout = (err: unknown) => (err as { code?: string })?.code === '57014';

export class SearchRunner {
  constructor(
    readonly planner: Planner,
    private readonly o: RunnerOptions,
  ) {}

  /** The page after `state` (the first without it), its total when known, its includes. */
  async search(pools: Pools, req: SearchRequest, x: Execution, state: CursorState | undefined, bases: Bases): Promise<PageResult> {
    const db = statements(pools[x.pool]);
    const warnings = [...req.warnings];
    const hints = await this.planner.plan(db, req);
    if (req.count === 0 || req.summary === 'count') return { matches: noEntries, includes: noEntries, total: await countAll(db, hints, req), warnings };
    // A first page's total is read beside the page when the write path keeps it (countedQuery).
    // Else the matches are estimated beside the page, and counted, within the budget on a pool
    // of their own, only once the page is full: a page that holds its matches says its total,
    // and a count started for it would burn a core for nothing. A lookup is not estimated. While
    // searches wait for a core, none is counted: the core goes to them (kept totals are still read).
    const counted = countedQuery(hints, req);
    const first = !state && x.totalBeside;
    const count = pools[x.countPool];
    const kept = first && counted ? read(db, counted) : undefined;
    const estimated = first && !counted && !this.saturated() ? this.countable(count, hints, req, x.countBudgetMs) : undefined;
    kept?.catch(() => {});
    estimated?.catch(() => {});
    const keys = req.include.length > 0 || req.revinclude.length > 0;
    const page = await this.matches(statements(pools[x.pool], 'matches'), hints, req, state, bases, keys);
    const hasNext = page.rows > req.count;
    let total: number | undefined = state?.total;
    if (total === undefined && req.total !== 'none') {
      if (!state && !hasNext) total = page.count;
      else if (req.total === 'accurate') total = await countAll(db, hints, req);
      else if (req.total === 'estimate') total = await this.planner.estimateMatches(db, hints, req);
      else if (!state) total = counted ? await (kept ?? read(db, counted)) : await this.countFullPage(count, hints, req, x.countBudgetMs, estimated);
    }
    let includes = noEntries;
    if (keys) {
      const statement = includeQuery(req, page, this.o.includeCap + 1);
      if (statement) includes = await rendered(statements(pools[x.includePool]), statement, bases, 'include', this.o.includeCap, false);
      if (includes.rows > this.o.includeCap) warnings.push(`more than ${this.o.includeCap} resources to include on this page: only the first ${this.o.includeCap} are given`);
    }
    return { matches: page, includes, total, next: hasNext ? { ...nextStart(req, page.last!), rank: page.rank } : undefined, warnings };
  }

  /**
   * The planner's estimate of a first page's matches when a count could read them within
   * TOTAL_BUDGET_MS, else undefined. A set estimated far larger than any count could read in the
   * budget is not counted at all: its total would be omitted anyway, and the count would take the
   * whole budget from the machine.
   */
  private async countable(count: Sql, hints: PlanHints, req: SearchRequest, budget: number): Promise<number | undefined> {
    if (budget <= 0) return undefined;
    const estimated = await within(this.planner.estimateMatches(statements(count), hints, req), budget, () => undefined);
    return estimated !== undefined && estimated <= budget * COUNTED_ROWS_PER_MS ? estimated : undefined;
  }

  /** The count behind a full first page, within TOTAL_BUDGET_MS, when its estimate (made beside the page, or now) says a count can finish. */
  private async countFullPage(count: Sql, hints: PlanHints, req: SearchRequest, budget: number, estimated?: Promise<number | undefined>): Promise<number | undefined> {
    if (this.saturated()) return undefined;
    if ((await (estimated ?? this.countable(count, hints, req, budget))) === undefined) return undefined;
    return countWithin(count, hints, req, budget);
  }

  /** A page's entries from its rows: subsetted here, or written by the database; `extension`: the rows have one. */
  private page(db: Run, req: SearchRequest, rows: Statement, bases: Bases, keys: boolean, shown: number, extension: boolean): Promise<Entries> {
    return subsetting(req) ? subsetted(db, req, rows, bases, shown) : rendered(db, rows, bases, 'match', shown, keys, extension);
  }

  private saturated(): boolean {
    return this.o.saturated?.() === true;
  }

  /**
   * The page of matches after the cursor. A sorted page is read from its phase (src/fhir/sort.ts):
   * phase 1 first, then, when phase 1 ends within the page, the start of phase 2. A ranked page is
   * read the same way from its rank phase on (`rank`: the phase of its last entry).
   */
  private async matches(
    db: Run,
    hints: PlanHints,
    req: SearchRequest,
    state: CursorState | undefined,
    bases: Bases,
    keys: boolean,
  ): Promise<Entries & { rank?: RankPhase }> {
    if (measureOrdered(req)) {
      const cursor = state?.measure === undefined ? undefined : { measure: state.measure, rid: state.after };
      return this.page(db, req, measuredPageQuery(hints, req, cursor, req.count + 1), bases, keys, req.count, true);
    }
    // Entries of a measured search carry the measure in any order.
    const extension = measuredBy(req) !== undefined;
    const page = (rows: Statement, shown = req.count) => this.page(db, req, extension ? withMeasure(req, rows) : rows, bases, keys, shown, extension);
    if (ranked(req)) {
      const from = state?.rank ?? 0;
      let out = noEntries;
      let rank: RankPhase = from;
      for (const phase of RANK_PHASES.filter((p) => p >= from)) {
        const room = req.count - out.count;
        const part = await page(pageQuery(hints, rankPhase(req, phase), phase === from ? state?.after : undefined, room + 1), room);
        if (part.count > 0) rank = phase;
        out = concatEntries(out, part);
        if (out.rows > req.count) break;
      }
      return { ...out, rank };
    }
    if (req.sort.length === 0) return page(pageQuery(hints, req, state?.after, req.count + 1));
    const cursor = state?.sort ? { ...state.sort, rid: state.after } : undefined;
    let first = noEntries;
    if (cursor?.phase !== 2) {
      first = await page(sortedPageQuery(hints, req, 1, cursor, req.count + 1));
      if (first.rows > req.count || !hasPhase2(req)) return first;
    }
    const rest = sortedPageQuery(hints, req, 2, cursor?.phase === 2 ? cursor : undefined, req.count + 1 - first.rows);
    return concatEntries(first, await page(rest, req.count - first.count));
  }
}

/**
 * Every statement of a search goes through here (the planner's too: it is handed the Run), on the
 * pool the search's execution names; only `countWithin` keeps the driver's query, to take it out of
 * the pool's queue. A statement of the page's matches cancelled by its statement timeout is a
 * SearchTimedOut; any other failure is the driver's own (src/db-errors.ts).
 */
export function statements(db: Sql, step: 'matches' | 'other' = 'other'): Run {
  const run = runOn(db);
  if (step === 'other') return run;
  return async (s, opts) => {
    try {
      return await run(s, opts);
    } catch (err) {
      throw isTimeout(err) ? new SearchTimedOut({ cause: err }) : err;
    }
  };
}

/** `rows` (rid, type, id, content, ord, key) written as entries by the database. */
async function rendered(db: Run, rows: Statement, bases: Bases, mode: 'match' | 'include', shown: number, keys: boolean, extension = false): Promise<Entries> {
  const [row] = await db<(Buffer | null)[][]>(renderStatement(rows, { bases, mode, shown, keys, extension }), { raw: true });
  return renderedEntries(row, shown);
}

/** `rows` read as they are and written as subsetted entries here. */
async function subsetted(db: Run, req: SearchRequest, rows: Statement, bases: Bases, shown: number): Promise<Entries> {
  return subsettedEntries(req, await db<Buffer[][]>(rows, { raw: true }), bases, shown);
}

/** Where the page after the row whose `key` column is `last` starts: a rid, or a measured or sorted row's JSON key. */
function nextStart(req: SearchRequest, last: string): Pick<CursorState, 'after' | 'sort' | 'measure'> {
  if (measureOrdered(req)) {
    const [measure, after] = JSON.parse(last) as [string, string];
    return { after, measure };
  }
  if (req.sort.length === 0) return { after: last };
  const [phase, ...rest] = JSON.parse(last) as [1 | 2, ...string[]];
  return { after: rest.at(-1)!, sort: { phase, keys: rest.slice(0, -1) } };
}

/** The number of matches: read when the write path keeps it, else counted however long it takes. */
export async function countAll(db: Run, hints: PlanHints, req: SearchRequest): Promise<number> {
  return read(db, countedQuery(hints, req) ?? countQuery(hints, req));
}

/** A count statement's one number. */
const read = async (db: Run, statement: Statement): Promise<number> => Number((await db<{ count: string }[]>(statement))[0].count);

/**
 * The number of matches, or undefined when it is not known within `budgetMs` of asking, waiting
 * for a connection included (`db`: the count pool, whose statement timeout is the same budget).
 */
export async function countWithin(db: Sql, hints: PlanHints, req: SearchRequest, budgetMs: number): Promise<number | undefined> {
  if (budgetMs <= 0) return undefined;
  const count = query<{ count: string }[]>(db, countQuery(hints, req));
  try {
    const rows = await within(count, budgetMs, () => {
      // Still in the pool's queue (no connection yet, postgres.js's `state`): taken out, it never
      // starts. Handed to a connection, it is left to the pool's statement timeout: cancelling a
      // query pipelined behind another makes postgres.js skip it while its answer still arrives,
      // and the connection's next queries read the wrong rows.
      if (!(count as unknown as { state?: unknown }).state) Promise.resolve(count.cancel() as unknown).catch(() => {});
      return undefined;
    });
    return rows === undefined ? undefined : Number(rows[0].count);
  } catch (err) {
    if (isTimeout(err)) return undefined;
    throw err;
  }
}
