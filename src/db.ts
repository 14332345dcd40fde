import postgres from 'postgres';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgSocket } from './db-socket.ts';
import { startEmbedded, type EmbeddedHandle, type Profile } from './embedded.ts';
import { pgTimestamp } from './fhir/date.ts';
import { normalize } from './fhir/normalize.ts';
import { SOUND_KEYS_VERSION, soundOf } from './fhir/phonetic.ts';
import { countedKind } from './fhir/types/index.ts';
import { registry } from './registry/index.ts';
import { shippedTerminology } from './terminology.ts';
import { within } from './timeout.ts';

export type Sql = postgres.Sql<{}>;
export type Db = Sql | postgres.TransactionSql<{}>;

export const SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'sql');

export interface Database {
  /** statements planned for their values at every execution (the default). */
  sql: Sql;
  /**
   * the pages of lookups (by identifier, id or reference: compile.ts `valueIndependent`), whose
   * plan does not depend on their values, planned once per connection and statement.
   */
  generic: Sql;
  /**
   * statements of heavy searches (pages of more than 100, :contains, exact totals), planned for
   * their values: as many connections as the lane of heavy searches admits at once, so that they
   * never queue in front of light searches on a connection those pipeline on.
   */
  heavy: Sql;
  /**
   * the counts behind a first page's `total`: connections whose statement timeout is the count's
   * budget, so that a count past it stops in the database too.
   */
  count: Sql;
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
  /** connections of the count pool (default: `heavyMax`) and its statement timeout (default: statementTimeoutMs). */
  countMax?: number;
  countTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** parallel workers of one statement (ConnectUrlOptions), on every pool. */
  parallelWorkers?: number;
  /** the embedded PostgreSQL's own log lines. */
  log?: (msg: string) => void;
  /** what the operator should know: a search pool that could not open its first connection. */
  warn?: (msg: string) => void;
}

/** How much longer than its statement timeout a connection may hear nothing before it is closed. */
export const SILENCE_MARGIN_MS = 5000;

export interface ConnectUrlOptions {
  max?: number;
  statementTimeoutMs?: number;
  /**
   * 'custom' (default): every execution is planned for its values — a rare code and a common one
   * get different plans, which a generic plan cannot do (prefix searches are also written as
   * ranges, so that even a generic plan could never scan). 'generic': a prepared
   * statement is planned once per connection, for statements whose best plan is the same whatever
   * the values (Database.generic).
   */
  plans?: 'custom' | 'generic';
  /** max_parallel_workers_per_gather of the connections; unset: the server's own setting. */
  parallelWorkers?: number;
}

/**
 * postgres.js's handler of dates, but with a year past 9999 written as PostgreSQL reads it
 * (pgTimestamp): PostgreSQL refuses toISOString's `+010000-…`, which the end of a range in 9999
 * (`_lastUpdated=9999`) needs. A Date stays a parameter typed timestamptz, a constant to the
 * planner (a text cast to timestamptz would not be: the cast is only stable).
 */
const TIMESTAMPTZ = {
  to: 1184,
  from: [1082, 1114, 1184],
  serialize: (x: Date | string | number) => pgTimestamp((x instanceof Date ? x : new Date(x)).getTime()),
  parse: (x: string) => new Date(x),
};

/**
 * Seconds before a connection tries again after a failed attempt, capped at half a second:
 * postgres.js's default grows past any restart's length, and a pool would stay away well after the
 * database is back.
 */
const reconnectBackoff = (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.01 * 2 ** retries, 0.5);

/** Seconds a connection attempt may take (postgres.js: 30) before it fails and is tried again. */
const CONNECT_TIMEOUT_S = 5;

/**
 * The Unix-domain socket a URL names, in libpq's forms: the directory as the `host` parameter
 * (`postgres://user@localhost/db?host=/var/run/postgresql`) or as a percent-encoded host
 * (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`); the socket file is `<dir>/.s.PGSQL.<port>`.
 * postgres.js reads neither (it sends `host` to the server as a setting), so the path is given to
 * it as an option and the parameter taken out.
 */
export function unixSocket(url: string): { path: string; url: string } | undefined {
  const u = new URL(url);
  const param = u.searchParams.get('host');
  const host = decodeURIComponent(u.hostname);
  const dir = param?.startsWith('/') ? param : host.startsWith('/') ? host : undefined;
  if (dir === undefined) return undefined;
  u.searchParams.delete('host');
  if (!param) u.hostname = 'localhost';
  return { path: `${dir.replace(/\/+$/, '')}/.s.PGSQL.${u.port || '5432'}`, url: u.toString() };
}

type CloseObserver = (pool: Sql) => void;
const closeObservers = new Set<CloseObserver>();

/**
 * Adds an observer of every connection that closes, by its pool (the metrics' count of them);
 * returns what removes it. The pool opens it again when a statement next needs it.
 */
export function observeConnectionCloses(observer: CloseObserver): () => void {
  closeObservers.add(observer);
  return () => void closeObservers.delete(observer);
}

export function connectUrl(url: string, opts: ConnectUrlOptions = {}): Sql {
  assertPatchedDriver();
  const socket = unixSocket(url);
  // Past its statement timeout and a margin, a server that has said nothing is gone (src/db-socket.ts).
  const silence = opts.statementTimeoutMs ? opts.statementTimeoutMs + SILENCE_MARGIN_MS : undefined;
  const pool: Sql = postgres(socket?.url ?? url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    backoff: reconnectBackoff,
    connect_timeout: CONNECT_TIMEOUT_S,
    // A local socket closes when its server goes: only TCP needs to watch for silence.
    ...(socket ? { path: socket.path } : { socket: ((o: Parameters<typeof pgSocket>[0]) => pgSocket(o, silence)) as never }),
    types: { date: TIMESTAMPTZ } as never,
    connection: {
      plan_cache_mode: opts.plans === 'generic' ? 'force_generic_plan' : 'force_custom_plan',
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
      // A string: postgres.js leaves out a setting whose value is falsy, 0 included.
      ...(opts.parallelWorkers !== undefined ? { max_parallel_workers_per_gather: String(opts.parallelWorkers) } : {}),
      // float8 as text is the shortest that reads back as the same double (PostgreSQL's default,
      // whatever the server's configuration says): a near search's cursor carries a distance so.
      extra_float_digits: '1',
    },
    // postgres.js 3.4.9 calls it for every connection that closes (an option its types do not list)
    ...({ onclose: () => { for (const observe of closeObservers) observe(pool); } } as {}),
  });
  return pool;
}

/**
 * The installed postgres.js must carry patches/postgres+3.4.9.patch (applied by `npm install`): each
 * hunk fixes a failure users meet (a result of another shape after a failed statement, a COPY that
 * hangs when refused or when its connection closes, a pool queue that grows for ever, a process
 * ended by a connection's failed first statement, a query left unanswered or a process ended when a
 * connection closes, a connection that stops reading after a COPY to stdout). Checked once, on the copy this process loads.
 */
const DRIVER_FIXES: [string, string, RegExp][] = [
  ['connection.js', 'the row counter reset after an error (porsager/postgres#1181)', /function ErrorResponse\(x\) \{\s*(?:\/\/[^\n]*\s*)*rows = 0/],
  ['connection.js', 'the end of a refused COPY (porsager/postgres#1173)', /copy\.serverDone = true/],
  ['connection.js', 'the end of a COPY whose connection closed', /final && \(final\(err\), final = null\)/],
  ['queue.js', 'the bounded queue of idle connections', /xs = xs\.slice\(index\)/],
  ['connection.js', 'the handled failure of the array types fetch (porsager/postgres#1192)', /fetch\.arrayTypes = true/],
  ['connection.js', 'the queries of a closed socket settled (porsager/postgres#1130, #1208)', /chunk = nextWriteTimer = null\s*socket\.removeListener/],
  ['index.js', 'a closed reservation left to the pool (porsager/postgres#1208)', /c\.queue === reserved && onopen\(c\)/],
  ['connection.js', 'a connection that reads on after a COPY to stdout (porsager/postgres#499)', /socket\.isPaused\(\) && socket\.resume\(\)/],
  ['connection.js', 'a reservation answered by the connection it was handed to (porsager/postgres#1195)', /initial\.reserve \? initial\.reserve\(connection\)/],
  ['index.js', 'reservations and transactions that end with their session (porsager/postgres#1195, #1186)', /c\.generation = \(c\.generation \|\| 0\) \+ 1/],
];
const DRIVER_VERSION = '3.4.9';
let driverChecked = false;

export function driverProblems(dir = fileURLToPath(new URL('.', import.meta.resolve('postgres')))): string[] {
  const problems: string[] = [];
  const pkg = path.join(dir, '..', 'package.json');
  const version = existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version : undefined;
  if (version !== DRIVER_VERSION) problems.push(`version ${version ?? 'unknown'} instead of ${DRIVER_VERSION}`);
  for (const [file, fix, marker] of DRIVER_FIXES) {
    const f = path.join(dir, file);
    if (!existsSync(f) || !marker.test(readFileSync(f, 'utf8'))) problems.push(`${file} lacks ${fix}`);
  }
  return problems;
}

function assertPatchedDriver(): void {
  if (driverChecked) return;
  const problems = driverProblems();
  if (problems.length > 0) {
    throw new Error(
      `the PostgreSQL driver (node_modules/postgres) is not the patched postgres.js ${DRIVER_VERSION} this server needs: ${problems.join('; ')}. ` +
        'Run `npm ci` (or `npx patch-package`) so that patches/postgres+3.4.9.patch is applied.',
    );
  }
  driverChecked = true;
}

/** How long /ready waits for each pool's `select 1`. */
export const PROBE_DEADLINE_MS = 1000;

/** 'ok', 'timeout' (no answer within the deadline) or the error code of a pool's `select 1`. */
export type PoolState = 'ok' | 'timeout' | (string & {});

/**
 * Runs `select 1` on every pool at once, each bounded by `deadlineMs`. A late probe is left to
 * finish on its own: postgres.js's cancel of a statement already sent opens a connection of its
 * own, whose failure during an outage would be an unhandled rejection.
 */
export async function probePools(pools: Pools, deadlineMs = PROBE_DEADLINE_MS): Promise<Record<keyof Pools, PoolState>> {
  const probe = async (sql: Sql): Promise<PoolState> => {
    try {
      return await within(sql`select 1`.then((): PoolState => 'ok'), deadlineMs, (): PoolState => 'timeout');
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return typeof code === 'string' ? code : 'error';
    }
  };
  const [sql, generic, heavy, count] = await Promise.all([probe(pools.sql), probe(pools.generic), probe(pools.heavy), probe(pools.count)]);
  return { sql, generic, heavy, count };
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
  count: Sql;
}

export type PoolOptions = Omit<ConnectUrlOptions, 'plans'> & Pick<ConnectOptions, 'genericMax' | 'heavyMax' | 'countMax' | 'countTimeoutMs'>;

export function connectPools(url: string, opts: PoolOptions = {}): Pools {
  const { genericMax, heavyMax, countMax, countTimeoutMs, ...rest } = opts;
  return {
    sql: connectUrl(url, { ...rest, plans: 'custom' }),
    generic: connectUrl(url, { ...rest, max: genericMax ?? rest.max, plans: 'generic' }),
    heavy: connectUrl(url, { ...rest, max: heavyMax ?? 1, plans: 'custom' }),
    count: connectUrl(url, { ...rest, max: countMax ?? heavyMax ?? 1, statementTimeoutMs: countTimeoutMs ?? rest.statementTimeoutMs, plans: 'custom' }),
  };
}

/** Closes the pools (their queries finish first, within `timeout` seconds). */
export async function endPools(pools: Pools, timeout = 5): Promise<void> {
  await Promise.all([pools.sql.end({ timeout }), pools.generic.end({ timeout }), pools.heavy.end({ timeout }), pools.count.end({ timeout })]);
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
  const pools = connectPools(url, {
    max: opts.max, genericMax: opts.genericMax, heavyMax: opts.heavyMax, countMax: opts.countMax, countTimeoutMs: opts.countTimeoutMs,
    statementTimeoutMs: opts.statementTimeoutMs, parallelWorkers: opts.parallelWorkers,
  });
  try {
    await migrate(pools.sql);
    await openConnections(pools, opts.warn);
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

/**
 * One connection of each search pool opened, so that a first search does not pay for it within its
 * budget. Best effort, once the database answered: on a cold one, the count pool's first statement
 * (postgres.js's fetch of array types) can outlast TOTAL_BUDGET_MS, and the pool then opens another
 * connection when a count next needs it. A pool that failed is named in a warning.
 */
export async function openConnections(pools: Pick<Pools, 'generic' | 'heavy' | 'count'>, warn?: (msg: string) => void): Promise<void> {
  // Named as /ready and the metrics name them.
  const { generic, heavy, count } = pools;
  await Promise.all(
    Object.entries({ generic, heavy, count }).map(([name, p]) =>
      p`select 1`.then(
        () => {},
        (err: Error) => warn?.(`the ${name} search pool did not open its first connection at start (${err.message}): it opens one when a search needs it`),
      ),
    ),
  );
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
    // A migration, or a rebuild of what the write path keeps, reads whole tables once per upgrade:
    // the pool's statement timeout (the server's, for searches) would stop it at every start.
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(724011)`;
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version));
    const current = Math.max(0, ...done);
    if (current > latest) {
      throw new MigrationError(
        `the database schema is at version ${current}, newer than this code knows (${latest}); upgrade the server instead of running an older one against it`,
      );
    }
    // Every migration not applied yet, in order: one added below the latest applied is not skipped.
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(await readFile(m.file, 'utf8'));
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    if (latest >= 11) await storeTerminology(tx);
    if (latest >= 12) await storeCountedParams(tx);
    if (latest >= 17) await storeSoundKeys(tx);
  });
  return { applied };
}

/**
 * The parameters whose values the write path counts (value_count, sql/012), from the registry:
 * when they differ from the stored ones, the counts are computed again from the index tables.
 */
async function storeCountedParams(tx: postgres.TransactionSql<{}>): Promise<void> {
  const want = registry.all.flatMap((p) => {
    const kind = countedKind(p);
    return kind ? [{ param: p.id, kind }] : [];
  });
  const have = await tx<{ param: number; kind: string }[]>`select param, kind from counted_param`;
  const key = (list: { param: number; kind: string }[]) => list.map((c) => `${c.param}:${c.kind}`).sort().join(',');
  if (key(have) === key(want)) return;
  await tx`delete from counted_param`;
  await tx`insert into counted_param (param, kind) select * from unnest(${want.map((c) => c.param)}::int[], ${want.map((c) => c.kind)}::text[])`;
  await tx`select rebuild_value_counts()`;
}

/**
 * The labels of the terminology shipped with this code (terminology/, src/terminology.ts), stored
 * when their digest differs from the one stored; labels learned from the data stay.
 */
async function storeTerminology(tx: postgres.TransactionSql<{}>): Promise<void> {
  const t = shippedTerminology();
  const [state] = await tx<{ hash: string }[]>`select hash from terminology_state`;
  if (state?.hash === t.hash) return;
  // The IG's CodeSystems and the codes table may give the same label twice.
  const labels = [...new Map(t.labels.map((l) => [`${l.system}\u0000${l.code}\u0000${l.label}`, l])).values()];
  const uris = [...new Set(labels.map((l) => l.system))];
  await tx`insert into token_system (uri) select unnest(${uris}::text[]) on conflict (uri) do nothing`;
  await tx`update code_label set shipped = false where shipped`;
  await tx`
    insert into code_label (sys, code, label, norm, shipped)
    select s.id, x.code, x.label, x.norm, true
    from unnest(${labels.map((l) => l.system)}::text[], ${labels.map((l) => l.code)}::text[], ${labels.map((l) => l.label)}::text[],
                ${labels.map((l) => normalize(l.label))}::text[]) as x(uri, code, label, norm)
    join token_system s on s.uri = x.uri
    on conflict (sys, code, label) do update set shipped = true`;
  await tx`delete from terminology_state`;
  await tx`insert into terminology_state (hash) values (${t.hash})`;
}

/**
 * A stored sound key is `soundOf` of its stored word: when the rules change (SOUND_KEYS_VERSION),
 * the keys of every distinct word are made again here, in JavaScript, and only the rows whose key
 * changed are rewritten. Run with the migrations (sql/017), in their transaction.
 */
export async function storeSoundKeys(tx: Db): Promise<{ words: number; changed: number } | undefined> {
  const [state] = await tx<{ version: number }[]>`select version from sound_keys_state`;
  if (state?.version === SOUND_KEYS_VERSION) return undefined;
  const stored = await tx<{ word: string; sound: string }[]>`select distinct word, sound from phonetic_idx`;
  const changed = [...new Set(stored.filter((r) => soundOf(r.word) !== r.sound).map((r) => r.word))];
  if (changed.length > 0) {
    await tx`update phonetic_idx p set sound = n.sound
      from unnest(${changed}::text[], ${changed.map(soundOf)}::text[]) n(word, sound)
      where p.word = n.word collate "C" and p.sound <> n.sound collate "C"`;
  }
  await tx`delete from sound_keys_state`;
  await tx`insert into sound_keys_state (version) values (${SOUND_KEYS_VERSION})`;
  return { words: new Set(stored.map((r) => r.word)).size, changed: changed.length };
}
