/**
 * Paging as clients page: the first request as a user writes it (no `_count` most of the time),
 * then every `next` link exactly as the server wrote it, to the end. On generated data with several
 * pages at the default page size, for GET, POST _search and POST [type] with a form body, v1 and v2,
 * `_count` absent, given, clamped and 0, with includes, `_total`, `_elements` and `_summary`. The
 * expected matches are read from the generated files, not from the server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { generate } from '../src/generate/index.ts';
import { load, testApp } from './helpers/app.ts';
import { API_KEY, idsOf, refsOf, type Bundle } from './helpers/search.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'paging-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await generate({ scale: 0.0003, outDir: dir, seed: 11 });

interface Resource { resourceType: string; id: string; active?: boolean; practitioner?: { reference?: string } }
const read = (type: string): Resource[] =>
  readFileSync(path.join(dir, `${type}.ndjson`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Resource);
const practitioners = read('Practitioner');
const roles = read('PractitionerRole');
const organizations = read('Organization');
const ids = (rs: Resource[]) => rs.map((r) => r.id).sort();

// MAX_COUNT lowered so that a clamped _count still leaves several pages; every other setting is the default.
const MAX_COUNT = 120;
const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, MAX_COUNT: String(MAX_COUNT), PUBLIC_BASE_URL: 'http://fhir.test' } });
await load(db, [dir]);

t.ok(practitioners.length > 3 * 50 && roles.length > 3 * 50 && organizations.length > 50, 'the data has several pages at the default page size');

interface Walk { pages: Bundle[]; statuses: number[]; selfOk: boolean[] }

/** The first request, then every next link as written, to the end (at most 100 pages). */
async function walk(first: { method: 'GET' | 'POST'; url: string; form?: string }): Promise<Walk> {
  const out: Walk = { pages: [], statuses: [], selfOk: [] };
  const headers: Record<string, string> = { 'SERVICE-API-KEY': API_KEY };
  if (first.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  let res = await app.inject({ method: first.method, url: first.url, headers, payload: first.form });
  let requested: string | undefined;
  for (;;) {
    out.statuses.push(res.statusCode);
    if (res.statusCode !== 200) return out;
    const b = res.json() as Bundle;
    out.pages.push(b);
    const self = b.link.find((l) => l.relation === 'self')?.url;
    // Page 1: its criteria, without a cursor; a later page: exactly the link that was followed.
    out.selfOk.push(requested === undefined ? self !== undefined && !new URL(self).searchParams.has('_cursor') : self === requested);
    const next = b.link.find((l) => l.relation === 'next')?.url;
    if (!next || out.pages.length >= 100) return out;
    requested = next;
    const u = new URL(next);
    res = await app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: { 'SERVICE-API-KEY': API_KEY } });
  }
}

const matchesOf = (w: Walk) => w.pages.flatMap((p) => idsOf(p, 'match'));
const includesOf = (w: Walk) => w.pages.flatMap((p) => refsOf(p, 'include'));

interface Case {
  label: string;
  type: 'Practitioner' | 'PractitionerRole' | 'Organization';
  version?: 'v1' | 'v2';
  query: string;
  expected: string[];
  /** the page size the walk must show (entries of every page but the last). */
  pageSize: number;
  total: 'exact' | 'absent';
}

const active = (rs: Resource[]) => rs.filter((r) => r.active === true);
const cases: Case[] = [
  { label: 'no _count', type: 'Practitioner', query: '', expected: ids(practitioners), pageSize: 50, total: 'exact' },
  { label: 'no _count, a filter', type: 'PractitionerRole', query: 'active=true', expected: ids(active(roles)), pageSize: 50, total: 'exact' },
  { label: '_count given', type: 'Practitioner', query: '_count=40', expected: ids(practitioners), pageSize: 40, total: 'exact' },
  { label: '_count clamped', type: 'PractitionerRole', query: '_count=5000', expected: ids(roles), pageSize: MAX_COUNT, total: 'exact' },
  { label: '_total=none', type: 'Practitioner', query: '_total=none', expected: ids(practitioners), pageSize: 50, total: 'absent' },
  { label: '_total=accurate', type: 'PractitionerRole', query: '_total=accurate', expected: ids(roles), pageSize: 50, total: 'exact' },
  { label: '_elements', type: 'Practitioner', query: '_elements=identifier,name', expected: ids(practitioners), pageSize: 50, total: 'exact' },
  { label: '_summary=true', type: 'PractitionerRole', query: '_summary=true', expected: ids(roles), pageSize: 50, total: 'exact' },
  { label: 'v1, no _count', type: 'Organization', version: 'v1', query: '', expected: ids(organizations), pageSize: 50, total: 'exact' },
  { label: 'v1, _count given', type: 'Organization', version: 'v1', query: '_count=20&active=true', expected: ids(active(organizations)), pageSize: 20, total: 'exact' },
];

const forms = [
  { how: 'GET', request: (base: string, q: string) => ({ method: 'GET' as const, url: q ? `${base}?${q}` : base }) },
  { how: 'POST _search', request: (base: string, q: string) => ({ method: 'POST' as const, url: `${base}/_search`, form: q }) },
  { how: 'POST form', request: (base: string, q: string) => ({ method: 'POST' as const, url: base, form: q }) },
];

for (const c of cases) {
  for (const f of forms) {
    t.test(`${f.how} ${c.version ?? 'v2'} ${c.type}: ${c.label}`, async (t) => {
      const w = await walk(f.request(`/fhir/${c.version ?? 'v2'}/${c.type}`, c.query));
      const got = matchesOf(w);
      const sizes = w.pages.map((p) => idsOf(p, 'match').length);
      t.same(w.statuses.filter((s) => s !== 200), [], 'every page 200');
      t.same([...got].sort(), c.expected, 'every match, across the pages');
      t.equal(new Set(got).size, got.length, 'each match exactly once');
      t.ok(w.pages.length >= 2, `several pages (${w.pages.length})`);
      t.ok(sizes.slice(0, -1).every((n) => n === c.pageSize), `full pages of ${c.pageSize} (${sizes.join(' ')})`);
      t.same(w.pages.map((p) => p.total), w.pages.map(() => (c.total === 'exact' ? c.expected.length : undefined)), 'total on every page');
      t.ok(w.selfOk.every(Boolean), 'self: page 1 without a cursor, then the link followed');
    });
  }
}

t.test('includes and revincludes page with their matches', async (t) => {
  const practitionerOf = new Map(roles.map((r) => [r.id, r.practitioner?.reference?.split('/')[1]]));
  const inc = await walk({ method: 'GET', url: '/fhir/v2/PractitionerRole?_include=PractitionerRole:practitioner' });
  t.same([...matchesOf(inc)].sort(), ids(roles), '_include: every role');
  for (const p of inc.pages) {
    const wanted = new Set(idsOf(p, 'match').map((r) => `Practitioner/${practitionerOf.get(r)}`));
    t.same(refsOf(p, 'include').sort(), [...wanted].sort(), 'each page includes the practitioners of its roles');
  }
  const rev = await walk({ method: 'POST', url: '/fhir/v2/Practitioner/_search', form: '_revinclude=PractitionerRole:practitioner' });
  t.same([...matchesOf(rev)].sort(), ids(practitioners), '_revinclude: every practitioner');
  t.same([...includesOf(rev)].sort(), roles.map((r) => `PractitionerRole/${r.id}`).sort(), 'every role, revincluded once');
  t.ok(rev.pages.length >= 3 && rev.statuses.every((s) => s === 200), 'several pages, all 200');
});

t.test('_count=0 and _summary=count: the total, no entries, no next link', async (t) => {
  for (const q of ['_count=0', '_summary=count', '_count=0&_include=PractitionerRole:organization']) {
    const w = await walk({ method: 'GET', url: `/fhir/v2/PractitionerRole?${q}` });
    t.same(
      { statuses: w.statuses, pages: w.pages.length, total: w.pages[0]?.total, entries: w.pages[0]?.entry?.length ?? 0 },
      { statuses: [200], pages: 1, total: roles.length, entries: 0 },
      q,
    );
  }
});

t.test('a cursor does not depend on how its search was spelled', async (t) => {
  t.ok(active(roles).length > 150, 'enough active roles for full second pages');
  const first = (await app.inject({ method: 'GET', url: '/fhir/v2/PractitionerRole?active=true&_include=PractitionerRole:organization', headers: { 'SERVICE-API-KEY': API_KEY } })).json() as Bundle;
  const next = new URL(first.link.find((l) => l.relation === 'next')!.url);
  const cursor = next.searchParams.get('_cursor')!;
  const want = (await app.inject({ method: 'GET', url: `${next.pathname}${next.search}`, headers: { 'SERVICE-API-KEY': API_KEY } })).json() as Bundle;
  const spellings = [
    // reordered, the page size left out, the include written with %3A
    `_cursor=${encodeURIComponent(cursor)}&_include=PractitionerRole%3Aorganization&active=true`,
    // the page size made explicit with its default, and a different value
    `active=true&_count=50&_include=PractitionerRole:organization&_cursor=${encodeURIComponent(cursor)}`,
    `_count=10&active=true&_include=PractitionerRole:organization&_cursor=${encodeURIComponent(cursor)}`,
    // the include naming its only target type, _format and _pretty added
    `active=true&_include=PractitionerRole:organization:Organization&_format=json&_pretty=false&_cursor=${encodeURIComponent(cursor)}`,
  ];
  for (const q of spellings) {
    const res = await app.inject({ method: 'GET', url: `/fhir/v2/PractitionerRole?${q}`, headers: { 'SERVICE-API-KEY': API_KEY } });
    const b = res.json() as Bundle;
    t.same(
      { status: res.statusCode, first: idsOf(b, 'match')[0], size: idsOf(b, 'match').length },
      { status: 200, first: idsOf(want, 'match')[0], size: Number(new URLSearchParams(q).get('_count') ?? 50) },
      q,
    );
  }
  const other = await app.inject({ method: 'GET', url: `/fhir/v2/PractitionerRole?active=false&_include=PractitionerRole:organization&_cursor=${encodeURIComponent(cursor)}`, headers: { 'SERVICE-API-KEY': API_KEY } });
  t.equal(other.statusCode, 400, 'the cursor of another search is refused');
  const noInclude = await app.inject({ method: 'GET', url: `/fhir/v2/PractitionerRole?active=true&_cursor=${encodeURIComponent(cursor)}`, headers: { 'SERVICE-API-KEY': API_KEY } });
  t.equal(noInclude.statusCode, 400, 'and so is the same criteria without its include');
});
