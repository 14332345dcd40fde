/**
 * `_sort` as clients use it: the first request without `_count`, then every next link as written.
 * The order is checked against keys computed here from the generated files (a string parameter's
 * lowest folded value ascending, its highest descending, a resource without one last either way),
 * and completeness against the matches computed here too.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { generate } from '../src/generate/index.ts';
import { load, testApp } from './helpers/app.ts';
import { API_KEY, idsOf, type Bundle } from './helpers/search.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sort-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await generate({ scale: 0.0003, outDir: dir, seed: 5 });
// Resources whose key value is stored twice, in spellings that fold alike: each sorts once.
appendFileSync(path.join(dir, 'Practitioner.ndjson'), [
  { resourceType: 'Practitioner', id: 'fold-twice', meta: { lastUpdated: '2024-01-01T00:00:00Z' }, name: [{ family: 'Durand', given: ['Zoé'] }, { family: 'DURAND', given: ['ZOE'] }] },
  { resourceType: 'Practitioner', id: 'fold-thrice', meta: { lastUpdated: '2024-01-01T00:00:00Z' }, name: [{ family: 'Ábel', given: ['Zoe'] }, { family: 'abel' }, { family: 'ABEL', given: ['zoé'] }] },
].map((r) => `${JSON.stringify(r)}\n`).join(''));

type Res = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const read = (type: string): Res[] => readFileSync(path.join(dir, `${type}.ndjson`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Res);
const byType: Record<string, Res[]> = { Practitioner: read('Practitioner'), Organization: read('Organization') };

const { app, db, deps } = await testApp(t, { env: { API_KEYS: API_KEY } });
await load(db, [dir]);

/** Case, accents and punctuation folded, as string search compares (written here on its own). */
const LETTERS: Record<string, string> = { æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', ß: 'ss', đ: 'd' };
const fold = (s: string) =>
  s.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[æœøłßđ]/gu, (c) => LETTERS[c]).replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

const strings = (xs: unknown[]): string[] => xs.filter((x): x is string => typeof x === 'string' && x.trim() !== '');
const names = (r: Res) => (r.name ?? []) as Res[];
const addresses = (r: Res) => (r.address ?? []) as Res[];
/** The values each sort key reads, per type (from the FHIR elements, not from the server's registry). */
const VALUES: Record<string, Record<string, (r: Res) => string[]>> = {
  Practitioner: {
    family: (r) => strings(names(r).map((n) => n.family)),
    given: (r) => strings(names(r).flatMap((n) => n.given ?? [])),
    name: (r) => strings(names(r).flatMap((n) => [n.family, ...(n.given ?? []), ...(n.prefix ?? []), ...(n.suffix ?? []), n.text])),
  },
  Organization: {
    name: (r) => strings([r.name, ...(r.alias ?? [])]),
    'address-city': (r) => strings(addresses(r).map((a) => a.city)),
    'address-postalcode': (r) => strings(addresses(r).map((a) => a.postalCode)),
  },
};

type Key = string | number | undefined;
/** A resource's key for `code`, in the direction asked; undefined when it has no value. */
function keyOf(type: string, r: Res, code: string, desc: boolean): Key {
  if (code === '_id') return r.id as string;
  if (code === '_lastUpdated') return Date.parse(r.meta.lastUpdated as string);
  const folded = VALUES[type][code](r).map(fold).filter(Boolean).sort();
  return desc ? folded.at(-1) : folded[0];
}
/** -1, 0, 1: a before b, tied, after, for one key (missing last in both directions). */
function compare(a: Key, b: Key, desc: boolean): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  const c = a < b ? -1 : a > b ? 1 : 0;
  return desc ? -c : c;
}

interface Walked { ids: string[]; statuses: number[]; selfSorts: (string | null)[]; warnings: string[] }
async function walk(url: string, headers: Record<string, string> = {}): Promise<Walked> {
  const out: Walked = { ids: [], statuses: [], selfSorts: [], warnings: [] };
  let next: string | undefined = url;
  while (next && out.statuses.length < 200) {
    const res = await app.inject({ method: 'GET', url: next, headers: { 'SERVICE-API-KEY': API_KEY, ...headers } });
    out.statuses.push(res.statusCode);
    if (res.statusCode !== 200) break;
    const b = res.json() as Bundle;
    out.ids.push(...idsOf(b, 'match'));
    out.selfSorts.push(new URL(b.link.find((l) => l.relation === 'self')!.url).searchParams.get('_sort'));
    for (const e of b.entry ?? []) if (e.search.mode === 'outcome') out.warnings.push(JSON.stringify(e.resource));
    const link = b.link.find((l) => l.relation === 'next')?.url;
    next = link ? `${new URL(link).pathname}${new URL(link).search}` : undefined;
  }
  return out;
}

/** Half the practitioners were updated at or after this instant: a window a mirror asks for. */
const updated = byType.Practitioner.map((r) => Date.parse(r.meta.lastUpdated as string)).sort((a, b) => a - b);
const since = new Date(updated[Math.floor(updated.length / 2)]).toISOString();
const until = new Date(updated[Math.floor((updated.length * 7) / 8)]).toISOString();
const at = (r: Res) => Date.parse(r.meta.lastUpdated as string);

const cases: { type: 'Practitioner' | 'Organization'; version?: 'v1'; sort: string; filter?: [string, (r: Res) => boolean] }[] = [
  { type: 'Practitioner', sort: 'family' },
  { type: 'Practitioner', sort: '-family' },
  { type: 'Practitioner', sort: 'given' },
  { type: 'Practitioner', sort: '-name' },
  { type: 'Practitioner', sort: '_id' },
  { type: 'Practitioner', sort: '-_id' },
  { type: 'Practitioner', sort: '_lastUpdated' },
  { type: 'Practitioner', sort: '-_lastUpdated' },
  { type: 'Practitioner', sort: 'family,-given' },
  { type: 'Practitioner', sort: '-given,_lastUpdated,_id' },
  { type: 'Practitioner', sort: 'family', filter: ['active=true', (r) => r.active === true] },
  // a range of the sort key itself bounds the walk of its index (src/fhir/sort.ts sortBounds)
  { type: 'Practitioner', sort: '_lastUpdated', filter: [`_lastUpdated=ge${since}`, (r) => at(r) >= Date.parse(since)] },
  { type: 'Practitioner', sort: '-_lastUpdated', filter: [`_lastUpdated=ge${since}`, (r) => at(r) >= Date.parse(since)] },
  { type: 'Practitioner', sort: '_lastUpdated,family', filter: [`_lastUpdated=gt${since}&_lastUpdated=lt${until}`, (r) => at(r) > Date.parse(since) && at(r) < Date.parse(until)] },
  { type: 'Practitioner', sort: '-_lastUpdated', filter: [`_lastUpdated=ge${since}&active=true`, (r) => at(r) >= Date.parse(since) && r.active === true] },
  { type: 'Organization', sort: 'name' },
  { type: 'Organization', sort: '-address-city,name' },
  { type: 'Organization', sort: 'address-postalcode', filter: ['active=true', (r) => r.active === true] },
  { type: 'Organization', version: 'v1', sort: '-address-postalcode,-_lastUpdated' },
];

for (const c of cases) {
  const label = `${c.version ?? 'v2'} ${c.type}?_sort=${c.sort}${c.filter ? `&${c.filter[0]}` : ''}`;
  t.test(label, async (t) => {
    const keys = c.sort.split(',').map((k) => ({ code: k.replace(/^-/, ''), desc: k.startsWith('-') }));
    const resources = byType[c.type].filter(c.filter?.[1] ?? (() => true));
    const w = await walk(`/fhir/${c.version ?? 'v2'}/${c.type}?_sort=${c.sort}${c.filter ? `&${c.filter[0]}` : ''}`);
    t.same(w.statuses.filter((s) => s !== 200), [], 'every page 200');
    t.same([...w.ids].sort(), resources.map((r) => r.id as string).sort(), 'every match');
    t.equal(new Set(w.ids).size, w.ids.length, 'each once');
    t.ok(w.statuses.length >= 3, `several pages (${w.statuses.length})`);
    t.ok(w.selfSorts.every((s) => s === c.sort), 'the self link of every page shows the sort');
    const byId = new Map(resources.map((r) => [r.id as string, r]));
    const tuple = (id: string) => keys.map((k) => keyOf(c.type, byId.get(id)!, k.code, k.desc));
    const misplaced: string[] = [];
    for (let i = 1; i < w.ids.length; i++) {
      const [a, b] = [tuple(w.ids[i - 1]), tuple(w.ids[i])];
      const order = keys.map((k, j) => compare(a[j], b[j], k.desc)).find((x) => x !== 0) ?? 0;
      if (order > 0) misplaced.push(`${w.ids[i - 1]} ${JSON.stringify(a)} before ${w.ids[i]} ${JSON.stringify(b)}`);
    }
    t.same(misplaced.slice(0, 5), [], 'in order');
  });
}

t.test('a resource without a value sorts last in both directions', async (t) => {
  const withoutGiven = byType.Practitioner.filter((r) => VALUES.Practitioner.given(r).length === 0).map((r) => r.id as string);
  t.ok(withoutGiven.length > 0 && withoutGiven.length < byType.Practitioner.length / 2, `some practitioners have no given name (${withoutGiven.length})`);
  for (const sort of ['given', '-given']) {
    const w = await walk(`/fhir/v2/Practitioner?_sort=${sort}`);
    t.same(w.ids.slice(-withoutGiven.length).sort(), [...withoutGiven].sort(), `${sort}: they come last`);
  }
});

t.test('keys that cannot sort: a warning entry, or 400 with handling=strict', async (t) => {
  const lenient = await walk('/fhir/v2/Practitioner?_sort=identifier,family');
  t.equal(lenient.statuses[0], 200);
  t.ok(lenient.warnings[0]?.includes('identifier'), 'the warning names the key');
  t.same(lenient.selfSorts[0], 'family', 'the self link keeps the keys applied');
  const none = await walk('/fhir/v2/Organization?_sort=-pharmacy-licence');
  t.same({ status: none.statuses[0], sort: none.selfSorts[0], warned: none.warnings.length > 0 }, { status: 200, sort: null, warned: true }, 'no key applied: key order');
  const strict = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner?_sort=identifier', headers: { 'SERVICE-API-KEY': API_KEY, prefer: 'handling=strict' } });
  const body = strict.json() as { issue: { diagnostics: string; expression?: string[] }[] };
  t.same({ status: strict.statusCode, expression: body.issue[0].expression }, { status: 400, expression: ['_sort'] });
  t.match(body.issue[0].diagnostics, /family/, 'and says which keys sort');
});

t.test('a cursor belongs to its sort', async (t) => {
  const first = (await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner?_sort=family', headers: { 'SERVICE-API-KEY': API_KEY } })).json() as Bundle;
  const cursor = new URL(first.link.find((l) => l.relation === 'next')!.url).searchParams.get('_cursor')!;
  for (const q of ['_sort=-family', '_sort=given', '']) {
    const res = await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?${q}&_cursor=${encodeURIComponent(cursor)}`, headers: { 'SERVICE-API-KEY': API_KEY } });
    t.equal(res.statusCode, 400, `refused with ${q || 'no sort'}`);
  }
});

t.test('the CapabilityStatement says which keys sort each type', async (t) => {
  for (const [version, type, keys] of [
    ['v2', 'Practitioner', ['_id', '_lastUpdated', 'family', 'given', 'name']],
    ['v2', 'Organization', ['_id', '_lastUpdated', 'address-city', 'address-postalcode', 'name']],
    ['v2', 'PractitionerRole', ['_id', '_lastUpdated']],
    ['v1', 'Organization', ['_id', '_lastUpdated', 'address-city', 'address-postalcode', 'name']],
  ] as const) {
    const cs = (await app.inject({ method: 'GET', url: `/fhir/${version}/metadata` })).json() as { rest: { resource: { type: string; searchParam: { name: string; documentation: string }[] }[] }[] };
    const doc = cs.rest[0].resource.find((r) => r.type === type)!.searchParam.find((p) => p.name === '_sort')?.documentation ?? '';
    const listed = /descending: ([^.]*)\./.exec(doc)?.[1].split(', ') ?? [];
    t.same(listed, keys, `${version} ${type}`);
  }
});

t.test('a range of the sort key starts and ends the walk of its index: nothing before it is read', async (t) => {
  const { parseSearch } = await import('../src/fhir/parse.ts');
  const { sortedPageQuery, sortBounds } = await import('../src/fhir/sort.ts');
  const { registry } = await import('../src/registry/index.ts');
  const { query } = await import('../src/store/query.ts');
  const { stmt } = await import('../src/fhir/statement.ts');
  const parse = (q: string) => parseSearch([...new URLSearchParams(q)], {
    version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });
  t.equal(sortBounds(parse(`_lastUpdated=ge${since}&_sort=_lastUpdated`)).length, 1, '_lastUpdated (one value per resource) bounds its own sort');
  t.equal(sortBounds(parse(`_lastUpdated=ge${since}&_sort=family`)).length, 0, 'not another key');
  t.equal(sortBounds(parse('family=mar&_sort=family')).length, 0, 'nor a key of several values per resource');
  const req = parse(`_lastUpdated=ge${since}&_sort=_lastUpdated`);
  const plan = await db.sql.begin(async (tx) => {
    await tx`set local enable_seqscan = off`;
    await tx`set local enable_bitmapscan = off`;
    return query<{ 'QUERY PLAN': string }[]>(tx, stmt`explain ${sortedPageQuery({ systemId: () => undefined, sortPath: 'walk' }, req, 1, undefined, 51)}`);
  });
  const text = plan.map((r) => r['QUERY PLAN']).join('\n');
  t.match(text, /Index (Only )?Scan using date_idx_low[^\n]*\n\s*Index Cond: \(\(param = \d+\) AND \(low >= /, `the index scan starts at the bound:\n${text}`);
  t.notMatch(text, /SubPlan/, 'and probes nothing per row');
});

t.test('a filtered sort reads the same pages on each of its three paths', async (t) => {
  const planner = deps.router.planner;
  const plan = planner.plan.bind(planner);
  t.teardown(() => { planner.plan = plan; });
  for (const q of ['active=true&_sort=-given,family', `_lastUpdated=ge${since}&_sort=given`, 'active=true&_sort=-_lastUpdated']) {
    const chosen = await walk(`/fhir/v2/Practitioner?${q}`);
    t.ok(chosen.statuses.length >= 3, `${q}: several pages (${chosen.statuses.length})`);
    for (const path of ['walk', 'hashed', 'sorted'] as const) {
      planner.plan = async (...args) => ({ ...(await plan(...args)), sortPath: path });
      const forced = await walk(`/fhir/v2/Practitioner?${q}`);
      t.same(forced.ids, chosen.ids, `${q} on the ${path} path: the same resources in the same order`);
    }
    planner.plan = plan;
  }
});
