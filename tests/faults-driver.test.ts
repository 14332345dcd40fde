import t, { type Test } from 'tap';
import type { Socket } from 'node:net';
import postgres from 'postgres';
import { pgSocket } from '../src/db-socket.ts';
import { connectUrl, unixSocket, type Sql } from '../src/db.ts';
import { CopyIn } from '../src/store/copy-in.ts';
import { testDatabase } from './helpers/db.ts';

/**
 * postgres.js when a connection closes under its queries (patches/postgres+3.4.9.patch, hunk 5; hunk 2 for a COPY):
 * every query settles, the connection serves the next one, and the process lives on — whether the
 * socket ends with an 'error' or not, with a write still waiting, under a pool, a transaction or a
 * reservation.
 */

/** Longer than any of these queries may take to settle. */
const SETTLE_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Settled = { rows: readonly object[] } | { err: { code?: string } } | 'hung';

function settle(query: PromiseLike<readonly object[]>): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(resolve, SETTLE_MS, 'hung')));
  const settled = Promise.resolve(query).then(
    (rows) => ({ rows: [...rows] }),
    (err: { code?: string }) => ({ err }),
  );
  return Promise.race([settled, hung]).finally(() => clearTimeout(timer));
}

const errorOf = (s: Settled) => (typeof s === 'object' && 'err' in s ? s.err.code ?? String(s.err) : s === 'hung' ? 'hung' : 'answered');

t.test('a connection closing under queries', async (t) => {
  const db = await testDatabase(t);
  const tcp = !unixSocket(db.url);
  const admin = connectUrl(db.url, { max: 1 });
  t.teardown(() => admin.end({ timeout: 1 }));
  const terminate = (pid: number) => admin`select pg_terminate_backend(${pid})`;

  /** A pool of one connection whose sockets the test holds (the server's own TCP sockets). */
  const heldPool = (tt: Test) => {
    const sockets: Socket[] = [];
    const sql = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      connect_timeout: 5,
      ...({ socket: (o: Parameters<typeof pgSocket>[0]) => sockets[sockets.push(pgSocket(o)) - 1] } as {}),
    });
    tt.teardown(() => sql.end({ timeout: 1 }));
    return { sql, socket: () => sockets.at(-1)! };
  };

  t.test("a query handed over between the socket's 'error' and 'close' is failed, not left waiting", { skip: !tcp && 'a TCP DATABASE_URL' }, async (t) => {
    const { sql, socket } = heldPool(t);
    await sql`select 1`;
    const s = socket();
    const late = new Promise<Settled>((resolve) => s.once('error', () => resolve(settle(sql`select 2 as x`))));
    s.destroy(Object.assign(new Error('reset by the test'), { code: 'ECONNRESET' }));
    t.equal(errorOf(await late), 'CONNECTION_CLOSED');
    t.same(await settle(sql`select 3 as x`), { rows: [{ x: 3 }] }, 'the next query is answered');
  });

  t.test('a write still waiting when the socket closes does not stop the next socket from writing', { skip: !tcp && 'a TCP DATABASE_URL' }, async (t) => {
    const { sql, socket } = heldPool(t);
    await sql`select 1`;
    // In the check phase: the query's write waits for the next one, the socket closes before it.
    const first = await new Promise<Settled>((resolve) =>
      setImmediate(() => {
        socket().destroy();
        resolve(settle(sql`select 2 as x`));
      }),
    );
    t.equal(errorOf(first), 'CONNECTION_CLOSED');
    t.same(await settle(sql`select 3 as x`), { rows: [{ x: 3 }] }, 'the reconnected connection is answered (not CONNECT_TIMEOUT)');
  });

  t.test("a terminated session's error is not the next connection's", async (t) => {
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const sleeping = settle(sql`select pg_sleep(5)`);
    await sleep(200);
    await terminate(pid);
    t.not(errorOf(await sleeping), 'answered', `the running query fails (${errorOf(await sleeping)})`);
    t.same(await settle(sql`select 4 as x`), { rows: [{ x: 4 }] }, 'the next query is answered, not failed with 57P01');
  });

  t.test('a transaction whose connection closes fails; the process and the pool live on', async (t) => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    t.teardown(() => void process.off('uncaughtException', onUncaught));
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const tx = await settle(
      sql.begin(async (tx) => {
        const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await terminate(pid);
        return tx`select 1`;
      }),
    );
    t.match(errorOf(tx), /^(CONNECTION_CLOSED|ECONNRESET|57P01)$/, `the transaction fails (${errorOf(tx)})`);
    await sleep(100);
    t.same(uncaught.map(String), [], 'nothing thrown outside a promise');
    t.same(await settle(sql`select 5 as x`), { rows: [{ x: 5 }] }, 'the pool serves the next query');
  });

  t.test('a reservation released after its connection closed leaves the pool whole', async (t) => {
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const reserved = await sql.reserve();
    const [{ pid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await terminate(pid);
    t.not(errorOf(await settle(reserved`select 1`)), 'answered', 'the reservation fails');
    t.equal(errorOf(await settle(reserved`select 1`)), 'CONNECTION_CLOSED', 'and keeps failing, without a throw');
    reserved.release();
    for (const x of [6, 7, 8]) t.same(await settle(sql`select ${x}::int as x`), { rows: [{ x }] }, `the pool serves query ${x - 5}`);
  });

  t.test('a reservation waiting for the connection that closes is served by its next session, which is its alone (hunk 7)', async (t) => {
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const first = await sql.reserve();
    const [{ pid }] = await first<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const waiting = sql.reserve();
    await sleep(50); // queued behind the only connection
    await terminate(pid);
    await sleep(100); // its close seen by the driver, which reconnects for the waiting reservation
    const second = await Promise.race([waiting, sleep(SETTLE_MS).then(() => undefined)]);
    if (!second) return void t.fail('the waiting reservation was never served');
    t.equal(errorOf(await settle(first`select 1`)), 'CONNECTION_CLOSED', "the first reservation's handle fails: its session is gone");
    first.release();
    t.same(await settle(second`select 2 as x`), { rows: [{ x: 2 }] }, 'the second reservation is answered');
    let pooledDone = false;
    const pooled = settle(sql`select 3 as x`).finally(() => (pooledDone = true));
    await sleep(100);
    t.notOk(pooledDone, "the first one's release did not give the second one's connection to the pool");
    second.release();
    t.same(await pooled, { rows: [{ x: 3 }] }, 'the pool serves its query once the second one is released');
  });

  t.test("a transaction's queries after its session closed never run on the next session (hunk 7)", async (t) => {
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    let pooled: Promise<Settled> | undefined;
    let late!: (s: Settled) => void;
    const lateQuery = new Promise<Settled>((resolve) => (late = resolve));
    const begun = settle(
      sql.begin(async (tx) => {
        const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        pooled = settle(sql`select 7 as x`); // queued behind the transaction
        await terminate(pid);
        await sleep(200); // the pool reconnects for its queued query
        late(await settle(tx`select 8 as x`));
        return [] as object[];
      }),
    );
    t.not(errorOf(await begun), 'answered', 'the transaction fails');
    t.equal(errorOf(await lateQuery), 'CONNECTION_CLOSED', 'its later query is refused, not run outside it on the next session');
    t.same(await pooled, { rows: [{ x: 7 }] }, 'the pool serves its queued query');
  });

  t.test('reservations while sessions are terminated again and again: each settles, the pool stays whole (hunk 7)', async (t) => {
    const sql = connectUrl(db.url, { max: 2 });
    t.teardown(() => sql.end({ timeout: 1 }));
    let running = true;
    const killer = (async () => {
      while (running) {
        await admin`select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
        await sleep(10);
      }
    })();
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      // a cursor on a reservation: what an import reads its staged lines with
      const read = (async () => {
        const r = await sql.reserve();
        try {
          for await (const _ of r`select g from generate_series(1, 100000) g`.cursor(1000)) await sleep(1);
          return [];
        } finally {
          r.release();
        }
      })();
      outcomes.push(errorOf(await settle(read)));
    }
    running = false;
    await killer;
    t.notOk(outcomes.includes('hung'), `every reservation settled (${outcomes.join(', ')})`);
    t.same(await Promise.all([1, 2].map(async (x) => settle((await sql.reserve())`select ${x}::int as x`))), [1, 2].map((x) => ({ rows: [{ x }] })), 'two reservations answered once it stops');
  });

  t.test('a COPY ended by its writer whose connection closes before the server answers fails, not left waiting', async (t) => {
    const sql = connectUrl(db.url, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    await sql`create unlogged table slow_copy (x int)`;
    await sql`create function slow_copy_row() returns trigger language plpgsql as $$ begin perform pg_sleep(0.2); return new; end $$`;
    await sql`create trigger slow_copy_row before insert on slow_copy for each row execute function slow_copy_row()`;
    t.teardown(() => db.sql`drop table slow_copy; drop function slow_copy_row()`.simple());
    const reserved = await sql.reserve();
    t.teardown(() => reserved.release());
    const [{ pid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const copy = await CopyIn.open(reserved`copy slow_copy (x) from stdin`);
    const ended = settle(copy.end('1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n').then(() => []));
    await sleep(300); // the server is inserting the rows, one every 200 ms
    await terminate(pid);
    const error = errorOf(await ended);
    t.ok(error !== 'hung' && error !== 'answered', `the end of the COPY fails (${error}: the socket's or the driver's)`);
    t.same(await settle(sql`select 9 as x`), { rows: [{ x: 9 }] }, 'the pool serves the next query');
  });

  t.test('sessions terminated again and again under concurrent queries: each settles, with its own answer', async (t) => {
    const sql: Sql = connectUrl(db.url, { max: 4 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const outcomes = { answered: 0, failed: 0, hung: 0, wrong: [] as string[] };
    let running = true;
    const client = async (c: number) => {
      for (let i = 0; running; i++) {
        const n = c * 100_000 + i;
        const s = await settle(sql.unsafe('select $1::int as n, pg_sleep(random() * 0.002)', [n], { prepare: true }));
        if (s === 'hung') outcomes.hung++;
        else if ('err' in s) outcomes.failed++;
        else if (s.rows.length === 1 && (s.rows[0] as { n: number }).n === n) outcomes.answered++;
        else outcomes.wrong.push(`${n}: ${JSON.stringify(s.rows)}`);
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    for (let k = 0; k < 20; k++) {
      await sleep(50 + Math.random() * 100);
      await admin`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
    }
    await sleep(300);
    running = false;
    await Promise.all(clients);
    t.equal(outcomes.hung, 0, `no query left waiting (${outcomes.answered} answered, ${outcomes.failed} failed)`);
    t.same(outcomes.wrong, [], 'every answer its own query\'s');
    t.ok(outcomes.answered > outcomes.failed, 'most are answered');
    t.same(await Promise.all([1, 2, 3, 4].map((x) => settle(sql`select ${x}::int as x`))), [1, 2, 3, 4].map((x) => ({ rows: [{ x }] })), 'all answered once it stops');
  });
});

t.test('queries after a COPY to stdout (patches/postgres+3.4.9.patch, hunk 6)', async (t) => {
  const db = await testDatabase(t);
  const sql: Sql = connectUrl(db.url, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const session = await sql.reserve();
  // Small rows: the COPY's last read holds more than the readable takes at once, and its end.
  for (const rows of [1, 1000, 100_000]) {
    // COPY runs as a simple query: no parameters.
    const copy = await session.unsafe(`copy (select g, repeat('x', 20) from generate_series(1, ${rows}) g) to stdout`).readable();
    let lines = 0;
    for await (const chunk of copy as AsyncIterable<Buffer>) for (const b of chunk) if (b === 0x0a) lines++;
    t.equal(lines, rows, `${rows} rows copied out`);
    const next = await settle(session`select ${rows}::int as n`);
    // Hung, the connection would keep every later query waiting: the test stops here.
    if (!t.same(next, { rows: [{ n: rows }] }, `the next query on that connection is answered (after ${rows} rows)`)) return;
  }
  session.release();
  t.same(await settle(sql`select 1 as x`), { rows: [{ x: 1 }] }, 'the pool serves it after the reservation');
});
