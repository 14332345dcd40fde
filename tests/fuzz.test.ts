import path from 'node:path';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { registry, VERSION_TYPES, type ResourceType, type Version } from '../src/registry/index.ts';
import { FIXTURES, testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';

/**
 * Property: whatever is thrown at the search endpoints of both versions (GET and POST) with a valid
 * key — random names, modifiers, prefixes, encodings, huge and binary values, SQL fragments — the
 * answer is 2xx or 4xx, never 5xx; a 4xx carries an OperationOutcome, a 2xx a Bundle; and nothing
 * in the database changes. FUZZ_RUNS (default 1000 per property) and FUZZ_SEED replay a run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const db = await testDatabase(t);
const { app, deps } = await testApp(t, { db, paths: [path.join(FIXTURES, 'ans-ig-examples')] });
const key = (await deps.keys.create({ name: 'fuzz' })).key;

async function snapshot(): Promise<Record<string, unknown>> {
  const [row] = await db.sql`
    select
      (select count(*) from resource)::int as resources,
      (select md5(coalesce(string_agg(rid || ':' || type || '/' || id || ':' || version_id || ':' || content::text, ',' order by rid), '')) from resource) as resource_checksum,
      (select count(*) from token_idx)::int as token_rows,
      (select count(*) from string_idx)::int as string_rows,
      (select count(*) from date_idx)::int as date_rows,
      (select count(*) from reference_idx)::int as reference_rows,
      (select count(*) from token_system)::int as systems,
      (select md5(coalesce(string_agg(name || ':' || encode(key_hash, 'hex') || ':' || coalesce(revoked_at::text, '-'), ',' order by name), '')) from api_key) as keys_checksum,
      (select string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public') as tables`;
  return row;
}

const TARGETS: [Version, ResourceType | 'Patient'][] = [
  ...(Object.entries(VERSION_TYPES) as [Version, readonly ResourceType[]][]).flatMap(([v, types]) => types.map((ty): [Version, ResourceType] => [v, ty])),
  ['v1', 'Practitioner' as ResourceType],
  ['v2', 'Patient'],
];

const SQL = [
  "' OR '1'='1",
  "'; drop table resource; --",
  '1; DELETE FROM resource; --',
  "') union select content::text from resource --",
  "$$; truncate resource cascade; $$",
  "\\'; update resource set content = '{}'; --",
  '%',
  '_',
  '%%',
  '\\',
  "'",
  '"',
  '`',
  '*/ select 1 /*',
  "E'\\x00'",
  'pg_sleep(5)',
  "1' and pg_sleep(5) is null --",
  '$1',
  '::text',
  '{"$ne": null}',
];
const PREFIXES = ['', 'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap', 'xx', 'EQ', 'g'];
const DATES = ['2020', '2020-01', '2020-01-31', '2020-02-30', '2020-13-01', '2020-01-01T10:00', '2020-01-01T10:00:00Z', '2020-01-01T10:00:00.123+01:00', '2020-01-01T10:00:00 01:00', '0000', '99999', '2020-01-01T25:61:61Z', 'now', ''];
const MODIFIERS = ['', ':exact', ':contains', ':missing', ':not', ':text', ':above', ':below', ':in', ':of-type', ':identifier', ':Organization', ':Practitioner', ':Device', ':iterate', ':recurse', ':', '::', ':exact:contains'];
const RESULT = ['_count', '_total', '_summary', '_elements', '_include', '_revinclude', '_cursor', '_format', '_pretty', '_sort', '_contained', '_containedType', '_query', '_id', '_lastUpdated', '_has:PractitionerRole:practitioner:role', '_has:PractitionerRole:organization:_id', '_has:Nope:x:y', '_has:', '_include:iterate', '_revinclude:recurse'];
const RESULT_VALUES = ['0', '1', '-1', '1000000', '1e3', 'true', 'false', 'count', 'text', 'data', 'accurate', 'estimate', 'none', 'json', 'xml', 'application/fhir+json', 'text/html', '*', 'PractitionerRole:practitioner', 'PractitionerRole:organization:Organization', 'Organization:partof', 'x:y:z:w', 'identifier,name', 'a.b', 'eyJhIjoiMSJ9.c2ln', 'abc.def.ghi'];

const namesOf = (version: Version, type: string): string[] =>
  type === 'Patient' ? ['name', 'identifier'] : [...registry.names(version, type as ResourceType).keys()];

const binary = fc.string({ unit: 'binary', maxLength: 12 });
const lone = fc.constantFrom('\uD800', '\uDFFF', 'a\uD83Db', '\u0000', '\u0000abc', 'a\u0001\u001f\u007f', '\uFFFE\uFFFF', '\u202E', 'é', 'e\u0301', 'ß', 'İ', '東京', '🙂');

function nameArb(version: Version, type: string): fc.Arbitrary<string> {
  const known = namesOf(version, type);
  const refs = type === 'Patient' ? [] : registry.forType(type as ResourceType).filter((p) => p.type === 'reference').map((p) => p.code);
  const base = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    { weight: 3, arbitrary: fc.constantFrom(...RESULT) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 10 }) },
    { weight: 1, arbitrary: binary },
    { weight: 1, arbitrary: fc.constantFrom(...SQL) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...(refs.length ? refs : ['organization'])), fc.constantFrom('', ':Organization', ':Practitioner', ':Nope'), fc.constantFrom('name', 'identifier', '_id', 'partof.name', 'x', 'active', 'address-city'))
        .map(([r, m, n]) => `${r}${m}.${n}`),
    },
  );
  return fc.tuple(base, fc.constantFrom(...MODIFIERS), fc.boolean()).map(([n, m, bare]) => (n.startsWith('_') && bare ? n : n + m));
}

const valueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...DATES)).map(([p, d]) => p + d) },
  { weight: 3, arbitrary: fc.constantFrom(...RESULT_VALUES) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'urn:oid:1.2.250.1.71.4.2.1|10001',
      'https://rpps.esante.gouv.fr|810000000',
      '|10',
      'http://x|',
      '|',
      '||',
      'a\\|b',
      'a\\,b',
      'a\\$b',
      'a\\x',
      'trailing\\',
      'true',
      'false',
      'maybe',
      'Organization/158480DP',
      'Practitioner/practitioner-example',
      'http://fhir.test/fhir/v2/Organization/158480DP',
      'http://fhir.test/fhir/v1/Organization/158480DP/_history/1',
      'https://elsewhere.example/fhir/Organization/1',
      'a/b/c',
      'Organization/',
      '/x',
      '../../etc/passwd',
      'MARTIN',
      'mart',
      'Jean-Pierre',
      "d'Arc",
    ),
  },
  { weight: 3, arbitrary: fc.constantFrom(...SQL) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: binary },
  { weight: 2, arbitrary: lone },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom(...SQL)), { minLength: 2, maxLength: 120 }).map((a) => a.join(',')) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '%', 'é', '\u0000', "'"), fc.integer({ min: 200, max: 20000 })).map(([c, n]) => c.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('-1', '1e309', '99999999999999999999', 'NaN', 'Infinity', '0x10', '1.5', ' 1', '') },
);

type Encoding = 'standard' | 'raw' | 'double' | 'plus' | 'broken';
const encodingArb = fc.constantFrom<Encoding>('standard', 'standard', 'raw', 'double', 'plus', 'broken');

/** Leaves printable ASCII raw (,|:$/'"<>{}\\^` …) and percent-encodes only what would end the pair. */
function rawEncode(s: string): string {
  return Array.from(s)
    .map((c) => (/^[!-~]$/.test(c) && !'#&=+%'.includes(c) ? c : safeEncode(c)))
    .join('');
}

function safeEncode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    // lone surrogates: encodeURIComponent throws; send their UTF-8-ish bytes as escapes
    return Array.from(Buffer.from(s, 'utf8')).map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
}

function encode(s: string, how: Encoding, salt: number): string {
  switch (how) {
    case 'standard':
      return safeEncode(s);
    case 'raw':
      return rawEncode(s);
    case 'double':
      return safeEncode(safeEncode(s));
    case 'plus':
      return safeEncode(s).replace(/%20/g, '+');
    case 'broken': {
      const junk = ['%', '%G1', '%E0%A4', '%C3', '%C0%80', '%FF%FE', '%%', '%2', '%u0041', '%ED%A0%80'][salt % 10];
      const e = safeEncode(s);
      const at = salt % (e.length + 1);
      return e.slice(0, at) + junk + e.slice(at);
    }
  }
}

/** A well-formed pair for a parameter of the type: these get past the parser and reach the SQL. */
function plausibleArb(version: Version, type: string): fc.Arbitrary<[string, string]> {
  if (type === 'Patient') return fc.constant(['name', 'x']);
  const names = [...registry.names(version, type as ResourceType).entries()];
  return fc.constantFrom(...names).chain(([name, { param }]) => {
    const text = fc.oneof(fc.constantFrom('MARTIN', 'mart', 'Jean', 'é', 'paris', '75', 'PHARMACIE'), fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...SQL), lone);
    switch (param.type) {
      case 'string':
        return fc.tuple(fc.constantFrom(name, `${name}:exact`, `${name}:contains`), fc.array(text, { minLength: 1, maxLength: 3 }).map((v) => v.join(',')));
      case 'token':
        return fc.tuple(
          fc.constantFrom(name, `${name}:not`),
          fc.oneof(
            fc.constantFrom('true', 'false', '10', 'SM26', 'urn:oid:1.2.250.1.71.4.2.1|10001', 'https://rpps.esante.gouv.fr|810000000', '|10', 'http://x|'),
            fc.tuple(fc.oneof(fc.constant(''), fc.constantFrom(...SQL), fc.webUrl()), text).map(([a, b]) => `${a}|${b}`),
            text,
          ),
        );
      case 'date':
        return fc.tuple(fc.constant(name), fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...DATES)).map(([p, d]) => p + d));
      case 'reference':
        return fc.tuple(
          fc.constantFrom(name, `${name}:missing`),
          fc.constantFrom('Organization/158480DP', 'Practitioner/practitioner-example', '158480DP', 'true', 'http://fhir.test/fhir/v2/Organization/158480DP', "Organization/x'y"),
        );
      case 'special':
        return fc.tuple(
          fc.constantFrom(name, `${name}:missing`),
          fc.oneof(
            fc.constantFrom('48.85|2.35', '48.85|2.35|2|km', '-21.1|55.5|500|m', '90|180|200|km', '0|-180|1|[mi_i]', '48.85|2.35|0', '91|0', 'x|y', '48.85|2.35,45.7|4.8', 'true'),
            fc.tuple(fc.double({ min: -95, max: 95, noNaN: true }), fc.double({ min: -185, max: 185, noNaN: true }), fc.double({ min: 0, max: 300, noNaN: true }), fc.constantFrom('', 'km', 'm', 'mi', '[mi_i]', 'ft'))
              .map(([lat, lon, d, u]) => `${lat}|${lon}|${d}|${u}`),
          ),
        );
    }
  });
}

interface FuzzRequest {
  target: [Version, string];
  pairs: [string, string, Encoding, number][];
  strict: boolean;
}

const requestArb: fc.Arbitrary<FuzzRequest> = fc
  .oneof({ weight: 4, arbitrary: fc.constantFrom(...TARGETS.slice(0, -2)) }, { weight: 1, arbitrary: fc.constantFrom(...TARGETS.slice(-2)) })
  .chain((target) => {
    const wild = fc.tuple(nameArb(target[0], target[1]), valueArb);
    const pair = fc.oneof({ weight: 3, arbitrary: plausibleArb(target[0], target[1]) }, { weight: 1, arbitrary: wild });
    const encoded = fc.tuple(pair, fc.oneof({ weight: 4, arbitrary: fc.constant<Encoding>('standard') }, { weight: 2, arbitrary: encodingArb }), fc.nat(1000));
    return fc.record({
      target: fc.constant(target as [Version, string]),
      pairs: fc
        .array(encoded, { minLength: 1, maxLength: 5 })
        .map((a) => a.map(([[n, v], how, salt]): [string, string, Encoding, number] => [n, v, how, salt])),
      strict: fc.boolean(),
    });
  });

const query = (pairs: FuzzRequest['pairs']) => pairs.map(([n, v, how, salt]) => `${encode(n, how, salt)}=${encode(v, how, salt + 1)}`).join('&');

function check(res: LightMyRequestResponse, label: string): void {
  const status = res.statusCode;
  if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
    throw new Error(`${label}: status ${status}: ${res.body.slice(0, 500)}`);
  }
  let body: { resourceType?: string; issue?: { code?: string }[] };
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new Error(`${label}: status ${status}, not JSON: ${res.body.slice(0, 300)}`);
  }
  if (status >= 400) {
    if (body.resourceType !== 'OperationOutcome' || !Array.isArray(body.issue) || !body.issue[0]?.code) {
      throw new Error(`${label}: ${status} without an OperationOutcome: ${res.body.slice(0, 300)}`);
    }
    if (/\n\s+at |node_modules|postgres|syntax error/i.test(res.body)) throw new Error(`${label}: internals in the answer: ${res.body.slice(0, 300)}`);
  } else if (body.resourceType !== 'Bundle') {
    throw new Error(`${label}: ${status} without a Bundle: ${res.body.slice(0, 300)}`);
  }
}

const before = await snapshot(); // every top-level await comes before the first t.test

t.test('a NUL character in a search value is a 400, not a 500', async (t) => {
  for (const url of ['/fhir/v2/Practitioner?family:exact=%00', '/fhir/v2/Practitioner?identifier=%00', '/fhir/v2/Practitioner?identifier=a%00|x', '/fhir/v2/Practitioner?_id=a%00', '/fhir/v1/Organization?address-country:exact=a%00']) {
    const res = await app.inject({ method: 'GET', url, headers: { 'service-api-key': key } });
    t.equal(res.statusCode, 400, url);
    t.match(JSON.parse(res.body), { resourceType: 'OperationOutcome', issue: [{ code: 'invalid', diagnostics: /NUL/ }] });
  }
});

const statuses = new Map<number, number>();
const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
const headersOf = (r: FuzzRequest) => ({ 'service-api-key': key, ...(r.strict ? { prefer: 'handling=strict' } : {}) });

t.test('GET [type]?… never fails the server', async (t) => {
  await fc.assert(
    fc.asyncProperty(requestArb, async (r) => {
      const url = `/fhir/${r.target[0]}/${r.target[1]}?${query(r.pairs)}`;
      const res = await app.inject({ method: 'GET', url, headers: headersOf(r) });
      count(res.statusCode);
      check(res, `GET ${url.slice(0, 300)}`);
    }),
    { numRuns: RUNS, seed: SEED },
  );
  t.pass(`${RUNS} GET searches`);
});

t.test('POST [type]/_search and POST [type] never fail the server', async (t) => {
  await fc.assert(
    fc.asyncProperty(requestArb, fc.constantFrom('_search', 'type', 'both'), async (r, how) => {
      const cut = Math.floor(r.pairs.length / 2);
      const inQuery = how === 'both' ? r.pairs.slice(0, cut) : [];
      const inBody = how === 'both' ? r.pairs.slice(cut) : r.pairs;
      const url = `/fhir/${r.target[0]}/${r.target[1]}${how === 'type' ? '' : '/_search'}${inQuery.length ? `?${query(inQuery)}` : ''}`;
      const res = await app.inject({ method: 'POST', url, headers: { ...headersOf(r), ...FORM }, payload: query(inBody) });
      count(res.statusCode);
      check(res, `POST ${url.slice(0, 200)} body ${query(inBody).slice(0, 200)}`);
    }),
    { numRuns: RUNS, seed: SEED },
  );
  t.pass(`${RUNS} POST searches`);
});

t.test('GET [type]/[id] with any id never fails the server', async (t) => {
  const idArb = fc.oneof(
    fc.constantFrom('practitioner-example', '158480DP', 'nope', '', '..', '.', '_search', '_history', 'metadata', "x' or '1'='1", 'a'.repeat(64), 'a'.repeat(65), 'x'.repeat(250)),
    fc.string({ maxLength: 80 }),
    binary,
    lone,
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...TARGETS), idArb, encodingArb, fc.nat(1000), async ([version, type], id, how, salt) => {
      const url = `/fhir/${version}/${type}/${encode(id, how, salt).replace(/%2F/gi, '/')}`;
      const res = await app.inject({ method: 'GET', url, headers: { 'service-api-key': key } });
      count(res.statusCode);
      if (res.statusCode >= 500 || res.statusCode < 200) throw new Error(`GET ${url.slice(0, 300)}: status ${res.statusCode}: ${res.body.slice(0, 300)}`);
      const body = JSON.parse(res.body);
      if (res.statusCode >= 400 && body.resourceType !== 'OperationOutcome') throw new Error(`GET ${url.slice(0, 300)}: ${res.statusCode} without an OperationOutcome: ${res.body.slice(0, 300)}`);
    }),
    { numRuns: Math.ceil(RUNS / 3), seed: SEED },
  );
  t.pass('reads');
});

t.test('the database is unchanged', async (t) => {
  t.same(await snapshot(), before);
  t.ok((statuses.get(200) ?? 0) > RUNS / 20, `some searches succeed (${JSON.stringify(Object.fromEntries(statuses))})`);
  t.ok((statuses.get(400) ?? 0) > RUNS / 20, 'and some are refused');
});
