/**
 * The count behind `total`: exact whenever it is given; read from the counts the write path keeps
 * for a search of one counted value (tests/value-count.test.ts); else given when counting fits
 * TOTAL_BUDGET_MS, omitted past it — and the answer never waits longer than the budget for it. The
 * count pool is held busy by the test (a `pg_sleep` on its only connection), so "past the budget"
 * does not depend on how fast the machine is.
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, testApp } from './helpers/app.ts';
import { API_KEY, matchIds, type Bundle } from './helpers/search.ts';

const BUDGET_MS = 150;
/** Every practitioner of the demo data, by a condition whose total is counted (an instant, not a whole day). */
const COUNTED = '/fhir/v2/Practitioner?_lastUpdated=ge2000-01-01T00:00:00.5Z&_count=5';
/** The same, from the kept counts: the type's resources. */
const KEPT = '/fhir/v2/Practitioner?_count=5';
const { app, db, deps } = await testApp(t, { env: { API_KEYS: API_KEY, TOTAL_BUDGET_MS: String(BUDGET_MS) }, paths: [path.join(FIXTURES, 'directory')] });

async function search(url: string) {
  const started = performance.now();
  const res = await app.inject({ method: 'GET', url, headers: { 'SERVICE-API-KEY': API_KEY } });
  return { ms: performance.now() - started, status: res.statusCode, bundle: res.json() as Bundle };
}

/** Holds every connection of the count pool for `ms`. */
function occupyCountPool(ms: number): Promise<unknown> {
  const pool = deps.router.pools.count;
  const n = (pool.options as { max: number }).max;
  return Promise.all(Array.from({ length: n }, () => pool`select pg_sleep(${ms / 1000})`));
}

t.test('a count that fits the budget gives the exact total', async (t) => {
  const r = await search(COUNTED);
  t.same({ status: r.status, total: r.bundle.total }, { status: 200, total: 30 });
});

t.test('a count past the budget: no total, and the answer does not wait for it', async (t) => {
  // Prepared once first: the count and the sleep are then pipelined on the busy connection.
  await occupyCountPool(1);
  const busy = occupyCountPool(1500);
  t.teardown(() => busy);
  await new Promise((r) => setTimeout(r, 50));
  const kept = await search(KEPT);
  t.same({ total: kept.bundle.total, fast: kept.ms < 1000 }, { total: 30, fast: true }, 'a kept total does not need the count pool');
  const r = await search(COUNTED);
  t.same({ status: r.status, total: r.bundle.total, entries: matchIds(r.bundle).length }, { status: 200, total: undefined, entries: 5 });
  t.ok(r.ms < 1000, `answered in ${r.ms.toFixed(0)} ms, well before the count pool is free`);
  const next = r.bundle.link.find((l) => l.relation === 'next')!.url;
  const page2 = await app.inject({ method: 'GET', url: new URL(next).pathname + new URL(next).search, headers: { 'SERVICE-API-KEY': API_KEY } });
  t.equal((page2.json() as Bundle).total, undefined, 'later pages carry no total either');

  const all = await search('/fhir/v2/Practitioner?family=martin');
  t.same({ total: all.bundle.total, fast: all.ms < 1000 }, { total: 5, fast: true }, 'a page that holds every match has its total without counting');
  const lookup = await search('/fhir/v2/Practitioner?identifier=10100000024');
  t.same({ total: lookup.bundle.total, fast: lookup.ms < 1000 }, { total: 1, fast: true }, 'a lookup never waits for the count pool');
  const accurate = await search(`${COUNTED}&_total=accurate`);
  t.equal(accurate.bundle.total, 30, '_total=accurate counts on its own pool, whatever the budget');
  await busy;
  // The count that gave up had been handed to the busy connection: it must not have been cancelled
  // there (postgres.js would skip it while its answer still arrives, and give it to the next query).
  const shapes = await Promise.all([1, 2, 3].map((n) => deps.router.pools.count`select ${n}::int as n, 'x' as tag`));
  t.same(shapes, [[{ n: 1, tag: 'x' }], [{ n: 2, tag: 'x' }], [{ n: 3, tag: 'x' }]], 'the next results of the count pool are their own');
  const after = await search(COUNTED);
  t.equal(after.bundle.total, 30, 'the pool free again: the total is back');
});

t.test('while searches wait for a core, none is counted; kept totals are still read', async (t) => {
  const lane = deps.router.lanes.heavy;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = Array.from({ length: lane.width + 1 }, () => lane.admit(() => gate));
  t.equal(lane.load.waiting, 1, 'a heavy search waits');
  const r = await search(COUNTED);
  t.same({ total: r.bundle.total, entries: matchIds(r.bundle).length }, { total: undefined, entries: 5 }, 'no count, no total');
  t.equal((await search(KEPT)).bundle.total, 30, 'a kept total');
  t.equal((await search('/fhir/v2/Practitioner?family=martin')).bundle.total, 5, 'a page that holds its matches');
  release();
  await Promise.all(held);
  t.equal((await search(COUNTED)).bundle.total, 30, 'nothing waits: counted again');
});

t.test('TOTAL_BUDGET_MS=0: never counted unless asked', async (t) => {
  const { app: never } = await testApp(t, { db, env: { API_KEYS: API_KEY, TOTAL_BUDGET_MS: '0' } });
  const get = async (q: string) => ((await never.inject({ method: 'GET', url: q, headers: { 'SERVICE-API-KEY': API_KEY } })).json() as Bundle).total;
  t.same(
    [await get(COUNTED), await get(`${COUNTED}&_total=accurate`), await get('/fhir/v2/Practitioner?family=martin'), await get(KEPT)],
    [undefined, 30, 5, 30],
  );
});

t.test('a count runs only for a full first page whose set is estimated within reach', async (t) => {
  const { app: gated, deps: gatedDeps } = await testApp(t, { db, env: { API_KEYS: API_KEY, TOTAL_BUDGET_MS: String(BUDGET_MS) } });
  const planner = gatedDeps.router.planner;
  const real = planner.estimateMatches.bind(planner);
  const get = async (q: string) => ((await gated.inject({ method: 'GET', url: q, headers: { 'SERVICE-API-KEY': API_KEY } })).json() as Bundle).total;
  let counted = 0;
  const pool = gatedDeps.router.pools.count;
  // Every count statement of this app goes through its count pool: watch what reaches it.
  const unsafe = pool.unsafe.bind(pool);
  pool.unsafe = ((text: string, ...rest: unknown[]) => {
    if (/select count\(\*\)/.test(text)) counted++;
    return (unsafe as (...a: unknown[]) => unknown)(text, ...rest);
  }) as typeof pool.unsafe;
  planner.estimateMatches = async () => BUDGET_MS * 20_000 + 1;
  t.same({ total: await get(COUNTED), counted }, { total: undefined, counted: 0 }, 'estimated beyond reach: no count, no total');
  planner.estimateMatches = real;
  t.same({ total: await get(COUNTED), counted }, { total: 30, counted: 1 }, 'estimated within reach: counted');
  t.same({ total: await get('/fhir/v2/Practitioner?family=martin'), counted }, { total: 5, counted: 1 }, 'a page that holds its matches starts no count');
});
