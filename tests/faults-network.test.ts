/**
 * A network cut: the database's packets stop, and no reset ever comes. Between the pools and an
 * embedded cluster of the test's own sits a TCP relay that the test can make silent (it keeps the
 * connections open and drops every byte). A query sent then fails once the connection has heard
 * nothing for longer than its statement timeout and a margin (src/db-socket.ts), instead of waiting
 * for the kernel; when the relay forwards again, the pool reconnects by itself.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import t from 'tap';
import { connectUrl, SILENCE_MARGIN_MS } from '../src/db.ts';
import { storageFailure } from '../src/app.ts';
import { DeadlineExceeded } from '../src/store/errors.ts';
import { SearchRouter } from '../src/store/router.ts';
import { ownCluster } from './helpers/db.ts';

interface Relay {
  port: number;
  /** drop every byte both ways, connections kept open. */
  silent: boolean;
  close(): Promise<void>;
}

async function relay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>();
  const state = { silent: false };
  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (b) => state.silent || upstream.write(b));
    upstream.on('data', (b) => state.silent || client.write(b));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    get silent() {
      return state.silent;
    },
    set silent(v: boolean) {
      state.silent = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

t.test('a query sent into a silent network fails after the statement timeout and a margin; the pool then reconnects', async (t) => {
  const cluster = await ownCluster(t);
  const target = new URL(cluster.url);
  const r = await relay(target);
  t.teardown(() => r.close());
  const url = new URL(cluster.url);
  url.port = String(r.port);
  const STATEMENT_TIMEOUT_MS = 300;
  const sql = connectUrl(url.toString(), { max: 1, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  t.teardown(() => sql.end({ timeout: 0 }));

  t.same(await sql`select 1 as one`, [{ one: 1 }], 'through the relay');
  r.silent = true;
  const started = performance.now();
  const err = await sql`select 2 as two`.then(
    () => undefined,
    (e: { code?: string }) => e,
  );
  const waited = performance.now() - started;
  t.equal((err as { code?: string })?.code, 'CONNECTION_CLOSED', 'the query fails: its connection is closed (503 transient)');
  t.ok(waited >= STATEMENT_TIMEOUT_MS + SILENCE_MARGIN_MS - 50 && waited < STATEMENT_TIMEOUT_MS + SILENCE_MARGIN_MS + 3000, `after ${waited.toFixed(0)} ms of silence`);

  r.silent = false;
  const back = performance.now();
  let answer: unknown;
  while (performance.now() - back < 5000 && answer === undefined) {
    answer = await sql`select 3 as three`.catch(() => undefined);
  }
  t.same(answer, [{ three: 3 }], 'the network back: the pool reconnects by itself');
});

t.test('a long statement within its timeout is not mistaken for silence', async (t) => {
  const cluster = await ownCluster(t);
  const sql = connectUrl(cluster.url, { max: 1, statementTimeoutMs: 200 });
  t.teardown(() => sql.end({ timeout: 0 }));
  // The server answers (an error) when the statement meets its timeout: the connection is alive.
  const err = await sql`select pg_sleep(1)`.then(() => undefined, (e: { code?: string }) => e.code);
  t.equal(err, '57014', 'the statement timeout, not a closed connection');
  t.same(await sql`select 4 as four`, [{ four: 4 }], 'and the same connection goes on');
});

t.test('the deadline: the net below the driver answers 503 when a statement never settles', async (t) => {
  const never = new Promise<never>(() => {});
  const router = new SearchRouter({ pools: {} as never, includeCap: 1, policy: { laneWidth: 1, deadlineMs: 0, countBudgetMs: 0 } });
  const deadline = (work: Promise<unknown>, ms: number) =>
    (router as unknown as { deadline: (w: Promise<unknown>, ms: number) => Promise<unknown> }).deadline(work, ms);
  const started = performance.now();
  const err = await deadline(never, 50).catch((e: unknown) => e);
  t.ok(err instanceof DeadlineExceeded, 'storage says what failed, not a status');
  const answer = storageFailure(err)!;
  t.same({ status: answer.status, code: answer.code, message: answer.message }, { status: 503, code: 'transient', message: 'the database did not answer in time; try again' });
  t.ok(performance.now() - started < 1000, 'at the deadline');
  t.equal(await deadline(Promise.resolve(7), 50), 7, 'a settled answer passes through');
  t.equal(await deadline(Promise.resolve(8), 0), 8, 'no deadline');
});
