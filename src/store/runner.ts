import type { Pools, Sql } from '../db.ts';
import { countedQuery, countQuery, includeQuery, pageQuery, RANK_PHASES, ranked, rankPhase, type RankPhase } from '../fhir/compile.ts';
import type { CursorState } from '../fhir/cursor.ts';
import { concatEntries, noEntries, renderedEntries, renderStatement, subsettedEntries, subsetting, type Bases, type Entries } from '../fhir/entries.ts';
import { FhirError } from '../fhir/outcome.ts';
import type { PlanHints, SearchRequest } from '../fhir/search-request.ts';
import { hasPhase2, sortedPageQuery } from '../fhir/sort.ts';
import type { Statement } from '../fhir/statement.ts';
import { within } from '../timeout.ts';
import { classify, planOnce, type SearchClass } from './classify.ts';
import { Planner } from './planner.ts';
import { query } from './query.ts';

/**
 * The runner: one search's statements on one database — plan (src/store/planner.ts), compile
 * (src/fhir/compile.ts, sort.ts), then the page, the count behind `total` and the included
 * resources, in that order. Where and when a search runs (lanes, replicas, the deadline, cursors)
 * is the router's (src/store/router.ts).
 */
export interface PageResult {
  matches: Entries;
  includes: Entries;
  total?: number;
  /** where the next page starts, when there is one. */
  next?: Pick<CursorState, 'after' | 'sort' | 'rank'>;
  warnings: string[];
}

export interface RunnerOptions {
  /** included resources per page at most (INCLUDE_CAP). */
  includeCap: number;
  /** time a first page's count may take (TOTAL_BUDGET_MS). */
  totalBudgetMs: number;
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

  /**
   * The pool a search's statements run on: a heavy search's on the pool of heavy searches, so that
   * they never wait in line in front of light ones on the connections those pipeline on; a search
   * whose plans cannot depend on its values on the pool planned once; the others on the pool
   * planned for their values.
   */
  poolOf(req: SearchRequest, pools: Pools, cls: SearchClass = classify(req)): Sql {
    if (cls === 'heavy') return pools.heavy;
    return planOnce(req) && req.sort.length === 0 ? pools.generic : pools.sql;
  }

  /** The page after `state` (the first without it), its total when known, its includes. */
  async search(pools: Pools, req: SearchRequest, state: CursorState | undefined, bases: Bases): Promise<PageResult> {
    const cls = classify(req);
    const db = this.poolOf(req, pools, cls);
    const warnings = [...req.warnings];
    const hints = await this.planner.plan(db, req);
    if (req.count === 0 || req.summary === 'count') return { matches: noEntries, includes: noEntries, total: await countAll(db, hints, req), warnings };
    // A first page's total is read beside the page when the write path keeps it (countedQuery).
    // Else the matches are estimated beside the page, and counted, within the budget on a pool
    // of their own, only once the page is full: a page that holds its matches says its total,
    // and a count started for it would burn a core for nothing. A lookup is not estimated. While
    // searches wait for a core, none is counted: the core goes to them (kept totals are still read).
    const counted = countedQuery(hints, req);
    const first = !state && req.total === undefined && cls !== 'lookup';
    const kept = first && counted ? read(db, counted) : undefined;
    const estimated = first && !counted && !this.saturated() ? this.countable(pools.count, hints, req) : undefined;
    kept?.catch(() => {});
    estimated?.catch(() => {});
    const keys = req.include.length > 0 || req.revinclude.length > 0;
    let page: Entries & { rank?: RankPhase };
    try {
      page = await this.matches(db, hints, req, state, bases, keys);
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
      else if (!state) total = counted ? await (kept ?? read(db, counted)) : await this.countFullPage(pools.count, hints, req, estimated);
    }
    let includes = noEntries;
    if (keys) {
      // On the search's own pool, or the pool planned for its values beside a lookup's: the lookups'
      // connections run nothing that could keep them waiting.
      const statement = includeQuery(req, page, this.o.includeCap + 1);
      if (statement) includes = await rendered(db === pools.generic ? pools.sql : db, statement, bases, 'include', this.o.includeCap, false);
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
  private async countable(count: Sql, hints: PlanHints, req: SearchRequest): Promise<number | undefined> {
    const budget = this.o.totalBudgetMs;
    if (budget <= 0) return undefined;
    const estimated = await within(this.planner.estimateMatches(count, hints, req), budget, () => undefined);
    return estimated !== undefined && estimated <= budget * COUNTED_ROWS_PER_MS ? estimated : undefined;
  }

  /** The count behind a full first page, within TOTAL_BUDGET_MS, when its estimate (made beside the page, or now) says a count can finish. */
  private async countFullPage(count: Sql, hints: PlanHints, req: SearchRequest, estimated?: Promise<number | undefined>): Promise<number | undefined> {
    if (this.saturated()) return undefined;
    if ((await (estimated ?? this.countable(count, hints, req))) === undefined) return undefined;
    return countWithin(count, hints, req, this.o.totalBudgetMs);
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
    db: Sql,
    hints: PlanHints,
    req: SearchRequest,
    state: CursorState | undefined,
    bases: Bases,
    keys: boolean,
  ): Promise<Entries & { rank?: RankPhase }> {
    const page = (rows: Statement, shown = req.count) =>
      subsetting(req) ? subsetted(db, req, rows, bases, shown) : rendered(db, rows, bases, 'match', shown, keys);
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

/** `rows` (rid, type, id, content, ord, key) written as entries by the database. */
async function rendered(db: Sql, rows: Statement, bases: Bases, mode: 'match' | 'include', shown: number, keys: boolean): Promise<Entries> {
  const [row] = (await query(db, renderStatement(rows, { bases, mode, shown, keys }), { raw: true })) as unknown as (Buffer | null)[][];
  return renderedEntries(row, shown);
}

/** `rows` read as they are and written as subsetted entries here. */
async function subsetted(db: Sql, req: SearchRequest, rows: Statement, bases: Bases, shown: number): Promise<Entries> {
  return subsettedEntries(req, (await query(db, rows, { raw: true })) as unknown as Buffer[][], bases, shown);
}

/** Where the page after the row whose `key` column is `last` starts: a rid, or a sorted row's JSON key. */
function nextStart(req: SearchRequest, last: string): Pick<CursorState, 'after' | 'sort'> {
  if (req.sort.length === 0) return { after: last };
  const [phase, ...rest] = JSON.parse(last) as [1 | 2, ...string[]];
  return { after: rest.at(-1)!, sort: { phase, keys: rest.slice(0, -1) } };
}

/** The number of matches: read when the write path keeps it, else counted however long it takes. */
export async function countAll(db: Sql, hints: PlanHints, req: SearchRequest): Promise<number> {
  return read(db, countedQuery(hints, req) ?? countQuery(hints, req));
}

/** A count statement's one number. */
const read = async (db: Sql, statement: Statement): Promise<number> => Number((await query<{ count: string }[]>(db, statement))[0].count);

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
