import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PrimaryCounters } from '../src/cluster.ts';
import { FIXTURES, load } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { freePort, getFresh, startServer as start } from './helpers/server.ts';

/**
 * WORKERS=2: the real server as two processes on one port (src/cluster.ts), on a real database.
 * Requests go over fresh connections, which the primary hands to the workers in turn, so
 * consecutive requests are served by different processes.
 */
t.test('the primary counts fixed windows per key', async (t) => {
  let now = 1_000;
  const c = new PrimaryCounters(() => now);
  t.same(c.count('k', 1000), { current: 1, ttl: 1000 });
  now += 400;
  t.same(c.count('k', 1000), { current: 2, ttl: 600 });
  t.same(c.count('other', 1000), { current: 1, ttl: 1000 }, 'keys apart');
  now += 600;
  t.same(c.count('k', 1000), { current: 1, ttl: 1000 }, 'a new window');
});

const KEY = 'cluster-test-key-0123456789';
const startServer = (t: Parameters<typeof start>[0], env: Record<string, string>) => start(t, { API_KEYS: KEY, ...env });

/** GET over a new connection, with the key: each request may land on another worker. */
const get = (port: number, path: string) => getFresh(port, path, KEY);

t.test('two workers: shared cursor key, shared rate limit, a dead worker replaced, graceful stop', async (t) => {
  const db = await testDatabase(t);
  await load(db, [FIXTURES]);
  const port = await freePort();
  const proc = startServer(t, { WORKERS: '2', PORT: String(port), DATABASE_URL: db.url, RATE_LIMIT: '0', CURSOR_SECRET: '', DB_POOL_SIZE: '4' });
  const { server, exited } = proc;
  t.equal(await proc.ready(2), 2, 'two workers ready');
  // The workers are the primary's children running dist/server.js.
  const workerPids = () => execFileSync('pgrep', ['-P', String(server.pid), '-f', 'dist/server\\.js'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  t.equal(workerPids().length, 2, 'two worker processes');

  // Paging through every practitioner, one page of 3 per request, each on a new connection: the
  // next links are signed by one worker and read by the other.
  const ids: string[] = [];
  let path: string | undefined = '/fhir/v2/Practitioner?_count=3';
  for (let i = 0; path && i < 50; i++) {
    const r = await get(port, path);
    t.equal(r.status, 200, `page ${i + 1}`);
    const b = JSON.parse(r.body) as { entry?: { resource: { id: string } }[]; link: { relation: string; url: string }[] };
    ids.push(...(b.entry ?? []).map((e) => e.resource.id));
    const next = b.link.find((l) => l.relation === 'next')?.url;
    path = next ? new URL(next).pathname + new URL(next).search : undefined;
  }
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from resource where type = 'Practitioner'`;
  t.equal(ids.length, n, 'every practitioner once');
  t.equal(new Set(ids).size, n, 'no duplicates');

  // A worker killed is replaced.
  const [victim] = workerPids();
  process.kill(victim, 'SIGKILL');
  t.equal(await proc.ready(3), 3, 'a third worker ready');
  t.equal(workerPids().length, 2, 'a new worker took its place');
  t.notOk(workerPids().includes(victim));
  t.match(proc.output, new RegExp(`worker ${victim} exited \\(SIGKILL\\): starting another`), 'logged');
  for (let i = 0; i < 4; i++) t.equal((await get(port, '/fhir/v2/Practitioner?_count=1')).status, 200, `served after the restart (${i + 1})`);

  server.kill('SIGTERM');
  const code = await exited;
  t.equal(code, 0, 'SIGTERM: the primary exits 0 once its workers are done', { output: proc.output.slice(-2000) });
});

t.test('two workers share one rate limit per key (counted by the primary)', async (t) => {
  const db = await testDatabase(t);
  const port = await freePort();
  const proc = startServer(t, { WORKERS: '2', PORT: String(port), DATABASE_URL: db.url, RATE_LIMIT: '5', DB_POOL_SIZE: '4', REDIS_URL: '' });
  t.equal(await proc.ready(2), 2, 'two workers ready');
  // Wait for the start of a second, then 12 requests at once over 12 connections.
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const statuses = (await Promise.all(Array.from({ length: 12 }, () => get(port, '/fhir/v2/Practitioner?_count=1')))).map((r) => r.status);
  const ok = statuses.filter((s) => s === 200).length;
  t.ok(ok >= 5 && ok <= 6, `5 answered in the window (6 if it turned meanwhile), the rest 429: ${statuses.join(' ')}`);
  t.equal(statuses.filter((s) => s === 429).length, 12 - ok);
  proc.server.kill('SIGTERM');
});

t.test('one process on the embedded default: SIGTERM finishes, stops PostgreSQL and exits 0', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'annuaire-sigterm-'));
  await chmod(dataDir, 0o755); // mkdtemp makes it 0700: the postgres user (tests as root) must reach pg/
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const proc = startServer(t, { DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), LOAD_DEMO_DATA: 'false', WORKERS: '1' });
  t.equal(await proc.ready(1), 1, 'ready');
  t.equal((await get(port, '/fhir/v2/Practitioner')).status, 200);
  t.ok(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'PostgreSQL runs');
  proc.server.kill('SIGTERM');
  t.equal(await proc.exited, 0, 'exit code 0', { output: proc.output.slice(-1500) });
  t.notOk(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'PostgreSQL was stopped');
});
