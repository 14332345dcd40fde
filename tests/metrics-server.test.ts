import t from 'tap';
import { FIXTURES, load } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { metricValue } from './helpers/metrics.ts';
import { freePort, getFresh, startServer } from './helpers/server.ts';

/**
 * The real server (its build, as `npm start` runs it): METRICS_PORT on a listener of its own, and
 * the metrics of WORKERS=2 aggregated by the primary whichever way they are scraped.
 */
const KEY = 'metrics-server-key-0123456789';
const db = await testDatabase(t);
await load(db, [FIXTURES]);

/** GET over a new connection, with the key unless `key` is null: each request may land on another worker. */
const get = (port: number, path: string, key: string | null = KEY) => getFresh(port, path, key ?? undefined);

const LOOKUP = '/fhir/v2/Practitioner?identifier=810100000002';
const lookups = { kind: 'search', class: 'lookup', status: '200' };

t.test('one process, METRICS_PORT: /metrics there only', async (t) => {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const proc = startServer(t, { PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: db.url, API_KEYS: KEY });
  t.equal(await proc.ready(1), 1, 'ready', { output: proc.output });
  for (let i = 0; i < 3; i++) t.equal((await get(port, LOOKUP)).status, 200);
  t.equal((await get(port, '/metrics')).status, 404, 'not on PORT (with a key)');
  t.equal((await get(port, '/metrics', null)).status, 401, 'closed there without one');
  const scraped = await get(metricsPort, '/metrics', null);
  t.equal(scraped.status, 200, 'on METRICS_PORT, without a key');
  t.equal(metricValue(scraped.body, 'annuaire_http_requests_total', lookups), 3, 'the lookups counted');
  t.equal((await get(metricsPort, '/fhir/v2/metadata', null)).status, 404, 'nothing else there');
  proc.server.kill('SIGTERM');
  t.equal(await proc.exited, 0, 'stops cleanly');
});

t.test('WORKERS=2: every scrape answers both workers\' metrics, aggregated', async (t) => {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const onPort = startServer(t, { WORKERS: '2', PORT: String(port), DATABASE_URL: db.url, API_KEYS: KEY, RATE_LIMIT: '0' });
  t.equal(await onPort.ready(2), 2, 'two workers ready');
  const n = 12;
  for (let i = 0; i < n; i++) t.equal((await get(port, LOOKUP)).status, 200);
  const scrapes = [await get(port, '/metrics', null), await get(port, '/metrics', null)];
  for (const [i, s] of scrapes.entries()) {
    t.equal(s.status, 200, `scrape ${i + 1} on PORT`, { body: s.body });
    t.equal(metricValue(s.body, 'annuaire_http_requests_total', lookups), n, `scrape ${i + 1}: all ${n} lookups, whichever worker served them or the scrape`);
    t.equal(metricValue(s.body, 'annuaire_db_pool_connections_max', { pool: 'generic' }), 2 * 1, 'the pools of both workers (DB_POOL_SIZE 3: one generic connection each)');
  }
  t.equal(scrapes[0].body.match(/^nodejs_heap_size_used_bytes /gm)?.length, 1, 'one series per metric (summed, not one per worker)');
  t.equal(metricValue(scrapes[0].body, 'annuaire_resources', { type: 'Practitioner' }), metricValue(scrapes[1].body, 'annuaire_resources', { type: 'Practitioner' }), 'the data\'s figures not added up');
  t.ok(metricValue(scrapes[0].body, 'annuaire_resources', { type: 'Practitioner' }) > 0);
  onPort.server.kill('SIGTERM');
  t.equal(await onPort.exited, 0);

  const own = startServer(t, { WORKERS: '2', PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: db.url, API_KEYS: KEY, RATE_LIMIT: '0' });
  t.equal(await own.ready(2), 2, 'two workers ready, METRICS_PORT set');
  for (let i = 0; i < n; i++) t.equal((await get(port, LOOKUP)).status, 200);
  t.equal((await get(port, '/metrics')).status, 404, 'not on PORT');
  const s = await get(metricsPort, '/metrics', null);
  t.equal(s.status, 200, 'the primary\'s listener');
  t.equal(metricValue(s.body, 'annuaire_http_requests_total', lookups), n, `all ${n} lookups`);
  own.server.kill('SIGTERM');
  t.equal(await own.exited, 0);
});
