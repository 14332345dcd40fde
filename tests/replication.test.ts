import t from 'tap';
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, makeDeps } from '../src/app.ts';
import { loadConfig, scaleOutProblem } from '../src/config.ts';
import { migrate } from '../src/db.ts';
import { loadFiles } from '../src/load/loader.ts';
import { expandPaths } from '../src/load/sources.ts';
import { registry } from '../src/registry/index.ts';
import { formatLsn, parseLsn, ReplicaSet, type DatabaseStatus } from '../src/store/replicas.ts';
import { FIXTURES, ROOT } from './helpers/app.ts';
import { userNode } from './helpers/command.ts';
import { poolsOn } from './helpers/db.ts';
import { metricValue, samples } from './helpers/metrics.ts';
import { REDIS_TEST_URL, redisMissing } from './helpers/redis.ts';
import { freePort, replayed, replicatedPair, type PgNode } from './helpers/replication.ts';

/**
 * Searches on a real hot standby (DATABASE_READ_URL): a primary and a standby streaming from it,
 * built from the embedded binaries; the server in front of them over real HTTP, paging by the
 * next links with the default page size while the databases are stopped and replay is paused.
 */
const noRedis = await redisMissing();

t.test('WAL positions and the scale-out configuration', async (t) => {
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) | 0xb374d848n);
  t.equal(formatLsn(parseLsn('0/3000060')), '0/3000060');
  t.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'), 'positions compare as numbers');
  const base = { databaseUrl: 'postgres://db/x', cursorSecret: undefined };
  t.equal(scaleOutProblem({ ...base, databaseReadUrls: [] }), undefined, 'no replicas: a random secret is fine');
  t.match(scaleOutProblem({ ...base, databaseReadUrls: ['postgres://r/x'] }), /CURSOR_SECRET/, 'replicas without CURSOR_SECRET are refused');
  t.match(scaleOutProblem({ databaseReadUrls: ['postgres://r/x'], cursorSecret: 'x'.repeat(16), databaseUrl: undefined }), /DATABASE_URL/);
  t.equal(scaleOutProblem({ ...base, databaseReadUrls: ['postgres://r/x'], cursorSecret: 'x'.repeat(16) }), undefined);
  t.same(loadConfig({ DATABASE_READ_URL: 'postgres://a/x, postgres://b/x' }).databaseReadUrls, ['postgres://a/x', 'postgres://b/x']);
  t.throws(() => loadConfig({ DATABASE_READ_URL: 'mysql://a/x' }), /DATABASE_READ_URL/);
  t.equal(loadConfig({}).maxReplicaLagS, 30);
});

const KEY = `replication-${randomBytes(12).toString('hex')}`;
const SECRET = 'replication-cursor-secret-0123';

/** A Bundle of `n` Practitioners of the family `family`, loaded by the real loader. */
async function loadPractitioners(t: { teardown(fn: () => unknown): void }, sql: Parameters<typeof loadFiles>[0], family: string, n: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'replication-data-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const entry = Array.from({ length: n }, (_, i) => ({
    resource: { resourceType: 'Practitioner', id: `${family.toLowerCase()}-${i}`, active: true, name: [{ family, given: [`G${i}`] }] },
  }));
  const file = path.join(dir, `${family}.json`);
  writeFileSync(file, JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry }));
  const s = await loadFiles(sql, registry, await expandPaths([file]), {});
  if (s.inserted !== n) throw new Error(`loaded ${s.inserted} of ${n}`);
}

interface Instance {
  app: FastifyInstance;
  replicas: ReplicaSet;
  base: string;
  logs: string[];
}

async function instance(t: { teardown(fn: () => unknown): void }, primary: PgNode, reads: string[], opts: { maxLagS?: number; env?: Record<string, string> } = {}): Promise<Instance> {
  const db = poolsOn(t, primary.url, { statementTimeoutMs: 5000 });
  const logs: string[] = [];
  const replicas = ReplicaSet.connect({ url: primary.url, pools: db }, reads, { max: 2, genericMax: 2, heavyMax: 2, statementTimeoutMs: 5000 }, {
    maxLagS: opts.maxLagS ?? 2,
    checkMs: 200,
    log: (m) => logs.push(m),
  });
  await replicas.start();
  t.teardown(() => replicas.close());
  const config = loadConfig({ CURSOR_SECRET: SECRET, RATE_LIMIT: '0', TOTAL_BUDGET_MS: '5000', API_KEYS: KEY, STATEMENT_TIMEOUT_MS: '5000', ...opts.env });
  const app = await buildApp(makeDeps(config, db, registry, undefined, replicas));
  t.teardown(() => app.close());
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, replicas, base: address, logs };
}

async function get(url: string): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(url, { headers: { 'service-api-key': KEY } });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

interface Bundle {
  total?: number;
  entry?: { resource: { id: string } }[];
  link: { relation: string; url: string }[];
}

/**
 * Follows every next link from `first`; `between(page)` runs after each page (before the next).
 * Every page must answer 200: the ids in order, and the statuses of failures, if any.
 */
async function pageAll(first: string, between: (page: number) => Promise<void> = async () => {}, rebase?: (url: string) => string) {
  const ids: string[] = [];
  const failures: string[] = [];
  let url: string | undefined = first;
  for (let page = 1; url; page++) {
    const res = await get(url);
    if (res.status !== 200) {
      failures.push(`page ${page}: ${res.status} ${res.body.slice(0, 200)}`);
      break;
    }
    const b = JSON.parse(res.body) as Bundle;
    ids.push(...(b.entry ?? []).map((e) => e.resource.id));
    const next = b.link.find((l) => l.relation === 'next')?.url;
    await between(page);
    url = next && rebase ? rebase(next) : next;
  }
  return { ids, failures };
}

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not within 60 s: ${what}`);
}

const stateOf = (i: Instance, role: 'primary' | 'replica'): DatabaseStatus => i.replicas.status().find((d) => d.role === role)!;

t.test('searches on a hot standby', async (t) => {
  const { primary, standby } = await replicatedPair(t);
  const admin = poolsOn(t, primary.url);
  await migrate(admin.sql);
  await loadFiles(admin.sql, registry, await expandPaths([path.join(FIXTURES, 'directory')]), {});
  await loadPractitioners(t, admin.sql, 'Replica', 170);
  const expected = async () => (await primary.query<{ id: string }>(`select id from resource where type = 'Practitioner'`)).map((r) => r.id).sort();
  const all = await expected();
  t.ok(all.length > 150, `${all.length} Practitioners: several pages of the default size`);
  await replayed(primary, standby);

  const one = await instance(t, primary, [standby.url]);
  const search = `${one.base}/fhir/v2/Practitioner`;

  t.test('data loaded on the primary is found through the server once replayed', async (t) => {
    const { ids, failures } = await pageAll(search);
    t.same(failures, []);
    t.same([...ids].sort(), all, 'every Practitioner, once');
    await loadPractitioners(t, admin.sql, 'Later', 3);
    await replayed(primary, standby);
    const res = await get(`${one.base}/fhir/v2/Practitioner?family=Later`);
    t.equal((JSON.parse(res.body) as Bundle).total, 3, 'a later load, once replayed', { body: res.body.slice(0, 500) });
    const ready = JSON.parse((await get(`${one.base}/ready`)).body) as { status: string; databases: DatabaseStatus[] };
    t.equal(ready.status, 'ready');
    t.same(ready.databases.map((d) => [d.role, d.state]), [['primary', 'up'], ['replica', 'up']], '/ready: each database and its state');
    t.notMatch(JSON.stringify(ready), /postgres@|password/, 'no credentials in /ready');
  });

  t.test('searches keep answering with the primary stopped', async (t) => {
    const now = await expected();
    await primary.stop();
    await until('the primary seen down', () => stateOf(one, 'primary').state === 'down');
    const { ids, failures } = await pageAll(search);
    t.same(failures, [], 'no failed request');
    t.same([...ids].sort(), now, 'every Practitioner, from the standby');
    t.equal((await get(`${one.base}/fhir/v2/Practitioner/replica-1`)).status, 200, 'a read');
    const ready = await get(`${one.base}/ready`);
    t.equal(ready.status, 200, '/ready: ready while the standby answers');
    t.match(ready.body, /"role":"primary","state":"down"/);
    await primary.start();
    await until('the primary back', () => stateOf(one, 'primary').state === 'up');
    t.ok(one.logs.some((l) => /^primary .*: up → down/.test(l)) && one.logs.some((l) => /^primary .*: down → up/.test(l)), 'a log line at each change');
  });

  t.test('a standby stopped mid-paging is routed around', async (t) => {
    const now = await expected();
    const { ids, failures } = await pageAll(search, async (page) => {
      if (page === 1) await standby.stop();
    });
    t.same(failures, [], 'no failed request');
    t.same([...ids].sort(), now, 'no match skipped or repeated');
    t.equal(stateOf(one, 'replica').state, 'down', 'the standby out of rotation');
    const metrics = (await get(`${one.base}/metrics`)).body;
    const name = stateOf(one, 'replica').name;
    t.same(['up', 'down', 'lagging'].map((state) => metricValue(metrics, 'annuaire_replica_state', { replica: name, state })), [0, 1, 0], 'the metrics: down');
    t.ok(samples(metrics).some((x) => x.name === 'annuaire_db_pool_connections_max' && x.labels.database === name), 'its pools beside the primary\'s');
    await standby.start();
    await until('the standby back in rotation', () => stateOf(one, 'replica').state === 'up');
    // A standby that restarts behind the primary may be lagging on its way back up.
    t.ok(one.logs.some((l) => /^replica .*: down → (up|lagging)/.test(l)) && one.logs.some((l) => /^replica .*: \w+ → up/.test(l)), 'logged');
  });

  t.test('a lagging standby is taken out of rotation and comes back', async (t) => {
    await standby.query('select pg_wal_replay_pause()');
    await loadPractitioners(t, admin.sql, 'Paused', 5);
    await until('the standby seen lagging', () => stateOf(one, 'replica').state === 'lagging');
    const res = await get(`${one.base}/fhir/v2/Practitioner?family=Paused`);
    t.equal((JSON.parse(res.body) as Bundle).total, 5, 'searches go to the primary meanwhile');
    const ready = JSON.parse((await get(`${one.base}/ready`)).body) as { databases: DatabaseStatus[] };
    t.ok((ready.databases[1].lagS ?? 0) >= 2, `/ready reports the lag (${ready.databases[1].lagS} s)`);
    const metrics = (await get(`${one.base}/metrics`)).body;
    const name = stateOf(one, 'replica').name;
    t.equal(metricValue(metrics, 'annuaire_replica_state', { replica: name, state: 'lagging' }), 1, 'the metrics: lagging');
    t.ok(metricValue(metrics, 'annuaire_replica_lag_seconds', { replica: name }) >= 2, 'and its lag');
    await standby.query('select pg_wal_replay_resume()');
    await until('the standby caught up', () => stateOf(one, 'replica').state === 'up');
    // Back in rotation within the lag limit; then, replay done and the primary idle, no lag at all
    // (a sample taken while the last records were replaying may still read a fraction of a second).
    await until('the standby at no lag, though the primary is idle', () => stateOf(one, 'replica').lagS === 0);
    t.equal(stateOf(one, 'replica').lagS, 0, 'no lag once replayed, though the primary is idle');
    t.ok(one.logs.some((l) => /^replica .*: up → lagging/.test(l)), 'logged');
  });

  t.test('a next link made on one database is answered on another without going back in time', async (t) => {
    // Instance `ahead` reads the primary itself; `behind` a standby whose replay is paused, kept in
    // rotation (a lag it tolerates): a next link made by the first must not be answered from it.
    const ahead = await instance(t, primary, [primary.url]);
    const behind = await instance(t, primary, [standby.url], { maxLagS: 3600 });
    await standby.query('select pg_wal_replay_pause()');
    t.teardown(() => standby.query('select pg_wal_replay_resume()'));
    await loadPractitioners(t, admin.sql, 'Fresh', 60);
    const now = await expected();
    const rebase = (url: string) => url.replace(ahead.base, behind.base);
    const { ids, failures } = await pageAll(`${ahead.base}/fhir/v2/Practitioner`, async () => {}, rebase);
    t.same(failures, []);
    t.equal(stateOf(behind, 'replica').state, 'up', 'the paused standby stays in rotation');
    t.same([...ids].sort(), now, 'the next pages read where the first was: nothing skipped');
    const first = await get(`${behind.base}/fhir/v2/Practitioner?family=Fresh`);
    t.equal((JSON.parse(first.body) as Bundle).total ?? 0, 0, 'while a first page on the paused standby does not see them yet');
  });

  t.test('npm start with DATABASE_READ_URL: the standby, then the primary stopped while a client pages', async (t) => {
    const env = { DATABASE_URL: primary.url, DATABASE_READ_URL: standby.url, API_KEYS: KEY, RATE_LIMIT: '0', REDIS_URL: '', WORKERS: '1' };
    const refused = spawnSync(...userNode([path.join(ROOT, 'dist', 'server.js')]), { env: { ...process.env, ...env, CURSOR_SECRET: '' }, encoding: 'utf8', timeout: 30_000 });
    t.equal(refused.status, 1, 'refused without CURSOR_SECRET');
    t.match(refused.stderr, /DATABASE_READ_URL is set but CURSOR_SECRET is not/);

    const port = await freePort();
    const server = spawn(...userNode([path.join(ROOT, 'dist', 'server.js')]), {
      env: { ...process.env, ...env, CURSOR_SECRET: SECRET, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (c) => (output += c));
    server.stderr.on('data', (c) => (output += c));
    t.teardown(() => void (server.exitCode === null && server.kill('SIGKILL')));
    await until('the server ready', () => /FHIR server ready/.test(output) || server.exitCode !== null);
    const base = `http://127.0.0.1:${port}`;
    const replicaState = async () => ((JSON.parse((await get(`${base}/ready`)).body) as { databases: DatabaseStatus[] }).databases[1].state);
    await replayed(primary, standby);
    const now = await expected();
    const { ids, failures } = await pageAll(`${base}/fhir/v2/Practitioner`, async (page) => {
      if (page === 1) await standby.stop();
      if (page === 2) {
        await standby.start();
        await until('the standby back in rotation', async () => (await replicaState()) === 'up');
      }
      if (page === 3) await primary.stop();
    });
    t.same(failures, [], 'no failed request', { output: output.slice(-3000) });
    t.same([...ids].sort(), now, 'every match once');
    t.match(output, /"replica 127\.0\.0\.1:\d+\/postgres: up[" ]/, 'each database\'s state at start-up in the log');
    await primary.start();
    server.kill('SIGTERM');
  });

  t.test('two instances share a key\'s rate limit through Redis', { skip: noRedis ?? false }, async (t) => {
    const env = { RATE_LIMIT: '4', REDIS_URL: REDIS_TEST_URL };
    const a = await instance(t, primary, [standby.url], { env });
    const b = await instance(t, primary, [standby.url], { env });
    await replayed(primary, standby);
    const remaining: string[] = [];
    for (const i of [a, b, a, b]) {
      const res = await get(`${i.base}/fhir/v2/Practitioner/replica-1`);
      t.equal(res.status, 200);
      remaining.push(String(res.headers.get('ratelimit-remaining')));
    }
    t.same(remaining, ['3', '2', '1', '0'], 'one counter for both instances');
    t.equal((await get(`${b.base}/fhir/v2/Practitioner/replica-1`)).status, 429);
  });
});
