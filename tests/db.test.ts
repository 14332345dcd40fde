import t from 'tap';
import { once } from 'node:events';
import { createServer } from 'node:net';
import postgres from 'postgres';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { searchPoolOptions } from '../src/store/execution.ts';
import { loadConfig } from '../src/config.ts';
import { connectPools, connectUrl, endPools, listMigrations, migrate, MigrationError, openConnections, openDatabase, SQL_DIR, unixSocket, type Pools } from '../src/db.ts';
import { startEmbedded } from '../src/embedded.ts';
import { testDatabase, type Teardown } from './helpers/db.ts';

t.test('migrations: applied in order on an empty database, recorded, then a no-op', async (t) => {
  const db = await testDatabase(t);
  const files = await listMigrations(SQL_DIR);
  const rows = await db.sql`select version, name from schema_migrations order by version`;
  t.same(rows.map((r) => r.version), files.map((f) => f.version), 'every migration recorded');
  t.equal(files[0].name, 'schema');
  const tables = await db.sql`select tablename from pg_tables where schemaname = current_schema() order by 1`;
  for (const name of ['resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx', 'token_system']) {
    t.ok(tables.some((x) => x.tablename === name), `table ${name}`);
  }
  t.same((await migrate(db.sql)).applied, [], 'second run applies nothing');
});

t.test('a database newer than the code is refused with a clear message', async (t) => {
  const db = await testDatabase(t);
  await db.sql`insert into schema_migrations (version, name) values (999, 'from-the-future')`;
  const err = await migrate(db.sql).catch((e: unknown) => e);
  t.ok(err instanceof MigrationError, 'a MigrationError');
  await t.rejects(migrate(db.sql), /schema is at version 999, newer than this code/);
});

/** A test database, and a folder holding every migration of sql/ as an empty file, to add others to. */
async function migrationsCopy(t: Teardown) {
  const db = await testDatabase(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mig-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const f of await listMigrations(SQL_DIR)) await writeFile(path.join(dir, path.basename(f.file)), '');
  return { db, dir };
}

t.test('a migration numbered below the latest applied one is applied, not skipped', async (t) => {
  const { db, dir } = await migrationsCopy(t);
  await writeFile(path.join(dir, '901_later.sql'), 'create table t901 (x int);');
  t.same((await migrate(db.sql, dir)).applied, [901]);
  // a branch merged after 901 was applied brings 900
  await writeFile(path.join(dir, '900_merged_later.sql'), 'create table t900 (x int);');
  t.same((await migrate(db.sql, dir)).applied, [900]);
  t.equal((await db.sql`select count(*)::int as n from pg_tables where tablename in ('t900', 't901')`)[0].n, 2);
});

t.test('a migration longer than the pool\'s statement timeout is applied (the server migrates on its search pool)', async (t) => {
  const { db, dir } = await migrationsCopy(t);
  await writeFile(path.join(dir, '900_slow.sql'), 'select pg_sleep(0.3); create table t900 (x int);');
  const pool = connectUrl(db.url, { max: 1, statementTimeoutMs: 100 });
  t.teardown(() => pool.end({ timeout: 1 }));
  t.same((await migrate(pool, dir)).applied, [900]);
  await t.rejects(pool`select pg_sleep(0.3)`, /statement timeout/, 'the pool\'s own statements keep its timeout');
});

t.test('a failing migration leaves nothing behind (one transaction)', async (t) => {
  const { db, dir } = await migrationsCopy(t);
  await writeFile(path.join(dir, '900_good.sql'), 'create table t900 (x int);');
  await writeFile(path.join(dir, '901_bad.sql'), 'create table t901 (x int); select 1/0;');
  await t.rejects(migrate(db.sql, dir));
  t.equal((await db.sql`select count(*)::int as n from pg_tables where tablename in ('t900', 't901')`)[0].n, 0);
  t.equal((await db.sql`select count(*)::int as n from schema_migrations where version >= 900`)[0].n, 0);
});

t.test('embedded: a second process on the same folder joins the running cluster', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'emb-'));
  await chmod(dir, 0o755); // the postgres user must reach it when the tests run as root
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const first = await startEmbedded({ dataDir: dir, persistent: true, profile: 'test' });
  t.teardown(() => first.stop());
  t.equal(first.owner, true);
  const second = await startEmbedded({ dataDir: dir, persistent: true, profile: 'test' });
  t.equal(second.owner, false, 'joined, did not start a second postmaster');
  t.equal(second.url, first.url);
  await second.stop(); // not the owner: leaves the cluster running
  const again = await startEmbedded({ dataDir: dir, persistent: true, profile: 'test' });
  t.equal(again.owner, false);
});

t.test('embedded: a free port taken before PostgreSQL binds it is exchanged for another', async (t) => {
  // Another process listens on the port the cluster was told was free (three test files start clusters at once).
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  t.teardown(() => taken.close());
  const takenPort = (taken.address() as { port: number }).port;
  const handed: number[] = [];
  const ports = [takenPort];
  const cluster = await startEmbedded({
    persistent: false,
    profile: 'test',
    freePort: async () => {
      const port = ports.shift() ?? (await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const { port } = s.address() as { port: number };
          s.close(() => resolve(port));
        });
      }));
      handed.push(port);
      return port;
    },
  });
  t.teardown(() => cluster.stop());
  t.equal(handed.length, 2, 'a second port was taken');
  t.equal(handed[0], takenPort);
  t.match(cluster.url, `:${handed[1]}/`, 'the cluster listens on the second');
  const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 1 }));
  t.same(await sql`select 1 as one`, [{ one: 1 }], 'and answers');
});

t.test('small COPYs do not wait for delayed ACKs (TCP_NODELAY on the pools\' sockets)', async (t) => {
  const db = await testDatabase(t);
  await db.sql`create table copy_nodelay (a int)`;
  // With Nagle's algorithm, each COPY's CopyDone waited for the peer's delayed ACK (about 40 ms).
  const started = performance.now();
  for (let i = 0; i < 20; i++) {
    const w = await db.sql`copy copy_nodelay (a) from stdin`.writable();
    await new Promise((resolve, reject) => w.once('finish', resolve).once('error', reject).end(`${i}\n`));
  }
  const took = performance.now() - started;
  t.ok(took < 400, `20 COPYs of one row in ${took.toFixed(0)} ms`);
  t.equal((await db.sql`select count(*)::int as n from copy_nodelay`)[0].n, 20);
});

t.test('search statements start no parallel workers unless SEARCH_PARALLEL_WORKERS says so; other pools keep the server\'s setting', async (t) => {
  const db = await testDatabase(t);
  const workers = async (pools: Pools) =>
    Promise.all([pools.sql, pools.generic, pools.heavy, pools.count].map(async (p) => (await p`show max_parallel_workers_per_gather`)[0].max_parallel_workers_per_gather));
  for (const [env, want] of [[{}, '0'], [{ SEARCH_PARALLEL_WORKERS: '3' }, '3']] as const) {
    // As the server opens them (src/server.ts), but with counts of a second: the count pool's
    // statements are bounded by the count budget (20 ms), which a busy machine can outlast.
    const pools = await openDatabase({ databaseUrl: db.url, ...searchPoolOptions(loadConfig({ ...env, TOTAL_BUDGET_MS: '1000' })) });
    t.teardown(() => pools.close());
    t.same(await workers(pools), [want, want, want, want], `${JSON.stringify(env)}: ${want} on each search pool`);
  }
  const [{ setting }] = await db.sql`select setting from pg_settings where name = 'max_parallel_workers_per_gather' and source <> 'client'`;
  const loader = connectUrl(db.url, { max: 1 });
  t.teardown(() => loader.end({ timeout: 1 }));
  t.equal((await loader`show max_parallel_workers_per_gather`)[0].max_parallel_workers_per_gather, setting, `a loader's connection: the server's own (${setting})`);
});

t.test('a cold database does not stop the start: a count connection whose first statement outlasts the budget is opened again by the next count', async (t) => {
  const db = await testDatabase(t);
  // pg_type locked: the fetch of array types that opens each connection waits, and the count
  // pool's times out at its budget, as it does on a database just restarted with a cold cache.
  const locker = await db.sql.reserve();
  t.teardown(() => locker.release());
  await locker`begin`;
  await locker`lock table pg_catalog.pg_type in access exclusive mode`;
  const pools = connectPools(db.url, { countTimeoutMs: 50, statementTimeoutMs: 0 });
  t.teardown(() => endPools(pools, 1));
  const warnings: string[] = [];
  const opened = openConnections(pools, (m) => warnings.push(m)).then(() => 'opened', (err: Error) => `failed: ${err.message}`);
  // The lock is held until the count pool has given up (its budget is 50 ms), however long the
  // connections take to reach it on a busy machine; the other pools wait for the rollback.
  for (let i = 0; i < 200 && warnings.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  await locker`rollback`;
  t.equal(await opened, 'opened');
  t.match(warnings, [/^the count search pool did not open its first connection at start \(.*statement timeout.*\): it opens one when a search needs it$/], 'the operator is told which pool and why');
  t.same(await pools.count`select 1 as one`, [{ one: 1 }], 'the next count runs');
});

t.test('DATABASE_URL may name a Unix-domain socket, in either of libpq\'s forms', async (t) => {
  t.same(unixSocket('postgres://u@localhost/db?host=/var/run/postgresql&sslmode=disable'), {
    path: '/var/run/postgresql/.s.PGSQL.5432',
    url: 'postgres://u@localhost/db?sslmode=disable',
  });
  t.equal(unixSocket('postgresql://u:p@%2Ftmp%2Fpg%2F:6543/db')?.path, '/tmp/pg/.s.PGSQL.6543');
  t.equal(unixSocket('postgres://u@127.0.0.1:5432/db'), undefined, 'TCP stays TCP');
  t.equal(unixSocket('postgres://u@db.example/db?host=db2.example'), undefined, 'a host name in host= is not a socket');

  // The machine's own PostgreSQL (the guide's machines and CI run one), when there is one.
  const dir = '/var/run/postgresql';
  const skip = existsSync(`${dir}/.s.PGSQL.5432`) ? false : `no PostgreSQL socket in ${dir}`;
  t.test('connected through the socket', { skip }, async (t) => {
    for (const url of [`postgres://postgres@localhost/postgres?host=${dir}`, `postgres://postgres@${encodeURIComponent(dir)}/postgres`]) {
      const sql = connectUrl(url, { max: 1 });
      const [{ addr }] = await sql<{ addr: string | null }[]>`select inet_server_addr()::text as addr`;
      t.equal(addr, null, `${url}: no TCP address on a Unix socket`);
      await sql.end();
    }
  });
});

t.test('a failed fetch of array types fails the first query of the connection, not the process (porsager/postgres#1192)', async (t) => {
  const db = await testDatabase(t);
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => void unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => void process.off('unhandledRejection', onUnhandled));
  // pg_type locked: the fetch a new connection starts with waits past its statement timeout
  const locker = await db.sql.reserve();
  await locker`begin`;
  await locker`lock table pg_catalog.pg_type in access exclusive mode`;
  const pool = connectUrl(db.url, { max: 1, statementTimeoutMs: 300 });
  t.teardown(() => pool.end({ timeout: 1 }));
  const err = (await pool`select 1 as x`.catch((e: unknown) => e)) as { code?: string };
  t.equal(err.code, '57014', 'the first query gets the statement timeout');
  await locker`rollback`;
  locker.release();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(unhandled, [], 'no unhandled rejection');
  t.same(await pool`select 2 as x`, [{ x: 2 }], 'the connection serves the next query');
  t.same((await pool`select ${['a', 'b']}::text[] as a, ${[1, 2]}::int[] as b`)[0], { a: ['a', 'b'], b: [1, 2] }, 'array parameters still work');
});
