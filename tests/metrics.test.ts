import t from 'tap';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { connectUrl, migrate } from '../src/db.ts';
import { FIXTURES, load, loaderCli, testApp } from './helpers/app.ts';
import { ownCluster, poolsOn, testDatabase } from './helpers/db.ts';
import { metricValue, moved, samples } from './helpers/metrics.ts';
import { API_KEY } from './helpers/search.ts';

/**
 * GET /metrics scraped before and after real requests (searches of each class, reads, errors, a
 * 429, statement timeouts, a database restart) on a real database: the counters and histograms
 * move as they should; the settings that turn it off or move it; the runs of the writers.
 */
const DIRECTORY = path.join(FIXTURES, 'directory');
const headers = { 'service-api-key': API_KEY };
const REQUESTS = 'annuaire_http_requests_total';
const DURATIONS = 'annuaire_http_request_duration_seconds';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ url: '/metrics' });
  if (res.statusCode !== 200) throw new Error(`/metrics → ${res.statusCode} ${res.body}`);
  return res.body;
}

const db = await testDatabase(t);
await load(db, [DIRECTORY]);

t.test('requests are counted and timed by route kind, type, version, search class and status', async (t) => {
  const { app } = await testApp(t, { db, env: { API_KEYS: API_KEY } });
  const res = await app.inject({ url: '/metrics' });
  t.equal(res.statusCode, 200, '/metrics needs no key');
  t.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8', 'in the Prometheus text format');
  const before = res.body;

  const get = (url: string, h: Record<string, string> = headers) => app.inject({ url, headers: h });
  const statuses = [
    (await get('/fhir/v2/Practitioner?identifier=810100000002')).statusCode, // lookup
    (await get('/fhir/v2/Practitioner?_id=pra-helene-martin')).statusCode, // lookup
    (await get('/fhir/v2/Practitioner?name=martin')).statusCode, // page
    (await app.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'family=martin' })).statusCode, // page
    (await get('/fhir/v2/Practitioner?name:contains=art')).statusCode, // heavy
    (await get('/fhir/v1/Organization?_count=0')).statusCode, // v1; a total the write path keeps: not heavy
    (await get('/fhir/v2/Practitioner/pra-helene-martin')).statusCode,
    (await get('/fhir/v2/Practitioner/nobody')).statusCode,
    (await get('/fhir/v2/metadata')).statusCode,
    (await get('/fhir/v2/CodeSystem/$lookup?system=https://example.org/none&code=x')).statusCode,
    (await get('/fhir/v2/Practitioner?_lastUpdated=yesterday')).statusCode,
    (await get('/fhir/v2/Practitioner?name=martin', {})).statusCode,
    (await get('/fhir/v2/Nonsense?x=1')).statusCode,
    (await get('/no/such/path?secret=1')).statusCode,
    (await get('/health')).statusCode,
  ];
  t.same(statuses, [200, 200, 200, 200, 200, 200, 200, 404, 200, 404, 400, 401, 404, 404, 200], 'the requests answered as expected');
  const after = await scrape(app);
  const count = (labels: Record<string, string>) => moved(before, after, REQUESTS, labels);

  t.equal(count({ kind: 'search', type: 'Practitioner', version: 'v2', class: 'lookup', status: '200' }), 2, 'lookups');
  t.equal(count({ kind: 'search', type: 'Practitioner', version: 'v2', class: 'page', status: '200' }), 2, 'pages, GET and POST');
  t.equal(count({ kind: 'search', type: 'Practitioner', version: 'v2', class: 'heavy', status: '200' }), 1, 'a heavy search');
  t.equal(count({ kind: 'search', type: 'Organization', version: 'v1', status: '200' }), 1, 'a v1 search');
  t.equal(count({ kind: 'read', type: 'Practitioner', version: 'v2', class: 'none', status: '200' }), 1, 'a read');
  t.equal(count({ kind: 'read', status: '404' }), 1, 'a read of nothing');
  t.equal(count({ kind: 'metadata', type: 'none', version: 'v2', status: '200' }), 1, 'the CapabilityStatement');
  t.equal(count({ kind: 'lookup', version: 'v2', status: '404' }), 1, '$lookup');
  t.equal(count({ kind: 'search', class: 'none', status: '400' }), 1, 'a bad parameter: refused before it is classified');
  t.equal(count({ kind: 'search', status: '401' }), 1, 'no key');
  t.equal(count({ kind: 'search', type: 'none', status: '404' }), 1, 'an unknown type: no label of its own');
  t.equal(count({ kind: 'other', type: 'none', version: 'none', status: '404' }), 1, 'an unknown path');
  t.equal(count({ kind: 'other', status: '200' }), 2, '/health, and the first scrape');

  const lookups = { kind: 'search', class: 'lookup', status: '200' };
  t.equal(moved(before, after, `${DURATIONS}_count`, lookups), 2, 'the latency histogram counts the lookups');
  t.equal(moved(before, after, `${DURATIONS}_bucket`, { ...lookups, le: '+Inf' }), 2, 'in its +Inf bucket');
  t.ok(moved(before, after, `${DURATIONS}_sum`, lookups) > 0, 'and adds their time');
  t.ok(moved(before, after, `${DURATIONS}_bucket`, { ...lookups, le: '10' }) === 2, 'each under 10 s');

  t.equal(moved(before, after, 'annuaire_lane_wait_seconds_count', { lane: 'heavy' }), 1, 'the heavy search went through its lane');
  t.equal(moved(before, after, 'annuaire_lane_wait_seconds_count', { lane: 'page' }), 3, 'the pages through theirs (the v1 count is one), lookups never');

  const series = samples(after);
  t.same(series.filter((s) => Object.values(s.labels).some((v) => /[?=]|martin|secret|nobody|Nonsense/.test(v))).map((s) => s.name), [], 'no URL, value or id in any label');
  for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_user_seconds_total', 'nodejs_gc_duration_seconds']) {
    t.match(after, `# TYPE ${name} `, `Node's default metrics: ${name}`);
  }
  t.equal(metricValue(after, 'annuaire_resources', { type: 'Practitioner' }), 30, 'resources per type, from the planner\'s estimates');
  // At rest once the statements no response waited for have ended (the estimate begun beside a page
  // that then held every match), within moments: a connection kept in use would stay counted.
  let inUse = metricValue(await scrape(app), 'annuaire_db_pool_connections_in_use');
  for (const until = Date.now() + 5000; inUse !== 0 && Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    inUse = metricValue(await scrape(app), 'annuaire_db_pool_connections_in_use');
  }
  t.equal(inUse, 0, 'no connection in use at rest (the estimates read a minute ago)');
  t.equal(metricValue(after, 'annuaire_db_pool_connections_max', { database: 'primary', pool: 'generic' }), db.generic.options.max, 'the pools\' sizes');
  t.ok(series.some((s) => s.name === 'annuaire_lane_queue_length' && s.labels.lane === 'heavy'), 'the lanes\' queues');
});

t.test('a 429 is counted as such', async (t) => {
  const { app, deps } = await testApp(t, { db });
  const { key } = await deps.keys.create({ name: 'one-per-second', rateLimit: 1 });
  const before = await scrape(app);
  const first = await app.inject({ url: '/fhir/v2/Practitioner?identifier=810100000002', headers: { 'service-api-key': key } });
  const second = await app.inject({ url: '/fhir/v2/Practitioner?identifier=810100000002', headers: { 'service-api-key': key } });
  t.same([first.statusCode, second.statusCode], [200, 429], 'the second request of the second is refused');
  const after = await scrape(app);
  t.equal(moved(before, after, REQUESTS, { kind: 'search', type: 'Practitioner', status: '429' }), 1, 'status="429"');
  t.equal(moved(before, after, REQUESTS, { status: '200', class: 'lookup' }), 1, 'beside the one served');
});

t.test('statement timeouts: answered 503 timeout, counted per pool', async (t) => {
  const pools = poolsOn(t, db.url, { statementTimeoutMs: 300 });
  const { app } = await testApp(t, { db: pools, env: { API_KEYS: API_KEY } });
  await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin', headers }); // keys read, plans made
  const before = await scrape(app);
  // A lock held elsewhere: the lookup waits for it past its statement timeout.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const taken = new Promise<void>((r) => (locked = r));
  const lock = db.sql.begin(async (tx) => {
    await tx`lock table resource in access exclusive mode`;
    locked();
    await held;
  });
  await taken;
  const res = await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin', headers });
  release();
  await lock;
  t.equal(res.statusCode, 503, '503');
  t.equal(res.json().issue[0].code, 'timeout', 'timeout');
  const after = await scrape(app);
  t.equal(moved(before, after, 'annuaire_db_statement_timeouts_total', { database: 'primary', pool: 'generic' }), 1, 'one statement timeout, on the lookups\' pool');
  t.equal(moved(before, after, REQUESTS, { kind: 'search', class: 'lookup', status: '503' }), 1, 'and its 503');
  t.equal(moved(before, after, 'annuaire_db_transient_errors_total'), 0, 'not a transient failure');
});

t.test('a database restart: transient failures and 503s counted, then searches served again', async (t) => {
  const cluster = await ownCluster(t);
  const setup = connectUrl(cluster.url, { max: 4 });
  await migrate(setup);
  const pools = poolsOn(t, cluster.url);
  await load({ ...pools, sql: setup }, [DIRECTORY]);
  await setup.end({ timeout: 1 });
  const { app } = await testApp(t, { db: pools, env: { API_KEYS: API_KEY } });
  const search = () => app.inject({ url: '/fhir/v2/Practitioner?identifier=810100000002', headers });
  t.equal((await search()).statusCode, 200, 'served before');
  const before = await scrape(app);
  await cluster.stop();
  const during = [(await search()).statusCode, (await search()).statusCode];
  await cluster.start();
  let back = 0;
  for (let i = 0; i < 100 && back !== 200; i++) {
    back = (await search()).statusCode;
    if (back !== 200) await sleep(50);
  }
  t.same(during, [503, 503], 'the outage answered 503');
  t.equal(back, 200, 'served again after the restart');
  const after = await scrape(app);
  t.ok(moved(before, after, 'annuaire_db_transient_errors_total', { database: 'primary', pool: 'generic' }) >= 2, 'transient failures counted on the lookups\' pool');
  t.ok(moved(before, after, 'annuaire_db_connection_closes_total', { database: 'primary', pool: 'generic' }) >= 1, 'its connection closed by the restart');
  t.ok(moved(before, after, REQUESTS, { kind: 'search', status: '503' }) >= 2, 'the 503s counted');
  t.ok(moved(before, after, REQUESTS, { kind: 'search', status: '200' }) >= 1, 'and the search served again');
  t.equal(metricValue(after, 'annuaire_db_pool_connections_in_use'), 0, 'nothing left in flight');
});

t.test('lanes: searches that wait their turn are timed', async (t) => {
  const { app } = await testApp(t, { db, env: { API_KEYS: API_KEY, HEAVY_SEARCHES: '1', WORKERS: '1' } });
  const before = await scrape(app);
  const answers = await Promise.all(['art', 'ar', 'mar', 'tin'].map((n) => app.inject({ url: `/fhir/v2/Practitioner?name:contains=${n}`, headers })));
  t.same(answers.map((a) => a.statusCode), [200, 200, 200, 200]);
  const after = await scrape(app);
  t.equal(moved(before, after, 'annuaire_lane_wait_seconds_count', { lane: 'heavy' }), 4, 'four heavy searches admitted');
  t.ok(moved(before, after, 'annuaire_lane_wait_seconds_sum', { lane: 'heavy' }) > 0, 'one at a time: the others waited');
  t.equal(metricValue(after, 'annuaire_lane_width', { lane: 'heavy' }), 1, 'the lane\'s width');
  t.equal(metricValue(after, 'annuaire_lane_queue_length'), 0, 'and no queue left');
});

t.test('METRICS_ENABLED=false: no /metrics; METRICS_PORT: not on the main port', async (t) => {
  for (const env of [{ METRICS_ENABLED: 'false' }, { METRICS_PORT: '19999' }] as Record<string, string>[]) {
    const { app, deps } = await testApp(t, { db, env: { API_KEYS: API_KEY, ...env } });
    const what = JSON.stringify(env);
    t.equal((await app.inject({ url: '/metrics', headers })).statusCode, 404, `${what}: 404 with a key`);
    t.equal((await app.inject({ url: '/metrics' })).statusCode, 401, `${what}: closed like any unknown path`);
    t.equal((await app.inject({ url: '/fhir/v2/Practitioner?_id=pra-helene-martin', headers })).statusCode, 200, `${what}: searches as usual`);
    t.equal(deps.metrics === undefined, env.METRICS_ENABLED === 'false', `${what}: metrics ${deps.metrics ? 'kept' : 'not made'}`);
  }
  t.throws(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' }), /METRICS_PORT \(8080\) must differ from PORT/);
  t.throws(() => loadConfig({ METRICS_ENABLED: 'maybe' }), /METRICS_ENABLED must be true or false/);
});

t.test('writer runs: the last load, import or sync of each outcome, the kind left open', async (t) => {
  const fresh = await testDatabase(t);
  const ok = await loaderCli(fresh, [DIRECTORY]);
  t.equal(ok.code, 0, 'npm run load', { stderr: ok.stderr });
  const refused = await loaderCli(fresh, ['--bulk', DIRECTORY]);
  t.equal(refused.code, 1, 'a bulk load into a full database fails');
  const runs = await fresh.sql<{ kind: string; outcome: string; finished: boolean; detail: Record<string, unknown> }[]>`
    select kind, outcome, finished_at is not null as finished, detail from writer_run order by id`;
  t.match(runs, [
    { kind: 'load', outcome: 'success', finished: true, detail: { files: 6, bulk: false, inserted: 114, rejected: 0 } },
    { kind: 'load', outcome: 'failure', finished: true, detail: { bulk: true, error: /needs an empty database/ } },
  ], 'each run recorded with its outcome and figures');
  // A run killed midway, and another writer's run.
  await fresh.sql`insert into writer_run (kind, started_at) values ('load', now())`;
  await fresh.sql`insert into writer_run (kind, started_at, finished_at, outcome) values ('import', now() - interval '2 hours', now() - interval '1 hour', 'success')`;

  const { app } = await testApp(t, { db: fresh });
  const text = await scrape(app);
  const [{ at }] = await fresh.sql<{ at: number }[]>`select extract(epoch from max(finished_at))::float8 as at from writer_run where kind = 'load' and outcome = 'success'`;
  t.equal(metricValue(text, 'annuaire_last_run_timestamp_seconds', { kind: 'load', outcome: 'success' }), at, 'the last successful load, as Unix time');
  t.ok(metricValue(text, 'annuaire_last_run_timestamp_seconds', { kind: 'load', outcome: 'failure' }) >= at, 'the failed one after it');
  t.ok(Math.abs(metricValue(text, 'annuaire_last_run_duration_seconds', { kind: 'import', outcome: 'success' }) - 3600) < 1, 'an import\'s run and its duration');
  t.same(samples(text).filter((s) => s.labels.outcome === 'running'), [], 'a run that never finished is not one');
  t.equal(metricValue(text, 'annuaire_resources', { type: 'Organization' }), 25, 'the resources loaded');
});
