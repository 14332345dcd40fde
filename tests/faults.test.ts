import t from 'tap';
import { createServer, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, makeDeps } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connectPools, connectUrl, driverProblems, endPools, migrate, type Pools } from '../src/db.ts';
import { classifyDbError } from '../src/db-errors.ts';
import { registry } from '../src/registry/index.ts';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { ownCluster, poolsOn, type OwnCluster, type Teardown } from './helpers/db.ts';
import { API_KEY } from './helpers/search.ts';

/**
 * The database failing under the server, on an embedded cluster of each test's own that it stops,
 * starts and crashes: requests are answered 200 or 503 (never 500, never left hanging), and the
 * searches work again within 2 s of the database answering, without restarting the server.
 */

/** Longest a request may take before it counts as hung. */
const HUNG_MS = 10_000;
/** Searches must succeed again this soon after the database answers. */
const RECOVERY_MS = 2_000;

const SEARCHES: [string, (body: { entry?: { resource: { id: string } }[] }) => boolean][] = [
  ['/fhir/v2/Practitioner?_id=pra-helene-martin', (b) => b.entry?.[0]?.resource.id === 'pra-helene-martin'],
  ['/fhir/v2/Practitioner?identifier=urn:oid:1.2.250.1.71.4.2.1|810100000002', (b) => b.entry?.[0]?.resource.id === 'pra-helene-martin'],
  ['/fhir/v2/Practitioner?name=martin', (b) => (b.entry?.length ?? 0) > 0],
  ['/fhir/v2/PractitionerRole?_id=role-paul-martin-cabinet&_include=*', (b) => (b.entry?.length ?? 0) > 1],
];

interface Answer {
  url: string;
  /** ms since the start of the run */
  start: number;
  end: number;
  status: number | 'hung';
  body?: string;
  retryAfter?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** app.inject bounded by HUNG_MS. */
async function ask(app: FastifyInstance, url: string, t0: number): Promise<Answer> {
  const start = performance.now() - t0;
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(resolve, HUNG_MS, 'hung')));
  const res = await Promise.race([app.inject({ url, headers: { 'service-api-key': API_KEY } }), hung]);
  clearTimeout(timer);
  const end = performance.now() - t0;
  if (res === 'hung') return { url, start, end, status: 'hung' };
  return { url, start, end, status: res.statusCode, body: res.body, retryAfter: res.headers['retry-after'] as string | undefined };
}

/** `clients` loops of searches (each its own turn through `urls`) until `stop()` resolves. */
async function underLoad(app: FastifyInstance, urls: string[], clients: number, fault: (t0: number) => Promise<number>) {
  const t0 = performance.now();
  let running = true;
  const answers: Answer[][] = Array.from({ length: clients }, () => []);
  const loops = answers.map(async (mine, c) => {
    for (let i = c; running; i++) {
      mine.push(await ask(app, urls[i % urls.length], t0));
      await sleep(10);
    }
  });
  const back = await fault(t0);
  await sleep(RECOVERY_MS + 500);
  running = false;
  await Promise.all(loops);
  return { answers, back };
}

/** The answers that are neither a 200 nor a 503 OperationOutcome with Retry-After. */
function wrongAnswers(answers: Answer[][], codes: string[]): string[] {
  const wrong: string[] = [];
  for (const a of answers.flat()) {
    if (a.status === 200) continue;
    const issue = a.body ? (JSON.parse(a.body) as { issue?: { code: string }[] }).issue?.[0]?.code : undefined;
    if (a.status === 503 && a.retryAfter && issue && codes.includes(issue)) continue;
    wrong.push(`${a.url}: ${a.status} ${a.body ?? ''}`.slice(0, 300));
  }
  return wrong;
}

/** How long after `back` each client's first right answer (a 200 of the expected shape) ended. */
function recoveries(answers: Answer[][], back: number): number[] {
  const check = new Map(SEARCHES);
  return answers.map((mine) => {
    const first = mine.find((a) => a.start >= back && a.status === 200 && check.get(a.url)?.(JSON.parse(a.body!)) !== false);
    return first ? first.end - back : Infinity;
  });
}

/** The server on `cluster`, with the hand-checked fixtures loaded. */
async function fixtureServer(t: Teardown, cluster: OwnCluster) {
  const setup = connectUrl(cluster.url, { max: 4 });
  await migrate(setup);
  const db = poolsOn(t, cluster.url);
  await load({ ...db, sql: setup }, [path.join(FIXTURES, 'directory')]);
  await setup.end({ timeout: 1 });
  return testApp(t, { db, env: { API_KEYS: API_KEY } });
}

t.test('outage errors are told apart from bugs', async (t) => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '08006', '08P01', '57P01', '57P02', '57P03', '53300']) {
    t.equal(classifyDbError(Object.assign(new Error('x'), { code })), 'transient', code);
  }
  t.equal(classifyDbError(Object.assign(new Error('x'), { code: '57014' })), 'timeout', 'statement timeout');
  t.equal(classifyDbError(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])), 'transient', 'every address refused');
  for (const bug of [new TypeError("Cannot read properties of undefined (reading 'id')"), Object.assign(new Error('x'), { code: '42P01' }), Object.assign(new Error('x'), { code: '22012' }), 'a string', null]) {
    t.equal(classifyDbError(bug), undefined, `a bug stays a bug: ${String(bug)}`);
  }
});

t.test('the driver: a statement that fails after sending rows leaves the next result well shaped', async (t) => {
  const cluster = await ownCluster(t);
  // One connection: the next statement runs where the failed one sent its rows.
  const sql = connectUrl(cluster.url, { max: 1, statementTimeoutMs: 300 });
  t.teardown(() => sql.end({ timeout: 1 }));
  for (const prepare of [true, false]) {
    await t.rejects(sql.unsafe('select i, 1 / (4 - i) as q from generate_series(1, 10) i', [], { prepare }), { code: '22012' }, 'rows 1 to 3 sent, then division by zero');
    const after = await sql`select 1 as x`;
    t.same([...after], [{ x: 1 }], `one row, no leading empty slot (prepare: ${prepare})`);
  }
  await t.rejects(sql`select i, case when i = 4 then pg_sleep(2) end from generate_series(1, 10) i`, { code: '57014' }, 'rows sent, then the statement timeout');
  const after = await sql`select 2 as x`;
  t.same([...after], [{ x: 2 }], 'after a timeout mid-rows too');
});

t.test('a connection refused at once, or failing before postgres.js listens, rejects its query', async (t) => {
  const free = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => free.once('listening', resolve));
  const port = (free.address() as { port: number }).port;
  await new Promise((resolve) => free.close(resolve)); // a port nobody listens on
  // 255.255.255.255: the kernel refuses the connect() itself (ENETUNREACH here), synchronously.
  for (const host of [`127.0.0.1:${port}`, '255.255.255.255:5432']) {
    const sql = connectUrl(`postgres://postgres:x@${host}/postgres`, { max: 1 });
    for (let i = 0; i < 3; i++) {
      const err = await Promise.race([sql`select 1`.then(() => 'answered', (e: Error) => e), sleep(HUNG_MS).then(() => 'hung')]);
      t.ok(err instanceof Error, `${host}, attempt ${i + 1}: rejected (${(err as { code?: string }).code ?? String(err)})`);
    }
    await sql.end({ timeout: 0 });
  }
});

t.test('the installed driver carries every fix of patches/postgres+3.4.9.patch', async (t) => {
  t.same(driverProblems(), [], 'version and fixes found');
  const patch = readFileSync(path.join(import.meta.dirname, '..', 'patches', 'postgres+3.4.9.patch'), 'utf8');
  for (const issue of ['porsager/postgres#1181', 'porsager/postgres#1173', 'porsager/postgres#1130', 'porsager/postgres#499', 'porsager/postgres#1195']) t.match(patch, issue, `the patch header names ${issue}`);
});

t.test('a restart under concurrent searches: 200 or 503, never hung, all back within 2 s', async (t) => {
  const cluster = await ownCluster(t);
  const { app } = await fixtureServer(t, cluster);
  let readyDown: { statusCode: number; body: string } | undefined;
  const { answers, back } = await underLoad(app, SEARCHES.map(([u]) => u), 8, async (t0) => {
    await sleep(500);
    await cluster.stop();
    readyDown = await app.inject({ url: '/ready' });
    await sleep(1000);
    await cluster.start();
    return performance.now() - t0;
  });
  t.same(answers.flat().filter((a) => a.status === 'hung').map((a) => a.url), [], 'no request left hanging');
  t.same(wrongAnswers(answers, ['transient']), [], 'every answer a 200 or a 503 transient with Retry-After');
  t.ok(answers.flat().some((a) => a.status === 503), 'the outage was felt (503s)');
  const recovered = recoveries(answers, back);
  t.ok(recovered.every((ms) => ms <= RECOVERY_MS), `each client searches again within ${RECOVERY_MS} ms of the restart: ${recovered.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  const late = answers.flat().filter((a) => a.start >= back + RECOVERY_MS && a.status !== 200);
  t.same(late.map((a) => a.url), [], 'and keeps succeeding');

  t.equal(readyDown?.statusCode, 503, '/ready during the outage: 503');
  t.same(JSON.parse(readyDown?.body ?? '{}').failed, ['sql', 'generic', 'heavy', 'count'], 'naming every pool');
  t.notMatch(readyDown?.body ?? '', /postgres:|password/, 'without credentials');
  const ready = await app.inject({ url: '/ready' });
  t.equal(ready.statusCode, 200, '/ready after: 200');
  t.same(ready.json(), { status: 'ready', pools: { sql: 'ok', generic: 'ok', heavy: 'ok', count: 'ok' } });
});

t.test('a crashed backend (crash recovery) and terminated sessions under concurrent searches', async (t) => {
  const cluster = await ownCluster(t);
  const { app } = await fixtureServer(t, cluster);
  const admin = () => connectUrl(cluster.url, { max: 1 });
  const answering = async () => {
    for (;;) {
      const probe = admin();
      const ok = await probe`select 1`.then(() => true, () => false);
      await probe.end({ timeout: 1 });
      if (ok) return;
      await sleep(20);
    }
  };
  // A backend of this test's own cluster killed: the postmaster ends every session (57P02) and
  // refuses connections while it recovers (57P03).
  const crash = await underLoad(app, SEARCHES.map(([u]) => u), 8, async (t0) => {
    await sleep(500);
    const victim = admin();
    const [{ pid }] = await victim<{ pid: number }[]>`select pg_backend_pid() as pid`;
    process.kill(pid, 'SIGKILL');
    await victim.end({ timeout: 1 }).catch(() => {});
    await sleep(100);
    await answering();
    return performance.now() - t0;
  });
  t.same(crash.answers.flat().filter((a) => a.status === 'hung').map((a) => a.url), [], 'crash: no request left hanging');
  t.same(wrongAnswers(crash.answers, ['transient']), [], 'crash: every answer a 200 or a 503 transient');
  const recovered = recoveries(crash.answers, crash.back);
  t.ok(recovered.every((ms) => ms <= RECOVERY_MS), `crash: each client searches again within ${RECOVERY_MS} ms: ${recovered.map((ms) => ms.toFixed(0)).join(', ')} ms`);

  // Every session of the server terminated (an administrator, a pooler, a failover): 57P01.
  const terminated = await underLoad(app, SEARCHES.map(([u]) => u), 8, async (t0) => {
    await sleep(300);
    const killer = admin();
    await killer`select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend'`;
    await killer.end({ timeout: 1 });
    return performance.now() - t0;
  });
  t.same(wrongAnswers(terminated.answers, ['transient']), [], 'terminated: every answer a 200 or a 503 transient');
  const again = recoveries(terminated.answers, terminated.back);
  t.ok(again.every((ms) => ms <= RECOVERY_MS), `terminated: each client searches again within ${RECOVERY_MS} ms: ${again.map((ms) => ms.toFixed(0)).join(', ')} ms`);
});

t.test('/ready answers within its deadline and names the pool that does not answer', async (t) => {
  const cluster = await ownCluster(t);
  // A server that accepts connections and never says a word: a pool on it can never run a query.
  const silent = createServer((socket: Socket) => socket.on('error', () => {}));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<Socket>();
  silent.on('connection', (s: Socket) => sockets.add(s));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as { port: number }).port;
  const good = connectPools(cluster.url, { max: 1, heavyMax: 1 });
  const mute = connectUrl(`postgres://postgres:secret@127.0.0.1:${port}/postgres`, { max: 1 });
  t.teardown(async () => {
    await endPools(good, 1);
    await mute.end({ timeout: 0 });
  });
  const pools: Pools = { sql: good.sql, generic: good.generic, heavy: mute, count: good.count };
  const config = loadConfig({ CURSOR_SECRET: 'test-secret-0123456789', RATE_LIMIT: '0' });
  const app = await buildApp(makeDeps(config, pools, registry));
  t.teardown(() => app.close());
  const started = performance.now();
  const res = await app.inject({ url: '/ready' });
  const took = performance.now() - started;
  t.equal(res.statusCode, 503);
  t.ok(took < 2000, `answered in ${took.toFixed(0)} ms`);
  t.same(res.json(), { status: 'unavailable', failed: ['heavy'], pools: { sql: 'ok', generic: 'ok', heavy: 'timeout', count: 'ok' } });
  t.notMatch(res.body, /secret/, 'no credentials in the body');
});

t.test('API keys during an outage: checked from memory while the copy is fresh, else 503 transient', async (t) => {
  const cluster = await ownCluster(t);
  const { app, deps } = await fixtureServer(t, cluster);
  const search = (key: string) => app.inject({ url: SEARCHES[0][0], headers: { 'service-api-key': key } });
  t.equal((await search(API_KEY)).statusCode, 200, 'healthy');
  await cluster.stop();
  t.equal((await search('not-a-key-0123456789abcdef')).statusCode, 401, 'an unknown key is refused from the fresh copy');
  const known = await search(API_KEY);
  t.equal(known.statusCode, 503, 'a known key passes, the search finds no database');
  t.equal(known.headers['retry-after'], '1');
  t.match(known.json(), { resourceType: 'OperationOutcome', issue: [{ code: 'transient' }] });
  deps.keys.invalidate(); // as when the copy is older than its TTL
  const unchecked = await search(API_KEY);
  t.equal(unchecked.statusCode, 503, 'a key that cannot be checked');
  t.equal(unchecked.headers['retry-after'], '1');
  t.match(unchecked.json(), { resourceType: 'OperationOutcome', issue: [{ code: 'transient', diagnostics: /API key could not be checked/ }] });
});
