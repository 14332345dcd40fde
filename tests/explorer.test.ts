/**
 * The API explorer (src/routes/explorer.ts, src/fhir/openapi.ts): the OpenAPI documents validated
 * as OpenAPI 3 and compared with the registry and the CapabilityStatement, parameter by parameter;
 * every example run as a search; the error statuses the server answers against those documented;
 * GET / and /docs through the security hooks. tests/explorer-browser.test.ts drives them in Chromium.
 */
import path from 'node:path';
import { validate } from '@readme/openapi-parser';
import type { InjectOptions } from 'fastify';
import t from 'tap';
import { ERROR_STATUSES } from '../src/fhir/openapi.ts';
import { READ_TYPES, registry, VERSION_TYPES, VERSIONS, type ResourceType, type Version } from '../src/registry/index.ts';
import { FIXTURES, testApp } from './helpers/app.ts';
import { poolsOn } from './helpers/db.ts';
import { API_KEY } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY }, paths: [path.join(FIXTURES, 'directory')] });

interface Param { name: string; in: string; schema: { type: string; enum?: string[]; items?: { enum?: string[] } }; example?: unknown; examples?: { demo?: { value: unknown } }; deprecated?: boolean; 'x-fhir-type'?: string; 'x-fhir-modifiers'?: string[]; $ref?: string }
interface Operation { operationId: string; parameters?: Param[]; deprecated?: boolean; responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }
interface Doc { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> } }
interface CsResource { type: string; searchParam: { name: string; type: string; documentation: string }[]; searchInclude?: string[]; searchRevInclude?: string[] }

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
const keyed = (url: string) => get(url, { 'SERVICE-API-KEY': API_KEY });
const docs = {} as Record<Version, Doc>;
const statements = {} as Record<Version, CsResource[]>;
for (const v of VERSIONS) {
  const res = await get(`/fhir/${v}/openapi.json`);
  t.equal(res.statusCode, 200, `${v}: the document is open, like metadata`);
  docs[v] = res.json() as Doc;
  statements[v] = ((await get(`/fhir/${v}/metadata`)).json() as { rest: { resource: CsResource[] }[] }).rest[0].resource;
}
/** The query parameters of GET [type]. */
const queryOf = (v: Version, type: string) => docs[v].paths[`/${type}`].get.parameters!.filter((p) => p.in === 'query');
/** Result parameters the CapabilityStatement leaves to rest.documentation. */
const RESULT = ['_count', '_elements', '_summary'];

t.test('both documents are valid OpenAPI 3, with the key as an apiKey scheme and their own server', async (t) => {
  for (const v of VERSIONS) {
    const result = await validate(structuredClone(docs[v]) as never);
    t.same({ valid: result.valid, errors: result.valid ? [] : result.errors }, { valid: true, errors: [] }, `${v} validates`);
    t.match(docs[v].openapi, /^3\./);
    t.same(docs[v].servers, [{ url: `http://fhir.test/fhir/${v}` }]);
    t.match(docs[v].components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'SERVICE-API-KEY', description: String });
  }
});

t.test('the paths are the read and the three searches of every type the version searches, the read of the types it only reads, and metadata', async (t) => {
  for (const v of VERSIONS) {
    const readOnly = READ_TYPES[v].filter((type) => !VERSION_TYPES[v].includes(type)).map((type) => `/${type}/{id}`);
    const expected = ['/metadata', '/CodeSystem/$lookup', ...VERSION_TYPES[v].flatMap((type) => [`/${type}`, `/${type}/_search`, `/${type}/{id}`]), ...readOnly].sort();
    t.same(Object.keys(docs[v].paths).sort(), expected, v);
    for (const type of VERSION_TYPES[v]) {
      t.same(Object.keys(docs[v].paths[`/${type}`]).sort(), ['get', 'post'], `${v} ${type}: GET and POST [type]`);
      t.same(Object.keys(docs[v].paths[`/${type}/_search`]), ['post'], `${v} ${type}: POST _search`);
      const ops = [docs[v].paths[`/${type}`].get, docs[v].paths[`/${type}`].post, docs[v].paths[`/${type}/_search`].post, docs[v].paths[`/${type}/{id}`].get];
      t.same(ops.map((o) => Boolean(o.deprecated)), ops.map(() => v === 'v1'), `${v} ${type}: deprecated exactly in v1`);
    }
  }
});

t.test('every parameter of every type, in the document, the CapabilityStatement and the registry alike', async (t) => {
  for (const v of VERSIONS) {
    const searched = statements[v].filter((r) => r.searchParam);
    t.same(searched.map((r) => r.type).sort(), [...VERSION_TYPES[v]].sort(), `${v}: the same types`);
    for (const r of searched) {
      const type = r.type as ResourceType;
      const query = queryOf(v, type);
      const byName = new Map(query.map((p) => [p.name, p]));
      const includes = [...(r.searchInclude?.length ? ['_include'] : []), ...(r.searchRevInclude?.length ? ['_revinclude'] : [])];
      t.same([...byName.keys()].sort(), [...r.searchParam.map((p) => p.name), ...includes, ...RESULT].sort(), `${v} ${type}: the CapabilityStatement's parameters and the result parameters`);
      const names = registry.names(v, type);
      t.same([...names.keys()].sort(), r.searchParam.map((p) => p.name).filter((n) => !['_has', '_total', '_sort'].includes(n)).sort(), `${v} ${type}: the registry's names`);
      for (const sp of r.searchParam) {
        const p = byName.get(sp.name)!;
        const found = names.get(sp.name);
        if (!found) continue;
        t.same(
          { type: p['x-fhir-type'], deprecated: Boolean(p.deprecated), described: typeof (p as { description?: string }).description === 'string' && (p as unknown as { description: string }).description.includes(sp.documentation) },
          { type: sp.type, deprecated: sp.name !== found.param.code, described: true },
          `${v} ${type} ${sp.name}: type, deprecated when an alias, documentation`,
        );
      }
      t.same(byName.get('_include')?.schema.items?.enum ?? [], r.searchInclude ?? [], `${v} ${type}: _include values`);
      t.same(byName.get('_revinclude')?.schema.items?.enum ?? [], r.searchRevInclude ?? [], `${v} ${type}: _revinclude values`);
      const sortDoc = r.searchParam.find((p) => p.name === '_sort')!.documentation;
      const keys = (byName.get('_sort')!.schema.items!.enum ?? []).filter((k) => !k.startsWith('-'));
      t.match(sortDoc, `descending: ${keys.join(', ')}.`, `${v} ${type}: the _sort keys`);
      for (const op of [docs[v].paths[`/${type}`].post, docs[v].paths[`/${type}/_search`].post]) {
        const form = Object.keys(op.requestBody!.content['application/x-www-form-urlencoded'].schema.properties);
        t.same(form.sort(), [...byName.keys()].filter((n) => n !== '_has').sort(), `${v} ${type} ${op.operationId}: the form body takes the same`);
      }
    }
  }
});

t.test('every example comes from the demo data: run as a search, with each modifier, it finds resources', async (t) => {
  for (const v of VERSIONS) {
    for (const type of VERSION_TYPES[v]) {
      for (const q of queryOf(v, type)) {
        const p = { ...q, example: q.examples?.demo?.value };
        if (RESULT.includes(p.name) || ['_include', '_revinclude', '_total', '_sort'].includes(p.name)) continue;
        // _has on a type nothing references (PractitionerRole) has no example to give.
        const referenced = registry.all.some((r) => r.type === 'reference' && r.target?.includes(type) && r.versions.includes(v));
        t.ok(p.example !== undefined || (p.name === '_has' && !referenced), `${v} ${type} ${p.name}: has an example`);
        if (p.example === undefined) continue;
        const pairs = typeof p.example === 'object' ? Object.entries(p.example as Record<string, string>) : [[p.name, String(p.example)]];
        const search = async (suffix: string, value?: string) => {
          const q = pairs.map(([k, x]) => `${encodeURIComponent(k)}${suffix}=${encodeURIComponent(value ?? x)}`).join('&');
          const res = await keyed(`/fhir/${v}/${type}?${q}`);
          return { status: res.statusCode, matches: res.statusCode === 200 ? ((res.json() as { entry?: { search: { mode: string } }[] }).entry ?? []).filter((e) => e.search.mode === 'match').length : 0, q };
        };
        const plain = await search('');
        t.ok(plain.status === 200 && plain.matches > 0, `${v} ${type} ?${plain.q}: ${plain.status}, ${plain.matches} matches`);
        for (const m of p['x-fhir-modifiers'] ?? []) {
          // :text takes words of a label, not the example's code (tests/terminology.test.ts).
          if (m === 'text') continue;
          // name:family searches a family name: the example of family.
          const part = registry.names(v, type).get(p.name)?.param.parts?.[m];
          const partExample = part ? String(queryOf(v, type).find((q) => q.name === part)!.examples?.demo?.value) : undefined;
          const r = m === 'missing' ? await search(':missing', 'false') : await search(`:${m}`, partExample);
          t.ok(r.status === 200 && (m === 'not' || r.matches > 0), `${v} ${type} ?${r.q}: ${r.status}, ${r.matches} matches`);
        }
      }
      const id = (docs[v].paths[`/${type}/{id}`].get.parameters![0].example as string | undefined) ?? '';
      t.equal((await keyed(`/fhir/${v}/${type}/${id}`)).statusCode, 200, `${v} read ${type}/${id}`);
    }
  }
});

t.test('the error statuses the server answers are those documented for the operation', async (t) => {
  const documented = (v: Version, p: string, method: string) => Object.keys(docs[v].paths[p][method].responses).map(Number).sort();
  const all = new Set(VERSIONS.flatMap((v) => Object.values(docs[v].paths).flatMap((p) => Object.values(p).flatMap((o) => Object.keys(o.responses).map(Number)))));
  t.same([...all].sort(), [200, 400, 401, 404, 405, 406, 413, 414, 415, 429, 503], 'the statuses of the issue, and 200');
  const h = { 'SERVICE-API-KEY': API_KEY };
  const cases: [string, string, string, InjectOptions & { url: string }][] = [
    ['/Practitioner', 'get', 'a bad _count', { method: 'GET', url: '/fhir/v2/Practitioner?_count=many', headers: h }],
    ['/Practitioner', 'get', 'no key', { method: 'GET', url: '/fhir/v2/Practitioner' }],
    ['/Practitioner', 'get', 'Accept: XML', { method: 'GET', url: '/fhir/v2/Practitioner', headers: { ...h, accept: 'application/fhir+xml' } }],
    ['/Practitioner', 'get', 'a URL too long', { method: 'GET', url: `/fhir/v2/Practitioner?family=${'a'.repeat(9000)}`, headers: h }],
    ['/Practitioner/{id}', 'get', 'an unknown id', { method: 'GET', url: '/fhir/v2/Practitioner/no-such-id', headers: h }],
    ['/Practitioner', 'post', 'POST [type] with JSON', { method: 'POST', url: '/fhir/v2/Practitioner', headers: { ...h, 'content-type': 'application/fhir+json' }, payload: '{}' }],
    ['/Practitioner/_search', 'post', 'a body too large', { method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' }, payload: `family=${'a'.repeat(70000)}` }],
    ['/Practitioner/_search', 'post', 'a text body', { method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...h, 'content-type': 'text/plain' }, payload: 'family=martin' }],
    ['/Organization', 'post', 'a text body on POST [type]', { method: 'POST', url: '/fhir/v1/Organization', headers: { ...h, 'content-type': 'text/plain' }, payload: 'name=x' }],
  ];
  for (const [p, method, what, request] of cases) {
    const res = await app.inject(request);
    const v = request.url.startsWith('/fhir/v1') ? 'v1' : 'v2';
    t.ok(res.statusCode >= 400 && documented(v, p, method).includes(res.statusCode), `${what}: ${res.statusCode}, documented for ${method.toUpperCase()} ${p}`);
    t.equal((res.json() as { resourceType: string }).resourceType, 'OperationOutcome', `${what}: an OperationOutcome`);
  }
  const { app: limited } = await testApp(t, { db, env: { API_KEYS: API_KEY, RATE_LIMIT: '1' } });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await limited.inject({ method: 'GET', url: '/fhir/v2/Practitioner?_count=1', headers: h })).statusCode);
  t.ok(statuses.includes(429) && documented('v2', '/Practitioner', 'get').includes(429), `a spent rate limit: ${statuses.join(', ')}`);
  t.same(ERROR_STATUSES.read, documented('v2', '/Practitioner/{id}', 'get').filter((s) => s !== 200), 'the read lists its own');
});

t.test('GET /: the server, its bases and links, and the stored resources from the statistics', async (t) => {
  const res = await get('/', { accept: 'application/json' });
  t.equal(res.statusCode, 200, 'no key needed');
  const home = res.json() as { name: string; version: string; bases: Record<string, { url: string }>; links: { metadata: Record<string, string>; openapi: Record<string, string>; docs: string }; apiKey: string; resources: Record<string, number> };
  t.match(home, { name: 'annuaire-fhir', version: /^\d+\.\d+\.\d+/, bases: { v2: { url: 'http://fhir.test/fhir/v2' }, v1: { url: 'http://fhir.test/fhir/v1' } } });
  t.same(home.links, {
    metadata: { v1: 'http://fhir.test/fhir/v1/metadata', v2: 'http://fhir.test/fhir/v2/metadata' },
    openapi: { v1: 'http://fhir.test/fhir/v1/openapi.json', v2: 'http://fhir.test/fhir/v2/openapi.json' },
    docs: 'http://fhir.test/docs',
  });
  t.match(home.apiKey, /SERVICE-API-KEY/);
  // The loader analyzes what it loaded: on tables this small the statistics read every row.
  const counted = await db.sql<{ type: string; n: number }[]>`select type, count(*)::int as n from resource group by type`;
  t.same(home.resources, Object.fromEntries(['Practitioner', 'Organization', 'PractitionerRole', 'Location', 'Device', 'HealthcareService'].map((ty) => [ty, counted.find((c) => c.type === ty)?.n ?? 0])), 'the estimates, exact on analyzed small tables');
  const html = await get('/', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
  t.equal(html.headers['content-type'], 'text/html; charset=utf-8');
  t.match(html.body, /<h1>annuaire-fhir/);
  t.match(html.body, 'href="http://fhir.test/docs"');
  t.match(html.body, `<td>Practitioner</td><td class="n">${home.resources.Practitioner}</td>`);
  t.match(String(html.headers['content-security-policy']), /default-src 'none'/);
  const hostile = await get('/', { host: 'x"><script>alert(1)</script>' });
  t.notMatch(hostile.body, '<script>', 'a Host header is escaped');
});

t.test('GET / on an empty database: no resources, not the guesses of a table never analyzed', async (t) => {
  const { app: empty } = await testApp(t, { env: { API_KEYS: API_KEY } });
  const home = (await empty.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } })).json() as { resources: Record<string, number> };
  t.same(home.resources, { Practitioner: 0, Organization: 0, PractitionerRole: 0, Location: 0, Device: 0, HealthcareService: 0 });
});

t.test('GET / while the database is away: the page, without the resources', async (t) => {
  // A port nothing listens on: every connection is refused at once.
  const { app: away } = await testApp(t, { db: poolsOn(t, 'postgres://postgres@127.0.0.1:1/none') });
  const res = await away.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
  t.same({ status: res.statusCode, resources: (res.json() as { resources: unknown }).resources }, { status: 200, resources: null });
  t.match((await away.inject({ method: 'GET', url: '/' })).body, 'unavailable: the database does not answer just now');
});

t.test('/docs and its assets are open HTML and scripts; the API keeps requiring the key', async (t) => {
  const page = await get('/docs', { accept: 'text/html' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  const csp = String(page.headers['content-security-policy']);
  t.match(csp, /script-src 'self'/);
  t.notMatch(csp.replace(" connect-src 'self' http://fhir.test;", ''), /https?:/, 'no other host in the policy than PUBLIC_BASE_URL, for the searches');
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  t.ok(assets.length >= 4, `the page's assets: ${assets.join(' ')}`);
  for (const a of assets) {
    t.notMatch(a, /^(https?:)?\/\//, `${a}: from the server`);
    const res = await get(a);
    t.equal(res.statusCode, 200, `${a}: served without a key`);
    t.notMatch(String(res.headers['content-type']), /fhir/, `${a}: not an OperationOutcome`);
  }
  const init = await get('/docs/static/swagger-initializer.js');
  t.match(init.body, '"url":"/fhir/v2/openapi.json"');
  t.match(init.body, '"url":"/fhir/v1/openapi.json"');
  t.match(init.body, '"persistAuthorization":true');
  t.match(init.body, 'validatorUrl: null', 'no call to the online validator');
  const json = await get('/docs/json');
  t.same({ status: json.statusCode, servers: (json.json() as Doc).servers }, { status: 200, servers: [{ url: 'http://fhir.test/fhir/v2' }] }, '/docs/json is the v2 document');
  t.equal((await get('/fhir/v2/Practitioner')).statusCode, 401, 'a search without the key');
  t.equal((await get('/docs/../fhir/v2/Practitioner')).statusCode, 401, 'a path that leaves /docs');
  t.equal((await app.inject({ method: 'POST', url: '/docs' })).statusCode, 401, 'only GET and HEAD are open');
});

t.test('DOCS_ENABLED=false: no /docs (the documents stay); METADATA_REQUIRES_KEY closes the documents', async (t) => {
  const { app: off } = await testApp(t, { db, env: { API_KEYS: API_KEY, DOCS_ENABLED: 'false' } });
  t.equal((await off.inject({ method: 'GET', url: '/docs' })).statusCode, 401, '/docs is an unknown path: the key first');
  t.equal((await off.inject({ method: 'GET', url: '/docs', headers: { 'SERVICE-API-KEY': API_KEY } })).statusCode, 404);
  t.equal((await off.inject({ method: 'GET', url: '/fhir/v2/openapi.json' })).statusCode, 200, 'the document is still served');
  t.notMatch((await off.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } })).body, '/docs', 'the home page has no link to it');
  const { app: closed } = await testApp(t, { db, env: { API_KEYS: API_KEY, METADATA_REQUIRES_KEY: 'true' } });
  t.equal((await closed.inject({ method: 'GET', url: '/fhir/v1/openapi.json' })).statusCode, 401);
  t.equal((await closed.inject({ method: 'GET', url: '/fhir/v1/openapi.json', headers: { 'SERVICE-API-KEY': API_KEY } })).statusCode, 200);
});
