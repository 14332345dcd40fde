import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import postgres from 'postgres';
import t from 'tap';
import { buildApp, makeDeps } from '../src/app.ts';
import { ensureDevKey } from '../src/auth/dev-key.ts';
import { createKey, envKeyName, generateKey, KeyStore, listKeys, revokeKey } from '../src/auth/keys.ts';
import { LOG_REDACT } from '../src/auth/redact.ts';
import { runKeysCli } from '../src/cli/keys.ts';
import { loadConfig } from '../src/config.ts';
import { registry } from '../src/registry/index.ts';
import { FIXTURES, ROOT, testApp } from './helpers/app.ts';
import { userCommand } from './helpers/command.ts';
import { testDatabase } from './helpers/db.ts';
import { REDIS_TEST_URL, redisMissing } from './helpers/redis.ts';

const EXAMPLES = path.join(FIXTURES, 'ans-ig-examples');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BASE = 'http://fhir.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Req = { method: InjectOptions['method']; url: string; payload?: string; headers?: Record<string, string> };

function send(app: FastifyInstance, req: Req, key?: string): Promise<LightMyRequestResponse> {
  return app.inject({
    method: req.method,
    url: req.url,
    payload: req.payload,
    headers: { ...req.headers, ...(key === undefined ? {} : { 'service-api-key': key }) },
  });
}

function outcomeOf(res: LightMyRequestResponse): { code: string; diagnostics: string } {
  const body = res.json();
  if (body.resourceType !== 'OperationOutcome') throw new Error(`not an OperationOutcome: ${res.body.slice(0, 200)}`);
  return body.issue[0];
}

const db = await testDatabase(t);
const { app, deps } = await testApp(t, { db, paths: [EXAMPLES] });

const valid = (await deps.keys.create({ name: 'valid' })).key;
const revoked = (await deps.keys.create({ name: 'revoked' })).key;
await deps.keys.revoke('revoked');
const unknown = generateKey();

const noRedis = await redisMissing(); // every top-level await comes before the first t.test

const SERVED = { v1: { type: 'Organization', id: '158480DP' }, v2: { type: 'Practitioner', id: 'practitioner-example' } } as const;

t.test('every endpoint × {no key, unknown, revoked, valid} on v1 and v2', async (t) => {
  for (const version of ['v1', 'v2'] as const) {
    const { type, id } = SERVED[version];
    const first = await send(app, { method: 'GET', url: `/fhir/${version}/${type}?_count=1` }, valid);
    t.equal(first.statusCode, 200);
    const next = first.json().link.find((l: { relation: string }) => l.relation === 'next')?.url as string;
    t.ok(next?.includes('_cursor='), `${version}: a next link`);

    const keyed: [string, Req, number][] = [
      ['search GET', { method: 'GET', url: `/fhir/${version}/${type}?_count=2` }, 200],
      ['search POST _search', { method: 'POST', url: `/fhir/${version}/${type}/_search`, payload: '_count=2', headers: FORM }, 200],
      ['search POST form', { method: 'POST', url: `/fhir/${version}/${type}`, payload: '_count=2', headers: FORM }, 200],
      ['read', { method: 'GET', url: `/fhir/${version}/${type}/${id}` }, 200],
      ['read HEAD', { method: 'HEAD', url: `/fhir/${version}/${type}/${id}` }, 200],
      ['paging', { method: 'GET', url: next.slice(BASE.length) }, 200],
      ['unknown type (404)', { method: 'GET', url: `/fhir/${version}/Patient?name=x` }, 404],
      ['unknown id (404)', { method: 'GET', url: `/fhir/${version}/${type}/nope` }, 404],
      ['write (405)', { method: 'DELETE', url: `/fhir/${version}/${type}/${id}` }, 405],
      ['GET _search (405)', { method: 'GET', url: `/fhir/${version}/${type}/_search` }, 405],
      ['POST metadata (405)', { method: 'POST', url: `/fhir/${version}/metadata`, payload: 'a=b', headers: FORM }, 405],
    ];
    for (const [label, req, want] of keyed) {
      const none = await send(app, req);
      t.equal(none.statusCode, 401, `${version} ${label}: no key`);
      t.match(none.headers['www-authenticate'], /^ApiKey realm="annuaire-fhir", header="SERVICE-API-KEY"$/);
      t.equal(none.headers['cache-control'], 'no-store');
      if (req.method !== 'HEAD') t.equal(outcomeOf(none).code, 'login', `${version} ${label}: login`);

      const bad = await send(app, req, unknown);
      const old = await send(app, req, revoked);
      for (const [what, res] of [['unknown', bad], ['revoked', old]] as const) {
        t.equal(res.statusCode, 401, `${version} ${label}: ${what} key`);
        t.match(res.headers['www-authenticate'], /error="invalid_key"/);
        if (req.method !== 'HEAD') t.equal(outcomeOf(res).code, 'security');
      }
      // unknown and revoked keys cannot be told apart
      t.equal(bad.body, old.body, `${version} ${label}: unknown and revoked answer alike`);
      t.same(bad.headers['www-authenticate'], old.headers['www-authenticate']);

      const ok = await send(app, req, valid);
      t.equal(ok.statusCode, want, `${version} ${label}: valid key`);
      t.equal(ok.headers['cache-control'], 'no-store', `${version} ${label}: no-store`);
      t.equal(ok.headers['x-content-type-options'], 'nosniff');
      if (want >= 400) t.ok(outcomeOf(ok).code, `${version} ${label}: OperationOutcome`);
    }

    // metadata is open, whatever key is sent
    for (const key of [undefined, unknown, revoked, valid]) {
      const res = await send(app, { method: 'GET', url: `/fhir/${version}/metadata` }, key);
      t.equal(res.statusCode, 200, `${version} metadata with ${key === undefined ? 'no' : 'some'} key`);
      t.equal(res.json().resourceType, 'CapabilityStatement');
      t.equal(res.headers['cache-control'], undefined, 'open responses may be cached');
      t.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
      t.equal(res.headers['referrer-policy'], 'no-referrer');
    }
    t.equal((await send(app, { method: 'HEAD', url: `/fhir/${version}/metadata` })).statusCode, 200, `${version} HEAD metadata is open`);
  }
  // not a served version: no endpoint is open there
  t.equal((await send(app, { method: 'GET', url: '/fhir/v3/metadata' })).statusCode, 401);
  t.equal((await send(app, { method: 'GET', url: '/fhir/v3/metadata' }, valid)).statusCode, 404);
  t.equal((await send(app, { method: 'GET', url: '/fhir/v2/metadata/' })).statusCode, 401, 'only the exact metadata path is open');
  t.equal((await send(app, { method: 'GET', url: '/elsewhere' })).statusCode, 401, 'deny by default');
  for (const url of ['/health', '/ready']) {
    const res = await send(app, { method: 'GET', url });
    t.equal(res.statusCode, 200, `${url} is open`);
    t.equal(res.headers['x-content-type-options'], 'nosniff');
  }
  const empty = await send(app, { method: 'GET', url: '/fhir/v2/Practitioner' }, '');
  t.equal(outcomeOf(empty).code, 'login', 'an empty header is a missing key');
  const https = await app.inject({ method: 'GET', url: '/health', headers: { 'x-forwarded-proto': 'https' } });
  t.match(https.headers['strict-transport-security'], /max-age=\d+/, 'HSTS over https');
});

t.test('METADATA_REQUIRES_KEY=true closes metadata', async (t) => {
  const { app } = await testApp(t, { db, env: { METADATA_REQUIRES_KEY: 'true' } });
  for (const version of ['v1', 'v2']) {
    const none = await send(app, { method: 'GET', url: `/fhir/${version}/metadata` });
    t.equal(none.statusCode, 401);
    t.equal(outcomeOf(none).code, 'login');
    t.equal((await send(app, { method: 'GET', url: `/fhir/${version}/metadata` }, revoked)).statusCode, 401);
    const ok = await send(app, { method: 'GET', url: `/fhir/${version}/metadata` }, valid);
    t.equal(ok.statusCode, 200);
    t.equal(ok.headers['cache-control'], 'no-store');
  }
  t.equal((await send(app, { method: 'GET', url: '/health' })).statusCode, 200);
});

t.test('a key revoked elsewhere stops working within the cache TTL, a new key works at once', async (t) => {
  let clock = 1_000_000;
  const deps2 = makeDeps(loadConfig({ RATE_LIMIT: '0' }), db, registry);
  deps2.keys = new KeyStore(db.sql, { ttlMs: 30_000, missRefreshMs: 1_000, now: () => clock });
  const app2 = await buildApp(deps2);
  t.teardown(() => app2.close());
  const { key } = await createKey(db.sql, { name: 'elsewhere' });
  const url = { method: 'GET' as const, url: '/fhir/v2/Practitioner/practitioner-example' };
  t.equal((await send(app2, url, key)).statusCode, 200);
  await revokeKey(db.sql, 'elsewhere'); // as the CLI does, in another process
  clock += 29_000;
  t.equal((await send(app2, url, key)).statusCode, 200, 'still in the cached copy');
  clock += 1_000;
  t.equal((await send(app2, url, key)).statusCode, 401, 'refused once the copy is 30 s old');
  const fresh = await createKey(db.sql, { name: 'fresh' });
  clock += 1_000;
  t.equal((await send(app2, url, fresh.key)).statusCode, 200, 'an unknown key reloads the copy (at most once a second)');
  const later = await createKey(db.sql, { name: 'later' });
  t.equal((await send(app2, url, later.key)).statusCode, 401, 'no second reload within the same second');
  clock += 1_000;
  t.equal((await send(app2, url, later.key)).statusCode, 200);
});

t.test('KeyStore.cached: only keys verified against the current, fresh copy', async (t) => {
  let clock = 5_000_000;
  const store = new KeyStore(db.sql, { ttlMs: 30_000, missRefreshMs: 1_000, now: () => clock });
  const { key } = await createKey(db.sql, { name: 'cached-1' });
  const unknownKey = generateKey();
  t.equal(store.cached(key), undefined, 'nothing before a verification');
  t.equal((await store.verify(key))?.name, 'cached-1');
  t.equal(store.cached(key)?.name, 'cached-1', 'then known without a promise');
  t.equal(await store.verify(unknownKey), undefined);
  t.equal(store.cached(unknownKey), undefined, 'an unknown key is never remembered');
  clock += 30_000;
  t.equal(store.cached(key), undefined, 'not once the copy is as old as the TTL');
  await revokeKey(db.sql, 'cached-1'); // elsewhere: seen at the reload
  t.equal(await store.verify(key), undefined, 'the reload drops it');
  t.equal(store.cached(key), undefined);
  const second = await store.create({ name: 'cached-2' });
  t.equal((await store.verify(second.key))?.name, 'cached-2');
  t.equal(store.cached(second.key)?.name, 'cached-2');
  await store.revoke('cached-2'); // through this store: at once
  t.equal(store.cached(second.key), undefined, 'a revocation through the store forgets it at once');
  t.equal(await store.verify(second.key), undefined);
});

t.test('keys that cannot be loaded: 503, not let through', async (t) => {
  const broken = postgres(db.url, { max: 1, onnotice: () => {}, connection: { search_path: 'no_such_schema' } });
  t.teardown(() => broken.end({ timeout: 1 }));
  const deps2 = makeDeps(loadConfig({ RATE_LIMIT: '0' }), db, registry);
  deps2.keys = new KeyStore(broken as unknown as typeof db.sql);
  const app2 = await buildApp(deps2);
  t.teardown(() => app2.close());
  const res = await send(app2, { method: 'GET', url: '/fhir/v2/Practitioner' }, valid);
  t.equal(res.statusCode, 503);
  t.equal(outcomeOf(res).code, 'transient');
  t.notMatch(res.body, /api_key|relation|schema/);
  t.equal((await send(app2, { method: 'GET', url: '/fhir/v2/metadata' })).statusCode, 200, 'open endpoints still answer');
});

t.test('rate limit per key: reached, recovered, per-key override', async (t) => {
  const { app, deps } = await testApp(t, { db, env: { RATE_LIMIT: '3' } });
  const a = (await deps.keys.create({ name: 'rl-a' })).key;
  const b = (await deps.keys.create({ name: 'rl-b' })).key;
  const one = (await deps.keys.create({ name: 'rl-one', rateLimit: 1 })).key;
  const free = (await deps.keys.create({ name: 'rl-free', rateLimit: 0 })).key;
  const read = { method: 'GET' as const, url: '/fhir/v2/Practitioner/practitioner-example' };

  let windowOpened = 0; // key a's window opened before its first answer (each key has its own window)
  for (let i = 0; i < 3; i++) {
    const res = await send(app, read, a);
    if (i === 0) windowOpened = Date.now();
    t.equal(res.statusCode, 200);
    t.equal(res.headers['ratelimit-limit'], '3');
    t.equal(res.headers['ratelimit-remaining'], String(2 - i));
    t.ok(Number(res.headers['ratelimit-reset']) <= 1);
  }
  const over = await send(app, read, a);
  t.equal(over.statusCode, 429);
  t.equal(outcomeOf(over).code, 'throttled');
  t.equal(over.headers['retry-after'], '1');
  t.equal(over.headers['ratelimit-remaining'], '0');
  t.equal(over.headers['content-type'], 'application/fhir+json; charset=utf-8');
  t.equal((await send(app, { method: 'GET', url: '/fhir/v2/Nope' }, a)).statusCode, 429, '404s count too');
  t.equal((await send(app, read, b)).statusCode, 200, 'another key has its own counter');
  for (let i = 0; i < 5; i++) t.equal((await send(app, { method: 'GET', url: '/fhir/v2/metadata' })).statusCode, 200, 'open endpoints are not limited');
  t.equal((await send(app, read, unknown)).statusCode, 401, 'a bad key is refused, not counted');

  t.equal((await send(app, read, one)).statusCode, 200);
  const oneOver = await send(app, read, one);
  t.equal(oneOver.statusCode, 429, "a key's own limit overrides RATE_LIMIT");
  t.equal(oneOver.headers['ratelimit-limit'], '1');
  for (let i = 0; i < 6; i++) {
    const res = await send(app, read, free);
    t.equal(res.statusCode, 200, 'rate limit 0: unlimited key');
    t.equal(res.headers['ratelimit-limit'], undefined);
  }

  await sleep(Math.max(0, 1050 - (Date.now() - windowOpened)));
  const again = await send(app, read, a);
  t.equal(again.statusCode, 200, 'recovered after the 1 s window');
  t.equal(again.headers['ratelimit-remaining'], '2');

  // RATE_LIMIT=0 disables the default, but a key's own limit still applies
  const { app: open, deps: openDeps } = await testApp(t, { db, env: { RATE_LIMIT: '0' } });
  const two = (await openDeps.keys.create({ name: 'rl-two', rateLimit: 2 })).key;
  for (let i = 0; i < 5; i++) t.equal((await send(open, read, valid)).statusCode, 200, 'RATE_LIMIT=0: no limit');
  t.equal((await send(open, read, two)).statusCode, 200);
  t.equal((await send(open, read, two)).statusCode, 200);
  t.equal((await send(open, read, two)).statusCode, 429);
});


t.test('requests in progress per key, with the defaults: past MAX_CONCURRENT_PER_KEY (8), 429 throttled, Retry-After: 1', async (t) => {
  const { app, deps } = await testApp(t, { db, env: { RATE_LIMIT: '' } }); // every limit at its default
  const a = (await deps.keys.create({ name: 'busy-a' })).key;
  const b = (await deps.keys.create({ name: 'busy-b' })).key;
  let admitted = 0; // POSTs past the key hook (which answers a refused one at once)
  app.addHook('onRequest', async (req) => void (req.method === 'POST' && admitted++));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as net.AddressInfo).port;
  const body = 'family=ex';
  /** A POST _search whose body is held back: admitted, and in progress until `finish` sends it. */
  const held = (key: string) => {
    let out = '';
    const s = net.connect(port, '127.0.0.1', () =>
      s.write(`POST /fhir/v2/Practitioner/_search HTTP/1.1\r\nHost: x\r\nSERVICE-API-KEY: ${key}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`));
    s.setEncoding('latin1');
    s.on('data', (d) => (out += d));
    const closed = new Promise<string>((resolve) => s.on('close', () => resolve(out)));
    return { answered: () => out !== '', finish: () => (s.write(body), closed), abort: () => (s.destroy(), closed) };
  };
  /**
   * Eight held requests of key a, all admitted. The server sees a connection the client closed a
   * moment after the client does, so a batch is tried again (bounded) until the server has let go
   * of the earlier requests.
   */
  const holdEight = async () => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const before = admitted;
      const batch = Array.from({ length: 8 }, () => held(a));
      // every request read: admitted, or refused and answered
      for (let i = 0; i < 500 && admitted - before + batch.filter((h) => h.answered()).length < 8; i++) await sleep(10);
      if (admitted - before === 8) return batch;
      await Promise.all(batch.map((h) => h.abort()));
      await sleep(50);
    }
    throw new Error('eight requests of one key were never admitted at once');
  };
  const get = (key: string) => fetch(`http://127.0.0.1:${port}/fhir/v2/Practitioner/practitioner-example`, { headers: { 'service-api-key': key } });

  const eight = await holdEight();
  const over = await get(a);
  t.equal(over.status, 429, 'a ninth request of the same key');
  const o = (await over.json()) as { issue: { code: string; diagnostics: string }[] };
  t.equal(o.issue[0].code, 'throttled');
  t.match(o.issue[0].diagnostics, /8 requests in progress already \(MAX_CONCURRENT_PER_KEY\)/);
  t.equal(over.headers.get('retry-after'), '1');
  t.equal((await get(b)).status, 200, 'another key has its own count');

  t.match(await eight[0].finish(), /^HTTP\/1\.1 200 /, 'a held request answers once its body comes');
  let freed = await get(a);
  for (let i = 0; i < 40 && freed.status !== 200; i++) freed = await sleep(50).then(() => get(a));
  t.equal(freed.status, 200, 'and frees its place');
  await Promise.all(eight.slice(1).map((h) => h.abort()));
  const again = await holdEight();
  t.equal((await get(a)).status, 429, 'aborted requests free theirs too: eight held again, and the ninth refused');
  const answers = await Promise.all(again.map((h) => h.finish()));
  t.same(answers.map((r) => r.slice(0, 12)), Array(8).fill('HTTP/1.1 200'), 'the eight held answer');
  for (let i = 0; i < 30; i++) if ((await get(a)).status !== 200) t.fail(`sequential request ${i + 1} refused`);
  t.pass('a client that waits for each answer is never refused');

  const { app: off, deps: offDeps } = await testApp(t, { db, env: { MAX_CONCURRENT_PER_KEY: '0' } });
  const c = (await offDeps.keys.create({ name: 'busy-c' })).key;
  const many = await Promise.all(Array.from({ length: 20 }, () => send(off, { method: 'GET', url: '/fhir/v2/Practitioner?_count=1' }, c)));
  t.same([...new Set(many.map((r) => r.statusCode))], [200], 'MAX_CONCURRENT_PER_KEY=0: no limit');
});

t.test('Redis-backed limit shared by two instances', { skip: noRedis ?? false }, async (t) => {
  const env = { RATE_LIMIT: '4', REDIS_URL: REDIS_TEST_URL };
  const one = await testApp(t, { db, env });
  const two = await testApp(t, { db, env });
  const key = (await one.deps.keys.create({ name: `redis-${Date.now()}` })).key; // a new key: a counter no other run shares
  const read = { method: 'GET' as const, url: '/fhir/v2/Organization/158480DP' };
  const remaining: string[] = [];
  for (const app of [one.app, two.app, one.app, two.app]) {
    const res = await send(app, read, key);
    t.equal(res.statusCode, 200);
    remaining.push(String(res.headers['ratelimit-remaining']));
  }
  t.same(remaining, ['3', '2', '1', '0'], 'one counter for both instances');
  t.equal((await send(one.app, read, key)).statusCode, 429);
  t.equal((await send(two.app, read, key)).statusCode, 429);
  // without Redis each instance counts alone
  const three = await testApp(t, { db, env: { RATE_LIMIT: '4' } });
  t.equal((await send(three.app, read, key)).statusCode, 200, 'an in-memory instance has its own counter');
});

t.test('Redis unreachable: requests pass, uncounted (fail open)', async (t) => {
  // port 9 on the loopback: nothing listens there
  const { app, deps } = await testApp(t, { db, env: { RATE_LIMIT: '1', REDIS_URL: 'redis://127.0.0.1:9' } });
  const key = (await deps.keys.create({ name: `no-redis-${Date.now()}` })).key;
  const started = Date.now();
  for (let i = 0; i < 3; i++) t.equal((await send(app, { method: 'GET', url: '/fhir/v2/Organization/158480DP' }, key)).statusCode, 200);
  t.ok(Date.now() - started < 5000, 'without waiting for Redis');
});

t.test('API_KEYS adds hashed keys at start-up; a revoked one stays revoked', async (t) => {
  const k1 = `dev-${generateKey()}`;
  const k2 = `dev-${generateKey()}`;
  const { app } = await testApp(t, { db, env: { API_KEYS: `${k1}, ${k2}` } });
  const read = { method: 'GET' as const, url: '/fhir/v2/Organization/158480DP' };
  t.equal((await send(app, read, k1)).statusCode, 200);
  t.equal((await send(app, read, k2)).statusCode, 200);
  const names = (await listKeys(db.sql)).map((k) => k.name);
  t.ok(names.includes(envKeyName(k1)) && names.includes(envKeyName(k2)));
  t.match(envKeyName(k1), /^env-[0-9a-f]{8}$/);
  const stored = await db.sql<{ n: number }[]>`select count(*)::int as n from api_key where encode(key_hash, 'escape') like ${`%${k1}%`}`;
  t.equal(stored[0].n, 0, 'the key itself is not stored');
  await revokeKey(db.sql, envKeyName(k1));
  const { app: again } = await testApp(t, { db, env: { API_KEYS: `${k1},${k2}` } });
  t.equal((await send(again, read, k1)).statusCode, 401);
  t.equal((await send(again, read, k2)).statusCode, 200);
});

t.test('the development key of the embedded default', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'devkey-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const first = await ensureDevKey(db.sql, dir);
  t.ok(first.created);
  t.match(first.key, /^afk_[A-Za-z0-9_-]{43}$/);
  t.equal((await stat(first.file)).mode & 0o777, 0o600, 'the file is private');
  t.equal((await readFile(first.file, 'utf8')).trim(), first.key);
  const second = await ensureDevKey(db.sql, dir);
  t.same([second.created, second.key], [false, first.key], 'the same key at the next start');
  const store = new KeyStore(db.sql);
  t.equal((await store.verify(first.key))?.name, 'dev');
  await revokeKey(db.sql, 'dev');
  const third = await ensureDevKey(db.sql, dir);
  t.ok(third.created, 'a revoked development key is replaced');
  t.not(third.key, first.key);
  store.invalidate();
  t.equal(await store.verify(first.key), undefined);
  t.equal((await store.verify(third.key))?.name, 'dev');
});

t.test('keys CLI', async (t) => {
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runKeysCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { sql: db.sql });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const created = await run('create', '--name', 'cli-key', '--rate-limit', '7');
  t.equal(created.code, 0);
  t.match(created.out, /^afk_[A-Za-z0-9_-]{43}$/, 'only the key on stdout');
  t.match(created.err, /cannot be shown again/);
  t.equal((await new KeyStore(db.sql).verify(created.out))?.rateLimit, 7);

  const dup = await run('create', '--name', 'cli-key');
  t.equal(dup.code, 1);
  t.match(dup.err, /already exists/);

  const list = await run('list');
  t.equal(list.code, 0);
  t.match(list.out, /^NAME\s+CREATED\s+REVOKED\s+RATE LIMIT/);
  t.match(list.out, /cli-key\s+\d{4}-\d\d-\d\dT\S+Z\s+-\s+7\/s/);
  t.match(list.out, /revoked\s+\S+Z\s+\d{4}-\S+Z\s+default/);
  t.notOk(list.out.includes(created.out), 'list never shows a key');
  t.notOk(/afk_/.test(list.out));

  t.equal((await run('revoke', 'cli-key')).code, 0);
  t.equal(await new KeyStore(db.sql).verify(created.out), undefined, 'revoked');
  const twice = await run('revoke', 'cli-key');
  t.equal(twice.code, 0);
  t.match(twice.err, /already revoked/);
  const missing = await run('revoke', 'no-such-key');
  t.equal(missing.code, 1);
  t.match(missing.err, /no API key is named "no-such-key"/);

  for (const argv of [[], ['frob'], ['create'], ['create', '--name', 'bad name'], ['create', '--name', 'x', '--rate-limit', '-1'], ['revoke'], ['list', 'extra'], ['list', '--bogus']]) {
    const r = await run(...argv);
    t.equal(r.code, 2, `usage error: ${argv.join(' ') || '(nothing)'}`);
    t.match(r.err, /usage: npm run keys/);
  }
  t.equal((await run('--help')).code, 0);

  // as docs/security.md writes it, through npm (its pre-script builds dist/keys.js), on DATABASE_URL
  const npm = (...argv: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        ...userCommand('npm', ['run', '-s', 'keys', '--', ...argv]),
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const viaNpm = await npm('create', '--name', 'npm-key');
  t.equal(viaNpm.code, 0, viaNpm.stderr);
  t.match(viaNpm.stdout, /^afk_[A-Za-z0-9_-]{43}\n$/, 'KEY=$(npm run -s keys -- create …) captures the key alone');
  const listed = await npm('list');
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /cli-key/);
  t.match(listed.stdout, /npm-key/);
  t.notOk(listed.stdout.includes('afk_'));
});

t.test('the key never reaches the logs', async (t) => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = pino({ level: 'trace', redact: LOG_REDACT }, stream);
  const deps2 = makeDeps(loadConfig({ RATE_LIMIT: '1', CURSOR_SECRET: 'test-secret-0123456789' }), db, registry);
  const app2 = await buildApp(deps2, { loggerInstance: logger });
  app2.get('/log-headers', async (req) => {
    req.log.info({ req: { headers: req.headers } }, 'explicitly logged request');
    req.log.info({ headers: req.headers }, 'explicitly logged headers');
    return { ok: true };
  });
  t.teardown(() => app2.close());
  const secret = (await deps2.keys.create({ name: 'log-test' })).key;
  const bogus = generateKey();
  await send(app2, { method: 'GET', url: '/fhir/v2/Practitioner?family=x' }, secret);
  await send(app2, { method: 'GET', url: '/fhir/v2/Practitioner?family=x' }, secret); // 429
  await send(app2, { method: 'GET', url: '/fhir/v2/Practitioner' }, bogus); // 401
  await send(app2, { method: 'GET', url: '/log-headers' }, bogus);
  await sleep(1000);
  const logged = await send(app2, { method: 'GET', url: '/log-headers' }, secret);
  t.equal(logged.statusCode, 200);
  // Node-level rejection: the raw bytes hold the key
  await app2.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app2.server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(`GET /fhir/v2/Practitioner HTTP/1.1\r\nHost: x\r\nSERVICE-API-KEY: ${secret}\r\nX-Big: ${'b'.repeat(20000)}\r\n\r\n`));
    s.on('data', () => {});
    s.on('error', () => resolve());
    s.on('close', () => resolve());
  });
  const all = lines.join('');
  t.ok(lines.length > 5, 'requests were logged');
  t.match(all, /\[redacted\]/, 'explicitly logged headers are redacted');
  t.match(all, /"statusCode":429/);
  t.notOk(all.includes(secret), 'the valid key is nowhere in the log');
  t.notOk(all.includes(bogus), 'an invalid key is nowhere in the log');
  t.notOk(all.includes(secret.slice(4, 20)), 'nor a piece of it');
});
