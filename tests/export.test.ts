/**
 * Bulk export ($export, FHIR Bulk Data) over real HTTP on the dataset of fixtures/directory: kick-off,
 * polling as a client does (Retry-After), downloads compared with the stored resources, `_type` and
 * `_since`, another key, cancel, gzip, bad kick-offs, the queue, a job left running by a stopped
 * process, files split by size, and the files loaded back into an empty database by `npm run load`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import t, { type TAP } from 'tap';
import type { Database } from '../src/db.ts';
import { FIXTURES, load, ROOT, testApp } from './helpers/app.ts';
import { userNode } from './helpers/command.ts';
import { testDatabase } from './helpers/db.ts';

const KEY = 'export-key-0123456789abcdef';
const OTHER = 'export-other-key-0123456789';
const exportDir = await mkdtemp(path.join(os.tmpdir(), 'export-test-'));
t.teardown(() => rm(exportDir, { recursive: true, force: true }));

const { app, db } = await testApp(t, { env: { API_KEYS: `${KEY},${OTHER}`, PUBLIC_BASE_URL: '', EXPORT_DIR: exportDir } });
await load(db, [path.join(FIXTURES, 'directory')]);
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

type Resource = { resourceType: string; id: string; meta?: { lastUpdated?: string } };
interface Manifest {
  transactionTime: string;
  request: string;
  requiresAccessToken: boolean;
  output: { type: string; url: string; count: number }[];
  error: unknown[];
}

/** The stored resources, read from the database (what an export must give back). */
async function stored(on: Database): Promise<Map<string, Resource>> {
  const rows = await on.sql<{ content: Resource }[]>`select content from resource`;
  return new Map(rows.map((r) => [`${r.content.resourceType}/${r.content.id}`, r.content]));
}
const all = await stored(db);
const byKey = (m: Map<string, Resource>, keep: (r: Resource) => boolean) => new Map([...m].filter(([, r]) => keep(r)));

const http = (url: string, init: RequestInit & { key?: string | null } = {}) => {
  const headers: Record<string, string> = { accept: 'application/fhir+json', ...(init.headers as Record<string, string>) };
  if (init.key !== null) headers['service-api-key'] = init.key ?? KEY;
  return fetch(url.startsWith('http') ? url : `${base}${url}`, { ...init, headers });
};
const kickOff = (query = '', init: RequestInit & { key?: string } = {}) =>
  http(`/fhir/v2/$export${query}`, { ...init, headers: { prefer: 'respond-async', ...(init.headers as Record<string, string>) } });

/** Polls the status URL as a client does (waiting Retry-After) until it is no longer 202. */
async function poll(status: string, key = KEY): Promise<Response> {
  for (let i = 0; i < 300; i++) {
    const res = await http(status, { key });
    if (res.status !== 202) return res;
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
  throw new Error(`${status} still running`);
}

type Tap = Pick<TAP, 'equal' | 'match' | 'fail'>;

/** Kick-off → status URL → manifest, the resources of every file, by Type/id. */
async function exportAll(tt: Tap, query = '', init: RequestInit = {}) {
  const res = await kickOff(query, init);
  tt.equal(res.status, 202, `kick-off ${query} → 202`);
  const status = res.headers.get('content-location')!;
  tt.match(status, new RegExp(`^${base}/fhir/v2/\\$export-status/`), 'Content-Location is the status URL');
  const done = await poll(status);
  tt.equal(done.status, 200, 'the job ends with the manifest');
  const manifest = (await done.json()) as Manifest;
  const got = new Map<string, Resource>();
  for (const o of manifest.output) {
    const file = await http(o.url, { headers: { 'accept-encoding': 'identity' } });
    const lines = (await file.text()).split('\n');
    tt.equal(lines.pop(), '', `${o.url} ends with a newline`);
    tt.equal(lines.length, o.count, `${o.type}: count is the number of lines`);
    for (const line of lines) {
      const r = JSON.parse(line) as Resource;
      if (r.resourceType !== o.type) tt.fail(`${o.url}: a ${r.resourceType} in the ${o.type} file`);
      got.set(`${r.resourceType}/${r.id}`, r);
    }
  }
  return { manifest, got, status, done };
}

t.test('a full export gives back every stored resource, of all six types', async (t) => {
  const { manifest, got, done } = await exportAll(t);
  t.same(Object.keys(manifest).sort(), ['error', 'output', 'request', 'requiresAccessToken', 'transactionTime']);
  t.equal(manifest.requiresAccessToken, true);
  t.equal(manifest.request, `${base}/fhir/v2/$export`);
  const kept = Date.parse(done.headers.get('expires')!) - Date.now();
  t.ok(kept > 23 * 3600_000 && kept <= 24 * 3600_000, `kept EXPORT_TTL_HOURS (24 by default): Expires ${done.headers.get('expires')}`);
  t.ok(Date.parse(manifest.transactionTime) <= Date.now(), 'transactionTime is an instant of the past');
  t.same([...new Set(manifest.output.map((o) => o.type))].sort(), ['Device', 'HealthcareService', 'Location', 'Organization', 'Practitioner', 'PractitionerRole']);
  t.same(got, all, 'the files hold exactly the stored resources');
  const cs = (await (await http('/fhir/v2/metadata')).json()) as { rest: { operation?: unknown }[] };
  t.match(cs.rest[0].operation, [{ name: 'export', definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/export' }], 'the CapabilityStatement declares $export');
});

t.test('_type and _since select the types and the resources updated after the instant', async (t) => {
  const typed = await exportAll(t, '?_type=Organization,Device');
  t.same(typed.got, byKey(all, (r) => r.resourceType === 'Organization' || r.resourceType === 'Device'));
  t.equal(typed.manifest.request, `${base}/fhir/v2/$export?_type=Organization%2CDevice`);

  const stamps = [...new Set([...all.values()].map((r) => r.meta!.lastUpdated!))].sort();
  t.ok(stamps.length > 2, 'the dataset has several lastUpdated instants');
  const since = stamps[Math.floor(stamps.length / 2)];
  const after = byKey(all, (r) => Date.parse(r.meta!.lastUpdated!) > Date.parse(since));
  t.ok(after.size > 0 && after.size < all.size, `some resources, not all, were updated after ${since}`);
  t.same((await exportAll(t, `?_since=${encodeURIComponent(since)}`)).got, after);
  t.same(
    (await exportAll(t, `?_since=${encodeURIComponent(since)}&_type=Practitioner&_outputFormat=application/fhir%2Bndjson`)).got,
    byKey(after, (r) => r.resourceType === 'Practitioner'),
  );
  const future = await exportAll(t, '?_since=2999-01-01T00:00:00Z');
  t.same(future.manifest.output, [], 'nothing after a future instant: no file');
});

t.test('POST kick-off with a Parameters body', async (t) => {
  const body = {
    resourceType: 'Parameters',
    parameter: [
      { name: '_type', valueString: 'PractitionerRole' },
      { name: '_outputFormat', valueString: 'ndjson' },
    ],
  };
  const { got } = await exportAll(t, '', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/fhir+json', prefer: 'respond-async' } });
  t.same(got, byKey(all, (r) => r.resourceType === 'PractitionerRole'));
});

t.test('only the key that started a job sees, downloads or cancels it', async (t) => {
  const { manifest, status } = await exportAll(t, '?_type=Organization');
  for (const url of [status, manifest.output[0].url]) {
    const res = await http(url, { key: OTHER });
    t.equal(res.status, 404, `another key: GET ${url} → 404`);
    t.equal(((await res.json()) as { resourceType: string }).resourceType, 'OperationOutcome');
    t.equal((await http(url, { key: null })).status, 401, `no key: GET ${url} → 401`);
  }
  t.equal((await http(status, { method: 'DELETE', key: OTHER })).status, 404, 'another key cannot cancel it');
  t.equal((await http(manifest.output[0].url)).status, 200, 'the job is still there for its own key');
  t.equal((await http(`${status.replace(/[^/]+$/, '')}00000000-0000-4000-8000-000000000000`)).status, 404, 'an unknown job → 404');
  const bad = await http(`${manifest.output[0].url.replace(/[^/]+$/, '')}..%2F..%2Fetc%2Fpasswd`);
  t.equal(bad.status, 404, 'a file not in the manifest → 404');
});

t.test('a cancelled job and its files are gone', async (t) => {
  const { manifest, status } = await exportAll(t, '?_type=Practitioner');
  const id = status.split('/').at(-1)!;
  t.ok(existsSync(path.join(exportDir, id)), 'the files are in EXPORT_DIR/<job>');
  const del = await http(status, { method: 'DELETE' });
  t.equal(del.status, 202, 'DELETE → 202');
  t.notOk(existsSync(path.join(exportDir, id)), 'its folder is deleted');
  t.equal((await http(status)).status, 404, 'its status → 404');
  t.equal((await http(manifest.output[0].url)).status, 404, 'its files → 404');
  t.equal((await http(status, { method: 'DELETE' })).status, 404, 'a second DELETE → 404');

  // Cancelled before it could finish (queued or running): nothing is left of it either.
  const res = await kickOff();
  const next = res.headers.get('content-location')!;
  t.equal((await http(next, { method: 'DELETE' })).status, 202);
  t.equal((await poll(next)).status, 404, 'the cancelled job never comes back');
  t.notOk(existsSync(path.join(exportDir, next.split('/').at(-1)!)), 'no folder');
});

t.test('files are gzip-compressed for a client that accepts it', async (t) => {
  const { manifest } = await exportAll(t, '?_type=Organization');
  const url = new URL(manifest.output[0].url);
  const raw = await new Promise<{ status: number; encoding?: string; body: Buffer }>((resolve, reject) => {
    const req = httpRequest(url, { headers: { 'service-api-key': KEY, 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(raw.status, 200);
  t.equal(raw.encoding, 'gzip');
  const plain = await (await http(url.href, { headers: { 'accept-encoding': 'identity' } })).text();
  t.equal(gunzipSync(raw.body).toString('utf8'), plain, 'the same NDJSON once decompressed');
});

t.test('bad kick-offs are refused with a 400 OperationOutcome naming the parameter', async (t) => {
  const cases: [string, RequestInit, string][] = [
    ['', { headers: { prefer: '' } }, 'Prefer'],
    ['?_type=Patient', {}, '_type'],
    ['?_type=Practitioner,Nope', {}, '_type'],
    ['?_since=yesterday', {}, '_since'],
    ['?_since=2024-01-01', {}, '_since'],
    ['?_outputFormat=application/fhir%2Bjson', {}, '_outputFormat'],
    ['?_outputFormat=text/csv', {}, '_outputFormat'],
    ['?_typeFilter=Practitioner%3Factive%3Dtrue', {}, '_typeFilter'],
    ['?patient=Patient/1', {}, 'patient'],
    ['?_count=10', {}, '_count'],
    ['', { method: 'POST', headers: { prefer: 'respond-async', 'content-type': 'application/fhir+json' }, body: '{"resourceType":"Bundle"}' }, 'Parameters'],
    ['', { method: 'POST', headers: { prefer: 'respond-async', 'content-type': 'application/fhir+json' }, body: '{"resourceType":"Parameters","parameter":[{"name":"_since","valueInstant":"nope"}]}' }, '_since'],
  ];
  for (const [query, init, name] of cases) {
    const res = init.headers && 'prefer' in init.headers ? await http(`/fhir/v2/$export${query}`, init) : await kickOff(query, init);
    const body = (await res.json()) as { resourceType?: string; issue?: { diagnostics?: string }[] };
    t.same(
      { status: res.status, type: body.resourceType, names: (body.issue?.[0]?.diagnostics ?? '').includes(name), location: res.headers.get('content-location') },
      { status: 400, type: 'OperationOutcome', names: true, location: null },
      `${init.method ?? 'GET'} $export${query} → 400 naming ${name} (${body.issue?.[0]?.diagnostics})`,
    );
  }
  t.equal((await http('/fhir/v2/$export', { key: null, headers: { prefer: 'respond-async' } })).status, 401, 'no key → 401');
  t.equal((await kickOff('?_count=10', { headers: { prefer: 'respond-async, handling=lenient' } })).status, 202, 'handling=lenient ignores an unknown parameter');
});

t.test('the files load back into an empty database with npm run load: the same resources', async (t) => {
  const { manifest } = await exportAll(t);
  const dir = path.join(exportDir, 'download');
  await mkdir(dir);
  for (const o of manifest.output) await writeFile(path.join(dir, o.url.split('/').at(-1)!), Buffer.from(await (await http(o.url)).arrayBuffer()));
  t.ok((await readdir(dir)).every((f) => f.endsWith('.ndjson')));
  const empty = await testDatabase(t);
  const run = promisify(execFile);
  const loaded = await run(...userNode(['dist/load.js', dir]), { cwd: ROOT, env: { ...process.env, DATABASE_URL: empty.url } });
  t.match(loaded.stdout + loaded.stderr, /\d/, 'the loader reports what it loaded');
  t.same(await stored(empty), all, 'the same resources, content and meta included');
});

t.test('the queue, a job left running by a stopped process, files split at EXPORT_FILE_BYTES', async (t) => {
  // A job a process was running when it stopped: its row says running, nobody holds its lock.
  await db.sql`insert into export_job (id, key_name, request, types, status, claimed_at, attempts)
    values ('11111111-1111-4111-8111-111111111111', (select name from api_key where key_hash = sha256(${KEY}::bytea)),
            ${`${base}/fhir/v2/$export?_type=PractitionerRole`}, '{PractitionerRole}', 'running', now() - interval '1 minute', 1)`;
  await app.close();
  const second = await testApp(t, { db, env: { API_KEYS: `${KEY},${OTHER}`, PUBLIC_BASE_URL: '', EXPORT_DIR: exportDir, EXPORT_FILE_BYTES: '4096', EXPORT_QUEUE: '1' } });
  await second.app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });

  const recovered = await poll(`${base}/fhir/v2/$export-status/11111111-1111-4111-8111-111111111111`);
  t.equal(recovered.status, 200, 'the interrupted job ran again to its end');
  const manifest = (await recovered.json()) as Manifest;
  t.ok(manifest.output.length > 1, `PractitionerRole split into ${manifest.output.length} files`);
  const roles = byKey(all, (r) => r.resourceType === 'PractitionerRole');
  t.equal(manifest.output.reduce((n, o) => n + o.count, 0), roles.size, 'every role once across the files');

  // A job cancelled while it runs: held at its start by its lock, taken here first.
  const held = '33333333-3333-4333-8333-333333333333';
  const lock = await db.sql.reserve();
  await lock`select pg_advisory_lock(724031, hashtext(${held}))`;
  await db.sql`insert into export_job (id, key_name, request, types)
    values (${held}, (select name from api_key where key_hash = sha256(${KEY}::bytea)), 'x', '{Practitioner}')`;
  second.deps.exporter.kick();
  let running: Response | undefined;
  for (let i = 0; i < 100 && running?.headers.get('x-progress') !== 'starting'; i++) {
    if (running) await new Promise((r) => setTimeout(r, 100));
    running = await http(`${base}/fhir/v2/$export-status/${held}`);
  }
  t.same({ status: running!.status, progress: running!.headers.get('x-progress') }, { status: 202, progress: 'starting' }, 'the job is running');
  const cancelled = http(`${base}/fhir/v2/$export-status/${held}`, { method: 'DELETE' });
  while ((await db.sql`select 1 from export_job where id = ${held}`).length) await new Promise((r) => setTimeout(r, 50));
  await lock`select pg_advisory_unlock(724031, hashtext(${held}))`;
  lock.release();
  t.equal((await cancelled).status, 202, 'DELETE of a running job → 202 once it has stopped');
  t.notOk(existsSync(path.join(exportDir, held)), 'its folder is deleted');
  t.equal((await http(`${base}/fhir/v2/$export-status/${held}`)).status, 404);

  // EXPORT_JOBS (1) is taken by a job of another process: a new job waits, the next one is refused.
  await db.sql`insert into export_job (id, key_name, request, types, status, claimed_at)
    values ('22222222-2222-4222-8222-222222222222', 'elsewhere', 'x', '{Device}', 'running', now() + interval '1 hour')`;
  const queued = await kickOff('?_type=Device');
  t.equal(queued.status, 202);
  const status = queued.headers.get('content-location')!;
  const waiting = await http(status);
  t.same({ status: waiting.status, progress: waiting.headers.get('x-progress'), retry: Number(waiting.headers.get('retry-after')) > 0 }, { status: 202, progress: 'queued', retry: true });
  const full = await kickOff('?_type=Device');
  t.same({ status: full.status, retry: Number(full.headers.get('retry-after')) > 0 }, { status: 429, retry: true }, 'past EXPORT_QUEUE → 429 with Retry-After');
  await db.sql`delete from export_job where id = '22222222-2222-4222-8222-222222222222'`;
  second.deps.exporter.kick();
  t.equal((await poll(status)).status, 200, 'the queued job runs once the slot is free');

  // Past its expiry (EXPORT_TTL_HOURS after its end), a job and its files are deleted.
  const id = status.split('/').at(-1)!;
  t.ok(existsSync(path.join(exportDir, id)), 'the files are there before');
  await db.sql`update export_job set expires_at = now() - interval '1 second' where id = ${id}`;
  second.deps.exporter.kick();
  for (let i = 0; i < 100 && existsSync(path.join(exportDir, id)); i++) await new Promise((r) => setTimeout(r, 100));
  t.notOk(existsSync(path.join(exportDir, id)), 'its folder is deleted');
  t.equal((await http(status)).status, 404, 'its status → 404');
});
