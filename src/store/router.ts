import type { Pools } from '../db.ts';
import { CursorCodec, type CursorState } from '../fhir/cursor.ts';
import type { Bases, Entries } from '../fhir/entries.ts';
import type { SearchRequest } from '../fhir/search-request.ts';
import { stmt } from '../fhir/statement.ts';
import { within } from '../timeout.ts';
import { DeadlineExceeded } from './errors.ts';
import type { Execution, ExecutionPolicy } from './execution.ts';
import { Lane } from './lane.ts';
import { Planner } from './planner.ts';
import { lookupCode, readResource } from './read.ts';
import { formatLsn, parseLsn, type ReplicaSet } from './replicas.ts';
import { SearchRunner, statements } from './runner.ts';

/**
 * The router: a search's execution (src/store/execution.ts) carried out. It decodes the cursor,
 * admits the search to its lane, chooses the database (the primary, or a replica that has replayed
 * the cursor's position), bounds the whole by the deadline, hands the statements to the runner
 * (src/store/runner.ts) and encodes the next cursor.
 */
export interface SearchResult {
  matches: Entries;
  includes: Entries;
  total?: number;
  /** cursor of the next page, when there is one. */
  next?: string;
  warnings: string[];
}

export interface RouterOptions {
  /** the primary's pools (DATABASE_URL). */
  pools: Pools;
  /** hot standbys (DATABASE_READ_URL): searches and reads run on them, the primary as a fallback. */
  replicas?: ReplicaSet;
  /** HMAC key of paging cursors; the same on every instance (random when unset). */
  cursorSecret?: string;
  includeCap: number;
  /** lane widths, deadline and count budget (src/store/execution.ts). */
  policy: ExecutionPolicy;
}

export class SearchRouter {
  readonly pools: Pools;
  readonly replicas?: ReplicaSet;
  readonly policy: ExecutionPolicy;
  readonly planner = new Planner();
  readonly runner: SearchRunner;
  readonly cursors: CursorCodec;
  /**
   * The lanes of the searches that are not lookups, one per class, each as wide as the machine has
   * cores: PostgreSQL then runs as many of them at once as it has cores to run them on, and a
   * lookup, which needs a fraction of a millisecond, finds a core instead of queueing behind a
   * crowd of backends.
   */
  readonly lanes: { page: Lane; heavy: Lane };

  constructor(o: RouterOptions) {
    this.pools = o.pools;
    this.replicas = o.replicas;
    this.policy = o.policy;
    this.cursors = new CursorCodec(o.cursorSecret);
    this.lanes = { page: new Lane(o.policy.laneWidth), heavy: new Lane(o.policy.laneWidth) };
    const saturated = () => this.lanes.page.load.waiting + this.lanes.heavy.load.waiting > 0;
    this.runner = new SearchRunner(this.planner, { includeCap: o.includeCap, saturated });
  }

  /** A search, run as `x` says (src/store/execution.ts decideExecution); `bases` say where each type is read (fullUrls). */
  search(req: SearchRequest, x: Execution, bases: Bases): Promise<SearchResult> {
    const state = req.cursor === undefined ? undefined : this.cursors.decode(req, req.cursor);
    const run = () => this.deadline(this.routed(req, x, state, bases), x.deadlineMs);
    return x.lane === undefined ? run() : this.lanes[x.lane].admit(run);
  }

  /** The read interaction: the stored JSON text of one resource, or undefined. */
  read(type: string, id: string): Promise<string | undefined> {
    return this.readOn((pools) => readResource(pools.sql, type, id));
  }

  /** A code's label (CodeSystem/$lookup), read like a resource. */
  lookup(system: string, code: string): Promise<{ system: boolean; display?: string }> {
    return this.readOn((pools) => lookupCode(pools.sql, system, code));
  }

  /** A read on a replica, or on the primary, within the deadline. */
  private readOn<T>(read: (pools: Pools) => Promise<T>): Promise<T> {
    return this.deadline(this.replicas ? this.replicas.read(read) : read(this.pools), this.policy.deadlineMs);
  }

  /**
   * The stored resources of each type, as the planner's statistics estimate them (GET /). An empty
   * table is said to be empty: never analyzed, PostgreSQL would guess a few rows of each.
   */
  async typeEstimates(types: readonly string[]): Promise<Record<string, number>> {
    const db = statements(this.pools.generic);
    const estimate = async () => {
      const [{ any }] = await db<{ any: boolean }[]>(stmt`select exists (select 1 from resource) as any`);
      return Promise.all(types.map((t) => (any ? this.planner.typeRows(db, t) : 0)));
    };
    const rows = await this.deadline(estimate(), this.policy.deadlineMs);
    return Object.fromEntries(types.map((t, i) => [t, rows[i]]));
  }

  /** A search on the primary, or on the replicas: a next page on one that has replayed its cursor's position. */
  private async routed(req: SearchRequest, x: Execution, state: CursorState | undefined, bases: Bases): Promise<SearchResult> {
    const on = async (pools: Pools): Promise<SearchResult> => {
      const page = await this.runner.search(pools, req, x, state, bases);
      const lsn = page.next && this.replicas ? await this.positionAfter(pools, state) : undefined;
      const total = req.total === 'estimate' ? undefined : page.total;
      const next = page.next ? this.cursors.encode(req, { ...page.next, total, lsn }) : undefined;
      return { matches: page.matches, includes: page.includes, total: page.total, next, warnings: page.warnings };
    };
    if (!this.replicas || !x.replica) return on(this.pools);
    return this.replicas.read(on, state?.lsn === undefined ? undefined : parseLsn(state.lsn));
  }

  /** The position a next page must be read at, at least: the cursor's, or where `pools` is now. */
  private async positionAfter(pools: Pools, state: CursorState | undefined): Promise<string> {
    const now = await this.replicas!.position(statements(pools.sql));
    const before = state?.lsn === undefined ? 0n : parseLsn(state.lsn);
    return formatLsn(now > before ? now : before);
  }

  /**
   * A search's statements each end within the statement timeout, and a silent connection is closed
   * (src/db-socket.ts); this is the net below both: past the deadline, the answer is a 503 whatever
   * the driver still waits for, a DeadlineExceeded.
   */
  private deadline<T>(work: Promise<T>, ms: number): Promise<T> {
    return within(work, ms, () => {
      throw new DeadlineExceeded(ms);
    });
  }
}
