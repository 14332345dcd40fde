import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import postgres from 'postgres';
import t from 'tap';
import { FIXTURES, testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { rawRequest } from './helpers/raw-http.ts';

const EXAMPLES = path.join(FIXTURES, 'ans-ig-examples');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const db = await testDatabase(t);
const { app, deps } = await testApp(t, { db, paths: [EXAMPLES] });
const key = (await deps.keys.create({ name: 'limits' })).key;
const keyHeader = { 'service-api-key': key };

type T = { match: (...a: any[]) => unknown; notMatch: (...a: any[]) => unknown };
function issue(t: T, res: { headers: Record<string, unknown>; body: string }): { severity: string; code: string; diagnostics: string; expression?: string[] } {
  t.match(String(res.headers['content-type']), /^application\/fhir\+json/);
  const body = JSON.parse(res.body);
  if (body.resourceType !== 'OperationOutcome') throw new Error(`not an OperationOutcome: ${res.body.slice(0, 200)}`);
  t.notMatch(res.body, /\n\s+at |node_modules|select |from resource/i, 'no stack trace nor SQL');
  return body.issue[0];
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

interface Raw {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request through node:http (the Node HTTP parser of the server sees it as any client's). */
function httpGet(port: number, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathAndQuery, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

t.test('URL length', async (t) => {
  const base = '/fhir/v2/Practitioner?family=';
  const atLimit = base + 'a'.repeat(8192 - base.length);
  const res = await app.inject({ method: 'GET', url: atLimit, headers: keyHeader });
  t.equal(res.statusCode, 200, 'MAX_URL_LENGTH characters are accepted');
  const over = await app.inject({ method: 'GET', url: `${atLimit}b`, headers: keyHeader });
  t.equal(over.statusCode, 414);
  t.equal(issue(t, over).code, 'too-long');
  t.match(issue(t, over).diagnostics, /8193 characters.*8192.*_search/);
  const anonymous = await app.inject({ method: 'GET', url: `${atLimit}b` });
  t.equal(anonymous.statusCode, 414, 'refused before the key is even looked at');

  const { app: small } = await testApp(t, { db, env: { MAX_URL_LENGTH: '300' } });
  t.equal((await small.inject({ method: 'GET', url: `/fhir/v2/Practitioner?family=${'x'.repeat(300)}`, headers: keyHeader })).statusCode, 414);
  t.equal((await small.inject({ method: 'GET', url: `/fhir/v2/Practitioner/${'x'.repeat(300)}`, headers: keyHeader })).statusCode, 414);
  const post = await small.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, ...FORM }, payload: `family=${'x'.repeat(1000)}` });
  t.equal(post.statusCode, 200, 'long searches go in the body');

  // over a real socket: between MAX_URL_LENGTH and Node's header limit, the app answers …
  const port = await listen(small);
  const mid = await httpGet(port, `/fhir/v2/Practitioner?family=${'y'.repeat(5000)}`, keyHeader);
  t.equal(mid.statusCode, 414);
  t.equal(issue(t, mid).code, 'too-long');
  // … beyond Node's 16 KiB, the HTTP parser refuses it and clientErrorHandler answers
  const huge = await httpGet(port, `/fhir/v2/Practitioner?family=${'z'.repeat(20000)}`, keyHeader);
  t.equal(huge.statusCode, 414);
  t.equal(issue(t, huge).code, 'too-long');
  t.equal(huge.headers['x-content-type-options'], 'nosniff');
  t.equal(huge.headers.connection, 'close');
});

t.test('Node HTTP parser errors (real socket)', async (t) => {
  const { app: fresh } = await testApp(t, { db });
  const port = await listen(fresh);
  const big = await httpGet(port, '/fhir/v2/Practitioner', { ...keyHeader, 'x-filler': 'f'.repeat(20000) });
  t.equal(big.statusCode, 431, 'headers over 16 KiB');
  t.equal(issue(t, big).code, 'too-long');
  t.equal(big.headers['cache-control'], 'no-store');

  for (const bytes of ['GARBAGE\r\n\r\n', 'GET /fhir/v2/Practitioner HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n']) {
    const out = await rawRequest(port, bytes);
    t.match(out, /^HTTP\/1\.1 400 Bad Request\r\n/, `400 for ${JSON.stringify(bytes.slice(0, 30))}`);
    const body = out.slice(out.indexOf('\r\n\r\n') + 4);
    t.equal(JSON.parse(body).resourceType, 'OperationOutcome');
    t.equal(JSON.parse(body).issue[0].code, 'invalid');
    t.match(out, /content-length: \d+\r\n/);
  }
  // the server still works afterwards
  t.equal((await httpGet(port, '/fhir/v2/Practitioner/practitioner-example', keyHeader)).statusCode, 200);
});

t.test('requests the router refuses get an OperationOutcome too', async (t) => {
  for (const key of [undefined, keyHeader]) {
    const bad = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner/%E0%A4', headers: key ?? {} });
    t.equal(bad.statusCode, 400, 'malformed percent-encoding in the path');
    t.equal(issue(t, bad).code, 'invalid');
    t.notMatch(bad.body, /%E0/, 'the path is not echoed');
    t.equal(bad.headers['x-content-type-options'], 'nosniff');
    t.equal(bad.headers['cache-control'], 'no-store');
    const long = await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner/${'x'.repeat(201)}`, headers: key ?? {} });
    t.equal(long.statusCode, 414, 'a path segment over maxParamLength');
    t.equal(issue(t, long).code, 'too-long');
    t.equal(long.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  }
});

t.test('POST body size', async (t) => {
  const over = 'family=' + 'a'.repeat(65536);
  for (const url of ['/fhir/v2/Practitioner/_search', '/fhir/v2/Practitioner', '/fhir/v1/Organization/_search']) {
    const res = await app.inject({ method: 'POST', url, headers: { ...keyHeader, ...FORM }, payload: over });
    t.equal(res.statusCode, 413, `${url}: over MAX_BODY_BYTES`);
    t.equal(issue(t, res).code, 'too-long');
  }
  const json = await app.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, 'content-type': 'application/fhir+json' }, payload: `{"a":"${'b'.repeat(70000)}"}` });
  t.equal(json.statusCode, 413, 'any content type');
  const justUnder = await app.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, ...FORM }, payload: `family=${'a'.repeat(4000)}` });
  t.equal(justUnder.statusCode, 200);

  const { app: small } = await testApp(t, { db, env: { MAX_BODY_BYTES: '2048' } });
  const res = await small.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, ...FORM }, payload: `family=${'a'.repeat(2100)}` });
  t.equal(res.statusCode, 413);
  t.equal((await small.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, ...FORM }, payload: `family=${'a'.repeat(1500)}` })).statusCode, 200);
  const noKey = await small.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: FORM, payload: `family=${'a'.repeat(5000)}` });
  t.equal(noKey.statusCode, 401, 'the key is checked before the body is read');

  // over a real socket, a declared Content-Length over the limit
  const port = await listen(small);
  const out = await rawRequest(
    port,
    `POST /fhir/v2/Practitioner/_search HTTP/1.1\r\nHost: x\r\nService-Api-Key: ${key}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\nConnection: close\r\n\r\nfamily=a`,
  );
  t.match(out, /^HTTP\/1\.1 413 /);
  t.match(out, /"code":"too-long"/);
});

t.test('MAX_PARAMS and MAX_VALUES_PER_PARAM give 400', async (t) => {
  const check = (res: LightMyRequestResponse, what: string, expression?: string) => {
    t.equal(res.statusCode, 400, what);
    const i = issue(t, res);
    t.equal(i.code, 'invalid');
    if (expression) t.same(i.expression, [expression]);
  };
  const params = (n: number) => Array.from({ length: n }, (_, i) => `given=g${i}`).join('&');
  check(await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?${params(51)}`, headers: keyHeader }), 'GET: 51 parameters');
  t.equal((await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?${params(50)}`, headers: keyHeader })).statusCode, 200, '50 are fine');
  check(await app.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...keyHeader, ...FORM }, payload: params(51) }), 'POST: 51 parameters');
  check(
    await app.inject({ method: 'POST', url: `/fhir/v2/Practitioner/_search?${params(30)}`, headers: { ...keyHeader, ...FORM }, payload: params(21) }),
    'query and body count together',
  );

  const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`).join(',');
  check(await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?family=${values(101)}`, headers: keyHeader }), 'GET: 101 values', 'family');
  check(await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?identifier=${values(101)}`, headers: keyHeader }), 'token values', 'identifier');
  check(await app.inject({ method: 'POST', url: '/fhir/v1/Organization/_search', headers: { ...keyHeader, ...FORM }, payload: `name=${values(101)}` }), 'v1 POST: 101 values', 'name');
  t.equal((await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?family=${values(100)}`, headers: keyHeader })).statusCode, 200, '100 values are fine');

  const { app: small } = await testApp(t, { db, env: { MAX_PARAMS: '3', MAX_VALUES_PER_PARAM: '2' } });
  check(await small.inject({ method: 'GET', url: '/fhir/v2/Practitioner?a=1&b=2&c=3&d=4', headers: keyHeader }), 'MAX_PARAMS=3');
  check(await small.inject({ method: 'GET', url: '/fhir/v2/Practitioner?family=a,b,c', headers: keyHeader }), 'MAX_VALUES_PER_PARAM=2', 'family');
  t.equal((await small.inject({ method: 'GET', url: '/fhir/v2/Practitioner?family=a,b', headers: keyHeader })).statusCode, 200);
});

t.test('no stack trace nor SQL in error responses', async (t) => {
  // A failure inside the database (the connection is broken on purpose) is a generic 500/503.
  const { app: broken, deps: brokenDeps } = await testApp(t, { db });
  const k = (await brokenDeps.keys.create({ name: 'broken' })).key;
  await broken.inject({ method: 'GET', url: '/fhir/v2/Practitioner/practitioner-example', headers: { 'service-api-key': k } }); // loads the keys
  const bad = postgres(db.url, { max: 1, onnotice: () => {}, connection: { search_path: 'no_such_schema' } });
  t.teardown(() => bad.end({ timeout: 1 }));
  brokenDeps.router.pools.sql = bad; // every query fails: relation "resource" does not exist
  const res = await broken.inject({ method: 'GET', url: '/fhir/v2/Practitioner?family=x', headers: { 'service-api-key': k } });
  t.equal(res.statusCode, 500);
  const i = issue(t, res);
  t.equal(i.code, 'exception');
  t.equal(i.diagnostics, 'internal server error');
});
