import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbedded, type EmbeddedHandle, type Profile } from './embedded.ts';
import { pgTimestamp } from './fhir/date.ts';

export type Sql = postgres.Sql<{}>;
export type Db = Sql | postgres.TransactionSql<{}>;

export const SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'sql');

export interface Database {
  /** statements planned for their values at every execution (the default). */
  sql: Sql;
  /**
   * statements whose plan does not depend on their values (compile.ts `valueIndependent`: lookups
   * by identifier, id or reference, includes), planned once per connection and statement.
   */
  generic: Sql;
  /**
   * statements of heavy searches (pages of more than 100, :contains, exact totals) and the counts of
   * first pages, planned for their values: as many connections as the lane of heavy searches admits
   * at once, so that they never queue in front of light searches on a connection those pipeline on.
   */
  heavy: Sql;
  url: string;
  /** true when the database is the embedded default (demo data may be loaded into it). */
  embedded: boolean;
  close(): Promise<void>;
}

export interface ConnectOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** embedded only: keep the cluster on disk (server, CLI) or throw it away (tests). */
  persistent?: boolean;
  profile?: Profile;
  /** connections of the pool planned every time (the loader needs 4: see src/load/loader.ts). */
  max?: number;
  /** connections of the generic pool (default: `max`). */
  genericMax?: number;
  /** connections of the pool of heavy searches (default 1). */
  heavyMax?: number;
  statementTimeoutMs?: number;
  log?: (msg: string) => void;
}

/**
 * Sockets with TCP_NODELAY: postgres.js leaves Nagle's algorithm on, so a COPY (data, then CopyDone
 * in a second small write) waited for the peer's delayed ACK — 40 ms per COPY statement.
 */
function noDelaySocket(options: { host: string[]; port: number[] }): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: options.host[0], port: options.port[0], noDelay: true });
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

export interface ConnectUrlOptions {
  max?: number;
  statementTimeoutMs?: number;
  /**
   * 'custom' (default): every execution is planned for its values — a rare code and a common one
   * get different plans, which a generic plan cannot do (docs/postgres-notes; prefix searches are
   * also written as ranges so that even a generic plan could never scan). 'generic': a prepared
   * statement is planned once per connection, for statements whose best plan is the same whatever
   * the values (Database.generic).
   */
  plans?: 'custom' | 'generic';
}

/**
 * postgres.js's handler of dates, but with a year past 9999 written as PostgreSQL reads it
 * (pgTimestamp): toISOString's `+010000-…` was refused, and a search whose range ends after 9999
 * (`_lastUpdated=9999`) answered 500. A Date stays a parameter typed timestamptz, a constant to the
 * planner (a text cast to timestamptz would not be: the cast is only stable).
 */
const TIMESTAMPTZ = {
  to: 1184,
  from: [1082, 1114, 1184],
  serialize: (x: Date | string | number) => pgTimestamp((x instanceof Date ? x : new Date(x)).getTime()),
  parse: (x: string) => new Date(x),
};

export function connectUrl(url: string, opts: ConnectUrlOptions = {}): Sql {
  const u = new URL(url);
  const tcp = !u.searchParams.has('host') && u.hostname !== '';
  return postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    ...(tcp ? { socket: noDelaySocket as never } : {}),
    types: { date: TIMESTAMPTZ } as never,
    connection: {
      plan_cache_mode: opts.plans === 'generic' ? 'force_generic_plan' : 'force_custom_plan',
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    },
  });
}

/**
 * The pools of a database: `max` connections for statements planned every time, `genericMax`
 * (default: as many) for value-independent ones, planned once, and `heavyMax` (default 1) for heavy
 * searches. postgres.js connects lazily: a pool a process does not use (the loader's generic and
 * heavy ones) opens no connection.
 */
export interface Pools {
  sql: Sql;
  generic: Sql;
  heavy: Sql;
}

export function connectPools(url: string, opts: Omit<ConnectUrlOptions, 'plans'> & { genericMax?: number; heavyMax?: number } = {}): Pools {
  const { genericMax, heavyMax, ...rest } = opts;
  return {
    sql: connectUrl(url, { ...rest, plans: 'custom' }),
    generic: connectUrl(url, { ...rest, max: genericMax ?? rest.max, plans: 'generic' }),
    heavy: connectUrl(url, { ...rest, max: heavyMax ?? 1, plans: 'custom' }),
  };
}

/** Closes the pools (their queries finish first, within `timeout` seconds). */
export async function endPools(pools: Pools, timeout = 5): Promise<void> {
  await Promise.all([pools.sql.end({ timeout }), pools.generic.end({ timeout }), pools.heavy.end({ timeout })]);
}

/** DB_POOL_SIZE shared by the two pools of the server: half each (the odd one to the custom plans). */
export const splitPool = (size: number) => ({ max: size - Math.floor(size / 2), genericMax: Math.max(1, Math.floor(size / 2)) });

/** Connects to DATABASE_URL, or starts (or joins) the embedded PostgreSQL; then migrates. */
export async function openDatabase(opts: ConnectOptions): Promise<Database> {
  let handle: EmbeddedHandle | undefined;
  let url = opts.databaseUrl;
  if (!url) {
    handle = await startEmbedded({
      dataDir: opts.dataDir,
      persistent: opts.persistent ?? true,
      profile: opts.profile ?? 'server',
      log: opts.log,
    });
    url = handle.url;
  }
  const pools = connectPools(url, { max: opts.max, genericMax: opts.genericMax, heavyMax: opts.heavyMax, statementTimeoutMs: opts.statementTimeoutMs });
  try {
    await migrate(pools.sql);
  } catch (err) {
    await endPools(pools, 1);
    await handle?.stop();
    throw err;
  }
  return {
    ...pools,
    url,
    embedded: handle !== undefined,
    close: async () => {
      await endPools(pools);
      await handle?.stop();
    },
  };
}

export class MigrationError extends Error {}

interface Migration {
  version: number;
  name: string;
  file: string;
}

export async function listMigrations(dir = SQL_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return files.map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), file: path.join(dir, f) }));
}

/**
 * Applies the missing migrations of sql/ in one transaction (all or nothing), serialised by an
 * advisory lock so that several processes starting together do not race. A database whose schema is
 * newer than this code is refused.
 */
export async function migrate(sql: Sql, dir = SQL_DIR): Promise<{ applied: number[] }> {
  const migrations = await listMigrations(dir);
  const latest = migrations.at(-1)?.version ?? 0;
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(724011)`;
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`;
    const [{ max }] = await tx<{ max: number | null }[]>`select max(version) as max from schema_migrations`;
    const current = max ?? 0;
    if (current > latest) {
      throw new MigrationError(
        `the database schema is at version ${current}, newer than this code knows (${latest}); upgrade the server instead of running an older one against it`,
      );
    }
    for (const m of migrations) {
      if (m.version <= current) continue;
      await tx.unsafe(await readFile(m.file, 'utf8'));
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
  });
  return { applied };
}
