import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import tap from 'tap';
import { connectPools, endPools, migrate, type Database, type Sql } from '../../src/db.ts';
import { startEmbedded } from '../../src/embedded.ts';
import { LOADER_CONNECTIONS } from '../../src/load/loader.ts';
import { copyTemplate } from './pg-template.ts';

/**
 * A real, empty, migrated PostgreSQL database, created on DATABASE_URL's server when it is set, else
 * on an embedded cluster shared by the test process (started at its first database, stopped when
 * its tests end), and dropped at the end.
 */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function testDatabase(t: Teardown): Promise<Database> {
  const url = await testServer();
  const name = `annuaire_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const pools = connectPools(u.toString(), { max: LOADER_CONNECTIONS, heavyMax: 2 });
  await migrate(pools.sql);
  const db: Database = {
    ...pools,
    url: u.toString(),
    embedded: false,
    close: async () => {
      await endPools(pools);
      // The shared cluster may have stopped first (a database of the root test, closed after it).
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    },
  };
  t.teardown(() => db.close());
  return db;
}

let embedded: Promise<string> | undefined;

/** DATABASE_URL, or the URL of the test process's embedded cluster (a copy of the run's template, else one initdb per file). */
function testServer(): Promise<string> {
  if (process.env.DATABASE_URL) return Promise.resolve(process.env.DATABASE_URL);
  embedded ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'annuaire-test-pg-'));
    await chmod(dir, 0o755); // the postgres user must reach it when the tests run as root
    copyTemplate(dir);
    const handle = await startEmbedded({ dataDir: dir, persistent: false, profile: 'test' });
    tap.teardown(async () => {
      await handle.stop();
      await rm(dir, { recursive: true, force: true });
    });
    return handle.url;
  })();
  return embedded;
}

/**
 * An embedded PostgreSQL of the test's own, in a folder of its own and on a port that stays its
 * own across restarts, whatever DATABASE_URL says: a fault test stops and starts it, and must
 * never stop a server other tests or people use.
 */
export interface OwnCluster {
  url: string;
  /** the folder of the cluster's files (postmaster.pid names its postmaster). */
  pgdata: string;
  /** fast shutdown: sessions are terminated (57P01), then new connections are refused. */
  stop(): Promise<void>;
  /** starts it again on the same files and port; resolves once it accepts connections. */
  start(): Promise<void>;
}

export async function ownCluster(t: Teardown): Promise<OwnCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fault-pg-'));
  await chmod(dir, 0o755); // the postgres user must reach it when the tests run as root
  copyTemplate(dir);
  let handle = await startEmbedded({ dataDir: dir, persistent: true, profile: 'test' });
  const port = Number(new URL(handle.url).port);
  t.teardown(async () => {
    await handle.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    url: handle.url,
    pgdata: path.join(dir, 'pg'),
    stop: () => handle.stop(),
    start: async () => {
      handle = await startEmbedded({ dataDir: dir, persistent: true, profile: 'test', port });
    },
  };
}

/**
 * A Database on `url` with the server's three pools (two connections each, none opened before its
 * first query), closed at the end; the schema is not migrated.
 */
export function poolsOn(t: Teardown, url: string, opts: { statementTimeoutMs?: number } = {}): Database {
  const pools = connectPools(url, { max: 2, genericMax: 2, heavyMax: 2, ...opts });
  const close = () => endPools(pools, 1);
  t.teardown(close);
  return { ...pools, url, embedded: false, close };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long interruptWhen's outage lasts: shorter than the commands' tries of their outcome (src/writer-runs.ts). */
const OUTAGE_MS = 2000;

/**
 * Once `when` (an SQL boolean, polled on `admin`) first holds while `run` runs, every session of the
 * database but the admin's is ended (a failover, an administrator), and again every 10 ms for
 * OUTAGE_MS or until `run` ends, so that a session idle the first time is not missed; then the
 * database is back. Or, with `kill`, that is called once instead (the process killed). `hit` says
 * whether `when` held before `run` ended. The progress and activity views show every database of
 * the server (other test files' too, with DATABASE_URL): `when` names `datname = current_database()`.
 */
export async function interruptWhen<T>(admin: Sql, when: string, run: Promise<T>, kill?: () => void): Promise<{ hit: boolean; result: T }> {
  let done = false;
  void run.finally(() => (done = true));
  while (!done && !(await admin.unsafe(`select (${when}) as now`))[0].now) await sleep(5);
  const hit = !done;
  if (hit && kill) kill();
  const back = performance.now() + OUTAGE_MS;
  while (!done && !kill && performance.now() < back) {
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    await sleep(10);
  }
  return { hit, result: await run };
}

let kept = 0;

/**
 * The rows of `tables` as they are now, put back by the function returned (the tables truncated
 * first): a state made once by the real commands, such as a clean import, that several tests start
 * from instead of making it again each time.
 */
export async function keepState(sql: Sql, tables: readonly string[]): Promise<() => Promise<void>> {
  const schema = `kept_${++kept}`;
  await sql.unsafe(`create schema ${schema}`);
  for (const table of tables) await sql.unsafe(`create table ${schema}.${table} as table public.${table}`);
  return async () => {
    await sql.unsafe(`truncate ${tables.join(', ')}`);
    for (const table of tables) await sql.unsafe(`insert into public.${table} overriding system value select * from ${schema}.${table}`);
  };
}
