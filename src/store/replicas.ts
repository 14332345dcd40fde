import { connectPools, connectUrl, endPools, type PoolOptions, type Pools, type Sql } from '../db.ts';
import { classifyDbError } from '../db-errors.ts';
import { flatten, stmt } from '../fhir/statement.ts';
import { within } from '../timeout.ts';
import type { Run } from './query.ts';

/**
 * Reads on hot standbys (DATABASE_READ_URL): a Database's pools per replica, and a monitor that
 * keeps the replicas that answer and keep up in rotation. A read goes to the next replica in
 * rotation, then to the primary, then to the replicas out of rotation: a request fails only when no
 * database answers it. Writes never come here (the loader, `keys`, migrations use DATABASE_URL).
 */
export type DatabaseState = 'up' | 'down' | 'lagging';

export interface Member {
  /** host:port/database, never the credentials. */
  readonly name: string;
  readonly pools: Pools;
  /** one connection of its own for the health checks, so that they never queue behind a search. */
  readonly probe: Sql;
  state: DatabaseState;
  /** seconds behind the primary at the last check; null when it cannot be told (primary away). */
  lagS: number | null;
  /** the WAL position replayed at the last check. */
  lsn?: bigint;
  /** why it is down. */
  reason?: string;
}

export interface DatabaseStatus {
  name: string;
  role: 'primary' | 'replica';
  state: DatabaseState;
  lagS: number | null;
  reason?: string;
}

export interface ReplicaSetOptions {
  /** seconds a replica may lag behind the primary and stay in rotation (MAX_REPLICA_LAG_S). */
  maxLagS: number;
  /** how often the databases are checked. */
  checkMs?: number;
  /** one line on every change of a database's state. */
  log?: (msg: string) => void;
}

/** A PostgreSQL WAL position ('16/B374D848') as a number; positions compare as numbers. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

export const formatLsn = (lsn: bigint): string => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;

/** A database's URL without its credentials. */
export function databaseName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/** The position a database has: replayed on a standby, written on a primary. */
const POSITION = stmt`(case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_insert_lsn() end)::text`;
/** The position alone, as a statement. */
const AT = stmt`select ${POSITION} as lsn`;

/** How long a health check may take before the database counts as down. */
const CHECK_DEADLINE_MS = 2000;
/** The checks' own connection: a statement past the deadline is cancelled, a silent connection closed. */
const PROBE = { max: 1, statementTimeoutMs: CHECK_DEADLINE_MS };
/** The primary's positions remembered to tell a replica's lag (see `lagOf`). */
const SAMPLES_KEPT = 600;

/** A health check's answer, or an error past CHECK_DEADLINE_MS. */
const checked = <T>(work: Promise<T>): Promise<T> =>
  within(work, CHECK_DEADLINE_MS, () => {
    throw Object.assign(new Error(`no answer within ${CHECK_DEADLINE_MS} ms`), { code: 'timeout' });
  });

/**
 * Transient failures of one statement, not of its database: a query cancelled by a conflict with
 * recovery (40001 on a standby), a deadlock. The read moves on; the replica stays in rotation.
 */
const STATEMENT_ONLY = new Set(['40001', '40P01']);

const reasonOf = (err: unknown) => {
  const e = err as { code?: string; message?: string };
  return e?.code ?? e?.message ?? 'error';
};

export class ReplicaSet {
  readonly members: Member[];
  readonly primary: { name: string; pools: Pools; probe: Sql; state: DatabaseState; reason?: string };
  readonly maxLagS: number;
  private readonly checkMs: number;
  private readonly log: (msg: string) => void;
  /** the primary's written positions and when they were read, oldest first. */
  private samples: { lsn: bigint; at: number }[] = [];
  private turn = 0;
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;

  private constructor(primary: { url: string; pools: Pools }, replicas: { url: string; pools: Pools }[], opts: ReplicaSetOptions) {
    this.maxLagS = opts.maxLagS;
    this.checkMs = opts.checkMs ?? 1000;
    this.log = opts.log ?? (() => {});
    this.primary = { name: databaseName(primary.url), pools: primary.pools, probe: connectUrl(primary.url, PROBE), state: 'up' };
    this.members = replicas.map((r) => ({ name: databaseName(r.url), pools: r.pools, probe: connectUrl(r.url, PROBE), state: 'up', lagS: null }));
  }

  /**
   * The replicas at `urls`, each with pools of the primary's sizes (`opts`), beside the primary's
   * pools. Call `start` to check them now and then every `checkMs`.
   */
  static connect(primary: { url: string; pools: Pools }, urls: readonly string[], pools: PoolOptions, opts: ReplicaSetOptions): ReplicaSet {
    return new ReplicaSet(primary, urls.map((url) => ({ url, pools: connectPools(url, pools) })), opts);
  }

  /** Checks every database now, then in the background. */
  async start(): Promise<void> {
    await this.check();
    this.timer ??= setInterval(() => void this.check(), this.checkMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await Promise.all([
      this.primary.probe.end({ timeout: 1 }),
      ...this.members.flatMap((m) => [endPools(m.pools), m.probe.end({ timeout: 1 })]),
    ]);
  }

  /** One round of checks (a round still running is joined, not doubled). */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    // The primary's position first: a replica that has replayed it is not behind, however long
    // ago the last transaction was (an idle primary).
    let primaryLsn: bigint | undefined;
    try {
      const [{ lsn }] = await checked(this.primary.probe<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`);
      primaryLsn = parseLsn(lsn);
      const at = Date.now();
      if (this.samples.at(-1)?.lsn !== primaryLsn) this.samples.push({ lsn: primaryLsn, at });
      else this.samples[this.samples.length - 1] = { lsn: primaryLsn, at };
      if (this.samples.length > SAMPLES_KEPT) this.samples.shift();
      this.setPrimary('up');
    } catch (err) {
      this.setPrimary('down', reasonOf(err));
    }
    await Promise.all(this.members.map((m) => this.checkMember(m, primaryLsn)));
  }

  private async checkMember(m: Member, primaryLsn: bigint | undefined): Promise<void> {
    try {
      const [row] = await checked(
        m.probe.unsafe<{ lsn: string | null; age: number | null }[]>(
          flatten(stmt`select ${POSITION} as lsn, extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as age`).text,
        ),
      );
      if (row.lsn !== null) m.lsn = parseLsn(row.lsn);
      m.lagS = this.lagOf(m.lsn, row.age, primaryLsn);
      if (m.lagS !== null && m.lagS > this.maxLagS) this.set(m, 'lagging', `${m.lagS.toFixed(1)} s behind the primary`);
      else this.set(m, 'up');
    } catch (err) {
      this.set(m, 'down', reasonOf(err));
    }
  }

  /**
   * Seconds a replica at `lsn` is behind: none when it has replayed the primary's position;
   * otherwise the least of two bounds, the age of its last replayed transaction and the time since
   * the primary was last seen at a position it has replayed. Unknown while the primary is away.
   */
  private lagOf(lsn: bigint | undefined, age: number | null, primaryLsn: bigint | undefined): number | null {
    if (primaryLsn === undefined) return null;
    if (lsn !== undefined && lsn >= primaryLsn) return 0;
    const now = Date.now();
    const seen = lsn === undefined ? undefined : this.samples.findLast((s) => s.lsn <= lsn);
    const bounds = [age, seen ? (now - seen.at) / 1000 : null].filter((b): b is number => b !== null);
    if (bounds.length > 0) return Math.max(0, Math.min(...bounds));
    // Behind every position remembered: at least as long as they span.
    return (now - (this.samples[0]?.at ?? now)) / 1000;
  }

  private set(m: Member, state: DatabaseState, reason?: string): void {
    if (m.state !== state) this.log(`replica ${m.name}: ${m.state} → ${state}${reason ? ` (${reason})` : ''}`);
    m.state = state;
    m.reason = reason;
  }

  private setPrimary(state: DatabaseState, reason?: string): void {
    if (this.primary.state !== state) this.log(`primary ${this.primary.name}: ${this.primary.state} → ${state}${reason ? ` (${reason})` : ''}`);
    this.primary.state = state;
    this.primary.reason = reason;
  }

  /**
   * The databases to try a read on, in order. Replicas in rotation come first, taken in turn; with
   * `minLsn` (a cursor's position), only those that have replayed it, asked afresh when the last
   * check is older than the cursor. Then the primary, then the others (a replica marked down may
   * be back before its next check).
   */
  async candidates(minLsn?: bigint): Promise<Pools[]> {
    const n = this.members.length;
    const start = n === 0 ? 0 : this.turn++ % n;
    const rotated = [...this.members.slice(start), ...this.members.slice(0, start)];
    const live = rotated.filter((m) => m.state === 'up');
    let first: Member[] = live;
    if (minLsn !== undefined) {
      first = live.filter((m) => m.lsn !== undefined && m.lsn >= minLsn);
      for (const m of live) {
        if (first.length > 0) break;
        if (await this.refreshPosition(m) >= minLsn) first = [m];
      }
    }
    return [...first.map((m) => m.pools), this.primary.pools, ...rotated.filter((m) => !first.includes(m)).map((m) => m.pools)];
  }

  private async refreshPosition(m: Member): Promise<bigint> {
    try {
      const [{ lsn }] = await checked(m.probe.unsafe<{ lsn: string }[]>(flatten(AT).text));
      m.lsn = parseLsn(lsn);
    } catch {
      // left to the background check
    }
    return m.lsn ?? 0n;
  }

  /**
   * A read on the first database of `candidates` that answers: a failure to reach a database
   * (db-errors.ts 'transient') takes that replica out of rotation (STATEMENT_ONLY: not) and the
   * read goes to the next; any other error is the read's own. Reads are idempotent, so trying
   * again is safe.
   */
  async read<T>(work: (pools: Pools) => Promise<T>, minLsn?: bigint): Promise<T> {
    let last: unknown;
    for (const pools of await this.candidates(minLsn)) {
      try {
        return await work(pools);
      } catch (err) {
        if (classifyDbError(err) !== 'transient') throw err;
        last = err;
        const m = this.members.find((x) => x.pools === pools);
        if (m && !STATEMENT_ONLY.has(reasonOf(err))) this.set(m, 'down', reasonOf(err));
      }
    }
    throw last;
  }

  /** The position the database of `run` is at now: what a page read on it has seen, at least. */
  async position(run: Run): Promise<bigint> {
    const [{ lsn }] = await run<{ lsn: string }[]>(AT);
    return parseLsn(lsn);
  }

  /** Every database's state, for /ready. */
  status(): DatabaseStatus[] {
    const p = this.primary;
    return [
      { name: p.name, role: 'primary', state: p.state, lagS: 0, ...(p.reason ? { reason: p.reason } : {}) },
      ...this.members.map((m) => ({
        name: m.name, role: 'replica' as const, state: m.state, lagS: m.lagS === null ? null : Math.round(m.lagS * 10) / 10, ...(m.reason ? { reason: m.reason } : {}),
      })),
    ];
  }
}
