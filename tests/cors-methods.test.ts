/**
 * What a browser app and a careless client meet first: CORS (the CapabilityStatement says
 * `rest.security.cors: true`), and methods this read-only server does not serve, refused with 405
 * before their body or its content type is looked at.
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, testApp } from './helpers/app.ts';
import { API_KEY } from './helpers/search.ts';

const APP_ORIGIN = 'https://app.example.org';
const { app } = await testApp(t, { env: { API_KEYS: API_KEY }, paths: [path.join(FIXTURES, 'directory')] });

const header = (res: { headers: Record<string, unknown> }, name: string) => String(res.headers[name] ?? '');
const list = (v: string) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean).sort();

t.test('a preflight is answered without a key, allowing the key and the FHIR headers', async (t) => {
  const res = await app.inject({
    method: 'OPTIONS',
    url: '/fhir/v2/Practitioner?family=martin',
    headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'service-api-key,prefer' },
  });
  t.equal(res.statusCode, 204, 'no 401: browsers never send the key on a preflight');
  t.equal(header(res, 'access-control-allow-origin'), '*');
  t.same(list(header(res, 'access-control-allow-headers')), ['accept', 'content-type', 'prefer', 'service-api-key']);
  t.ok(list(header(res, 'access-control-allow-methods')).includes('post'), 'POST allowed (_search)');
  const post = await app.inject({
    method: 'OPTIONS',
    url: '/fhir/v1/Organization/_search',
    headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,service-api-key' },
  });
  t.equal(post.statusCode, 204, 'the preflight of a v1 POST _search too');
  const plain = await app.inject({ method: 'OPTIONS', url: '/fhir/v2/Practitioner' });
  t.same({ status: plain.statusCode, allow: list(header(plain, 'access-control-allow-methods')) }, { status: 204, allow: ['get', 'head', 'post'] }, 'an OPTIONS without preflight headers: the methods, no error');
});

t.test('a keyed cross-origin GET: the Bundle, readable headers exposed', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/fhir/v1/Organization?name=hopital', headers: { origin: APP_ORIGIN, 'SERVICE-API-KEY': API_KEY } });
  t.equal(res.statusCode, 200);
  t.equal(header(res, 'access-control-allow-origin'), '*');
  const exposed = list(header(res, 'access-control-expose-headers'));
  for (const h of ['deprecation', 'link', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) t.ok(exposed.includes(h), `${h} exposed`);
  t.equal((res.json() as { resourceType: string }).resourceType, 'Bundle');
  const denied = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner', headers: { origin: APP_ORIGIN } });
  t.same({ status: denied.statusCode, origin: header(denied, 'access-control-allow-origin') }, { status: 401, origin: '*' }, 'a 401 the app can read');
});

t.test('CORS_ORIGINS limits the origins', async (t) => {
  const { app: limited } = await testApp(t, { env: { API_KEYS: API_KEY, CORS_ORIGINS: `${APP_ORIGIN},http://localhost:3000` } });
  const ok = await limited.inject({ method: 'GET', url: '/fhir/v2/Practitioner', headers: { origin: APP_ORIGIN, 'SERVICE-API-KEY': API_KEY } });
  t.equal(header(ok, 'access-control-allow-origin'), APP_ORIGIN, 'a listed origin is echoed');
  const other = await limited.inject({ method: 'GET', url: '/fhir/v2/Practitioner', headers: { origin: 'https://evil.example', 'SERVICE-API-KEY': API_KEY } });
  t.equal(header(other, 'access-control-allow-origin'), '', 'another origin gets no CORS header');
});

t.test('methods not served: 405 with Allow, whatever the body', async (t) => {
  const cases: [string, string, Record<string, string>, string | undefined, string][] = [
    ['PATCH', '/fhir/v2/Organization/org-hcl', {}, undefined, 'GET, HEAD'],
    ['PATCH', '/fhir/v2/Organization/org-hcl', { 'content-type': 'application/json-patch+json' }, '[]', 'GET, HEAD'],
    ['PATCH', '/fhir/v2/Practitioner', { 'content-type': 'text/plain' }, 'x', 'GET, HEAD, POST'],
    ['PUT', '/fhir/v2/Practitioner/pra-helene-martin', { 'content-type': 'application/xml' }, '<x/>', 'GET, HEAD'],
    ['DELETE', '/fhir/v1/Organization', {}, undefined, 'GET, HEAD, POST'],
    ['POST', '/fhir/v2/metadata', { 'content-type': 'image/png' }, 'x', 'GET, HEAD'],
    ['GET', '/fhir/v2/PractitionerRole/_search', {}, undefined, 'POST'],
  ];
  for (const [method, url, headers, payload, allow] of cases) {
    const res = await app.inject({ method: method as never, url, headers: { 'SERVICE-API-KEY': API_KEY, ...headers }, payload });
    t.same(
      { status: res.statusCode, allow: header(res, 'allow'), type: (res.json() as { resourceType?: string }).resourceType },
      { status: 405, allow, type: 'OperationOutcome' },
      `${method} ${url} ${headers['content-type'] ?? '(no body)'}`,
    );
  }
});
