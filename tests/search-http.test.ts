/**
 * The HTTP side of search on the hand-checked dataset of fixtures/directory: paging to exhaustion,
 * _count / _total / _summary / _elements, POST _search (form body, query + body), content
 * negotiation and the error statuses (400 404 405 406 415) with their OperationOutcome.
 */
import path from 'node:path';
import t from 'tap';
import { FIXTURES, load, testApp } from './helpers/app.ts';
import { PRACTITIONERS } from './helpers/directory-ids.ts';
import { API_KEY, idsOf, searchHelpers, type A, type Bundle, type Entry } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
await load(db, [path.join(FIXTURES, 'directory')]);
const { request, get, matchIds } = searchHelpers(app, { key: API_KEY });
const form = (url: string, body: string) => request('POST', url, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
const link = (b: Bundle, rel: string) => b.link.find((l) => l.relation === rel)?.url;
/** the path + query of an absolute link of this server, to replay it with inject. */
const local = (url: string) => {
  const x = new URL(url);
  if (x.origin !== 'http://fhir.test') throw new Error(`link not on PUBLIC_BASE_URL: ${url}`);
  return x.pathname + x.search;
};

async function expectError(tt: A, res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, what: string, mention?: string) {
  let body: { resourceType?: string; issue?: { severity?: string; code?: string; diagnostics?: string }[] } = {};
  try {
    body = JSON.parse(res.body);
  } catch {
    /* not JSON */
  }
  tt.same(
    {
      status: res.statusCode,
      type: body.resourceType,
      fhirJson: /^application\/fhir\+json/.test(String(res.headers['content-type'])),
      issue: Boolean(body.issue?.[0]?.severity && body.issue?.[0]?.code),
      mentions: mention === undefined || (body.issue?.[0]?.diagnostics ?? '').includes(mention),
    },
    { status, type: 'OperationOutcome', fhirJson: true, issue: true, mentions: true },
    `${what} → ${status} OperationOutcome${mention ? ` naming ${mention}` : ''} (${body.issue?.[0]?.diagnostics})`,
  );
}

const ALL_P = [...PRACTITIONERS].sort();
const MARTIN = ['pra-helene-martin', 'pra-paul-martin', 'pra-sophie-martinez', 'pra-louis-martineau', 'pra-bernard-martin'].sort();

/** Follows next links from `first` to exhaustion; returns every page. */
async function pages(tt: A, first: string, init?: () => Promise<{ statusCode: number; json(): unknown; body: string }>) {
  const out: Bundle[] = [];
  let res = init ? await init() : await get(first);
  for (let i = 0; i < 100; i++) {
    if (res.statusCode !== 200) {
      tt.fail(`page ${i + 1} of ${first} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      break;
    }
    const b = res.json() as Bundle;
    out.push(b);
    const next = link(b, 'next');
    if (!next) break;
    res = await get(local(next));
  }
  return out;
}

t.test('paging Practitioner with _count=7: every match exactly once, total on every page', async (t) => {
  const ps = await pages(t, '/fhir/v2/Practitioner?_count=7');
  t.same(ps.map((p) => matchIds(p).length), [7, 7, 7, 7, 2], 'page sizes');
  const seen = ps.flatMap(matchIds);
  t.equal(seen.length, 30, 'no duplicate across pages');
  t.same([...seen].sort(), ALL_P, 'every practitioner once');
  t.same(ps.map((p) => p.total), [30, 30, 30, 30, 30], 'total on every page');
  t.notOk(link(ps[4], 'next'), 'no next on the last page');
  for (const p of ps.slice(0, 4)) {
    const next = new URL(link(p, 'next')!);
    t.equal(next.origin + next.pathname, 'http://fhir.test/fhir/v2/Practitioner');
    t.equal(next.searchParams.get('_count'), '7', 'the next link keeps _count');
    t.ok(next.searchParams.get('_cursor'), 'and carries a cursor');
  }
});

t.test('paging with a filter, with includes, on v1, with _count=1', async (t) => {
  const martin = await pages(t, '/fhir/v2/Practitioner?family=martin&_count=2');
  t.same(martin.map((p) => matchIds(p).length), [2, 2, 1]);
  t.same(martin.flatMap(matchIds).sort(), MARTIN);
  for (const p of martin.slice(1)) t.equal(new URL(link(p, 'self')!).searchParams.get('family'), 'martin', 'self of later pages keeps the filter');

  // FON-33 roles and their organizations: each page includes the organizations of its own matches
  const ORG_OF: Record<string, string> = {
    'role-helene-lefevre-bellevue': 'org-hopital-bellevue', 'role-helene-dupont-cds-oeuvre': 'org-cds-oeuvre',
    'role-jean-lefevre-cds-louvre': 'org-cds-louvre', 'role-anne-legall-timone': 'org-hopital-timone',
    'role-francois-saint-martin-diaconesses': 'org-hopital-diaconesses', 'role-eve-durand-timone': 'org-hopital-timone',
    'role-evelyne-petit-cds-louvre': 'org-cds-louvre', 'role-severine-roux-bellevue': 'org-hopital-bellevue',
    'role-closed-24-hcl': 'org-hcl',
  };
  const roles = await pages(t, '/fhir/v2/PractitionerRole?role=FON-33&_include=PractitionerRole:organization&_count=4');
  t.same(roles.map((p) => matchIds(p).length), [4, 4, 1]);
  t.same(roles.flatMap(matchIds).sort(), Object.keys(ORG_OF).sort(), 'the 9 FON-33 roles, once each');
  for (const [i, p] of roles.entries()) {
    const inc = idsOf(p, 'include').sort();
    t.same(inc, [...new Set(matchIds(p).map((id) => ORG_OF[id]))].sort(), `page ${i + 1}: includes of its own matches, once`);
    t.equal(new URL(link(p, 'next') ?? 'http://x/?_include=PractitionerRole:organization').searchParams.get('_include'), 'PractitionerRole:organization');
  }

  const v1 = await pages(t, '/fhir/v1/Organization?address-postalcode=75&_count=3');
  t.same(v1.map((p) => matchIds(p).length), [3, 3, 2]);
  t.same(v1.flatMap(matchIds).sort(), ['org-pharmacie-faubourg-saint-martin', 'org-oeuvre-croix-saint-simon', 'org-hopital-diaconesses', 'org-cds-oeuvre', 'org-cds-louvre', 'org-cabinet-paul-martin', 'org-labo-bio-etoile', 'org-pharmacie-centrale'].sort());
  for (const p of v1.slice(0, 2)) t.match(link(p, 'next'), /^http:\/\/fhir\.test\/fhir\/v1\/Organization\?/);

  const ones = await pages(t, '/fhir/v2/Organization?partof=org-chu-saint-etienne,org-hcl,org-ap-hm&_count=1');
  t.same(ones.map((p) => matchIds(p).length), [1, 1, 1, 1, 1]);
  t.same(ones.flatMap(matchIds).sort(), ['org-hopital-nord-saint-etienne', 'org-hopital-bellevue', 'org-hopital-edouard-herriot', 'org-hopital-croix-rousse', 'org-hopital-timone'].sort());

  // a POST search pages with GET links that repeat the body parameters
  const posted = await pages(t, 'POST family=martin', () => form('/fhir/v2/Practitioner/_search', 'family=martin&_count=2'));
  t.same(posted.flatMap(matchIds).sort(), MARTIN, 'POST then GET next links');
  t.equal(new URL(link(posted[0], 'next')!).searchParams.get('family'), 'martin');
});

t.test('the self link replays the search it describes', async (t) => {
  for (const url of [
    '/fhir/v2/Organization?name:exact=LEFÈVRE\\, GALLET ET ASSOCIÉS',
    '/fhir/v2/Practitioner?_lastUpdated=ge2024-03-15T10:30:00%2B01:00&_lastUpdated=lt2024-03-16',
    '/fhir/v2/Practitioner?_lastUpdated=2024-03-15T10:30:00+01:00',
    '/fhir/v2/Practitioner?family=le+gall&given=yann,marie',
    '/fhir/v2/PractitionerRole?organization.partof.identifier=https://finess.esante.gouv.fr|420784878&_include=*',
    '/fhir/v2/Organization?_has:PractitionerRole:organization:role=FON-03&_revinclude=PractitionerRole:organization',
    '/fhir/v2/Practitioner?identifier=urn:x\\|y|v',
    '/fhir/v1/Organization?_since=2025-01-01&identifier-type=http://interopsante.org/CodeSystem/v2-0203|FINEG',
  ]) {
    const first = (await get(url)).json() as Bundle;
    const self = link(first, 'self')!;
    const again = (await get(local(self))).json() as Bundle;
    t.same({ ids: matchIds(again), self: link(again, 'self') }, { ids: matchIds(first), self }, `self of ${url}`);
  }
  const rev = (await get('/fhir/v2/Organization?_id=org-hcl,org-hopital-edouard-herriot&_revinclude=Organization:partof')).json() as Bundle;
  t.same((rev.entry ?? []).map((e) => `${e.search.mode}:${e.resource.id}`).sort(),
    ['include:org-hopital-croix-rousse', 'match:org-hcl', 'match:org-hopital-edouard-herriot'], 'a match that is also a revinclude target appears once, as match');
  const strict = await get('/fhir/v2/Practitioner?_sort=identifier', { Prefer: 'handling=strict' });
  await expectError(t, strict, 400, 'a key that cannot sort, under handling=strict', '_sort');
  const sorted = (await get('/fhir/v2/Practitioner?family=martin&_sort=-given')).json() as Bundle;
  t.equal(new URL(link(sorted, 'self')!).searchParams.get('_sort'), '-given', 'the self link shows the sort');
});

t.test('the cursor is bound to its search and signed', async (t) => {
  const first = (await get('/fhir/v2/Practitioner?family=martin&_count=2')).json() as Bundle;
  const next = new URL(link(first, 'next')!);
  const cursor = next.searchParams.get('_cursor')!;
  await expectError(t, await get(`/fhir/v2/Practitioner?family=martin&_count=2&_cursor=${cursor.slice(0, -2)}xx`), 400, 'altered cursor', '_cursor');
  await expectError(t, await get('/fhir/v2/Practitioner?family=martin&_count=2&_cursor=garbage'), 400, 'garbage cursor', '_cursor');
  await expectError(t, await get(`/fhir/v2/Practitioner?family=lefevre&_count=2&_cursor=${encodeURIComponent(cursor)}`), 400, 'cursor of another search', '_cursor');
  await expectError(t, await get(`/fhir/v2/Organization?family=martin&_count=2&_cursor=${encodeURIComponent(cursor)}`), 400, 'cursor on another type', '_cursor');
  const ok = await get(`/fhir/v2/Practitioner?family=martin&_count=2&_cursor=${encodeURIComponent(cursor)}`);
  t.equal(ok.statusCode, 200, 'the untouched link works');
});

t.test('_count, _summary=count, _total', async (t) => {
  for (const q of ['_count=0', '_summary=count']) {
    const b = (await get(`/fhir/v2/Practitioner?${q}`)).json() as Bundle;
    t.same({ total: b.total, entries: b.entry?.length ?? 0, next: link(b, 'next') }, { total: 30, entries: 0, next: undefined }, q);
  }
  const fm = (await get('/fhir/v2/Practitioner?family=martin&_summary=count')).json() as Bundle;
  t.same({ total: fm.total, entries: fm.entry?.length ?? 0 }, { total: 5, entries: 0 }, 'family=martin&_summary=count');
  const c0 = (await get('/fhir/v2/PractitionerRole?role=FON-01&_count=0&_include=*')).json() as Bundle;
  t.same({ total: c0.total, entries: c0.entry?.length ?? 0 }, { total: 4, entries: 0 }, '_count=0 with an include');

  const big = (await get('/fhir/v2/Practitioner?_count=5000')).json() as Bundle;
  t.equal(matchIds(big).length, 30);
  t.equal(new URL(link(big, 'self')!).searchParams.get('_count'), '1000', '_count clamped at 1000 in self');
  t.ok((big.entry ?? []).some((e) => e.search.mode === 'outcome' && e.resource.resourceType === 'OperationOutcome'), 'a warning outcome entry says so');

  const acc = (await get('/fhir/v2/Practitioner?_total=accurate&_count=5')).json() as Bundle;
  t.same({ total: acc.total, n: matchIds(acc).length }, { total: 30, n: 5 }, '_total=accurate');
  const none = (await get('/fhir/v2/Practitioner?_total=none&_count=5')).json() as Bundle;
  t.same({ total: none.total, n: matchIds(none).length }, { total: undefined, n: 5 }, '_total=none');
  const est = (await get('/fhir/v2/Practitioner?_total=estimate&_count=5')).json() as Bundle;
  t.ok(est.total === undefined || (Number.isInteger(est.total) && est.total >= 0), `_total=estimate gives a number or nothing (${est.total})`);
  t.equal(matchIds(est).length, 5);
  const small = (await get('/fhir/v2/Practitioner?_total=estimate&family=martin')).json() as Bundle;
  t.equal(small.total, 5, 'a single page is counted exactly, whatever _total says');

  await expectError(t, await get('/fhir/v2/Practitioner?_count=abc'), 400, '_count=abc', '_count');
  await expectError(t, await get('/fhir/v2/Practitioner?_count=-1'), 400, '_count=-1', '_count');
  await expectError(t, await get('/fhir/v2/Practitioner?_count=1.5'), 400, '_count=1.5', '_count');
  await expectError(t, await get('/fhir/v2/Practitioner?_count=1&_count=2'), 400, '_count twice', '_count');
  await expectError(t, await get('/fhir/v2/Practitioner?_total=maybe'), 400, '_total=maybe', '_total');
  await expectError(t, await get('/fhir/v2/Practitioner?_summary=maybe'), 400, '_summary=maybe', '_summary');
  await expectError(t, await get('/fhir/v2/Practitioner?_summary=text&_revinclude=PractitionerRole:practitioner'), 400, '_summary=text with _revinclude');
});

t.test('_elements and _summary subset matches (not includes) and tag them SUBSETTED', async (t) => {
  const isSubsetted = (e: Entry) => (e.resource.meta?.tag ?? []).some((x) => x.code === 'SUBSETTED' && x.system === 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue');
  const el = (await get('/fhir/v2/PractitionerRole?_id=role-paul-martin-cabinet&_elements=identifier,active&_include=PractitionerRole:practitioner')).json() as Bundle;
  const m = el.entry!.find((e) => e.search.mode === 'match')!;
  t.same(Object.keys(m.resource).sort(), ['active', 'id', 'identifier', 'meta', 'resourceType'], '_elements keeps only the named elements (+ id, meta)');
  t.ok(isSubsetted(m), 'tagged SUBSETTED');
  const inc = el.entry!.find((e) => e.search.mode === 'include')!;
  t.equal(inc.resource.id, 'pra-paul-martin');
  t.ok('qualification' in inc.resource && 'name' in inc.resource, 'includes are not subsetted');
  t.notOk(isSubsetted(inc));

  const sum = (await get('/fhir/v2/Practitioner?_id=pra-helene-lefevre&_summary=true')).json() as Bundle;
  const r = sum.entry![0].resource;
  t.ok('name' in r && 'identifier' in r && 'telecom' in r && 'active' in r, '_summary=true keeps the summary elements');
  t.notOk('qualification' in r || 'extension' in r, '…and drops qualification and extensions');
  t.ok(isSubsetted(sum.entry![0]));
  const text = (await get('/fhir/v2/Practitioner?_id=pra-helene-lefevre&_summary=text')).json() as Bundle;
  t.same(Object.keys(text.entry![0].resource).sort(), ['id', 'meta', 'resourceType']);
  const data = (await get('/fhir/v2/Practitioner?_id=pra-helene-lefevre&_summary=data')).json() as Bundle;
  t.ok('qualification' in data.entry![0].resource, '_summary=data keeps everything but text');
  const org = (await get('/fhir/v2/Organization?_id=org-hcl&_summary=true')).json() as Bundle;
  t.ok('name' in org.entry![0].resource && 'type' in org.entry![0].resource, 'Organization summary keeps name and type');
  t.notOk('address' in org.entry![0].resource || 'alias' in org.entry![0].resource, '…not address nor alias');
  await expectError(t, await get('/fhir/v2/Practitioner?_elements=name.family'), 400, '_elements=name.family', '_elements');
});

t.test('POST _search: form body, query + body combined, POST [type]', async (t) => {
  const viaGet = matchIds((await get('/fhir/v2/Practitioner?family=martin')).json() as Bundle);
  t.same(viaGet, MARTIN);
  const res = await form('/fhir/v2/Practitioner/_search', 'family=martin');
  t.equal(res.statusCode, 200);
  const b = res.json() as Bundle;
  t.same(matchIds(b), MARTIN, 'POST _search = GET');
  t.same([...new URL(link(b, 'self')!).searchParams], [['family', 'martin']], 'self is a GET URL with the body parameters');
  t.same(matchIds((await form('/fhir/v2/Practitioner/_search?given=eve', 'given=evelyne')).json() as Bundle), ['pra-evelyne-petit'], 'query given=eve AND body given=evelyne');
  t.same(matchIds((await form('/fhir/v2/Practitioner/_search?family=martin', 'active=false')).json() as Bundle), ['pra-bernard-martin'], 'query + body');
  t.same(matchIds((await form('/fhir/v2/Practitioner/_search', 'name%3Afamily=martin&name%3Agiven=paul')).json() as Bundle), ['pra-paul-martin'], 'encoded names in the body');
  t.same(matchIds((await form('/fhir/v2/Practitioner/_search', 'family=le+gall')).json() as Bundle), ['pra-marie-le-gall', 'pra-yann-le-gall'], '+ is a space in a form body');
  t.same(matchIds((await form('/fhir/v2/Practitioner/_search', '_lastUpdated=ge2025-02-01T09%3A00%3A00%2B01%3A00')).json() as Bundle),
    ['pra-closed-10100000024', 'pra-closed-10100000025', 'pra-emma-nguyen', 'pra-olivier-rousseau'], 'encoded date in a form body');
  t.same(matchIds((await form('/fhir/v2/PractitionerRole/_search', 'identifier=1000000006%2C1000000036')).json() as Bundle), ['role-emma-nguyen-lefevre', 'role-paul-martin-cabinet']);
  t.same(matchIds((await form('/fhir/v2/Organization', 'name=hcl')).json() as Bundle), ['org-hcl'], 'POST [type] with a form body is a search');
  t.same(matchIds((await form('/fhir/v1/Organization/_search', 'as-sp-data-information-system=CG')).json() as Bundle), ['org-labo-bio-etoile'], 'v1 POST _search');
  const empty = await request('POST', '/fhir/v2/PractitionerRole/_search');
  t.equal(empty.statusCode, 200, 'POST without a body');
  t.equal((empty.json() as Bundle).total, 40);
  await expectError(t, await form('/fhir/v2/Practitioner/_search', 'name:foo=x'), 400, 'POST with a bad modifier', 'name:foo');
});

t.test('405, 415, 406', async (t) => {
  await expectError(t, await request('POST', '/fhir/v2/Practitioner/_search', { headers: { 'content-type': 'application/json' }, payload: '{"family":"martin"}' }), 415, 'POST _search with a JSON body');
  await expectError(t, await request('POST', '/fhir/v2/Practitioner/_search', { headers: { 'content-type': 'text/plain' }, payload: 'family=martin' }), 415, 'POST _search with a text/plain body');
  await expectError(t, await request('POST', '/fhir/v2/Practitioner', { headers: { 'content-type': 'application/fhir+json' }, payload: '{"resourceType":"Practitioner"}' }), 405, 'POST [type] with a resource (create)');
  await expectError(t, await request('PUT', '/fhir/v2/Practitioner/pra-helene-lefevre', { headers: { 'content-type': 'application/fhir+json' }, payload: '{}' }), 405, 'PUT');
  await expectError(t, await request('DELETE', '/fhir/v2/Practitioner/pra-helene-lefevre'), 405, 'DELETE');
  await expectError(t, await request('PATCH', '/fhir/v2/Organization/org-hcl', { headers: { 'content-type': 'application/json' }, payload: '[]' }), 405, 'PATCH');
  await expectError(t, await request('PUT', '/fhir/v2/Practitioner/_search', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'family=x' }), 405, 'PUT _search');
  await expectError(t, await get('/fhir/v2/Practitioner/_search'), 405, 'GET _search');
  await expectError(t, await request('POST', '/fhir/v2/metadata'), 405, 'POST metadata');
  await expectError(t, await request('DELETE', '/fhir/v2/Practitioner'), 405, 'DELETE [type]');

  await expectError(t, await get('/fhir/v2/Practitioner', { accept: 'application/fhir+xml' }), 406, 'Accept: application/fhir+xml');
  await expectError(t, await get('/fhir/v2/Practitioner?_format=xml'), 406, '_format=xml');
  await expectError(t, await get('/fhir/v2/Practitioner?_format=application/fhir%2Bxml'), 406, '_format=application/fhir+xml');
  await expectError(t, await get('/fhir/v2/metadata', { accept: 'application/fhir+xml' }), 406, 'metadata with Accept: application/fhir+xml');
  await expectError(t, await get('/fhir/v2/metadata?_format=xml'), 406, 'metadata?_format=xml');
  await expectError(t, await get('/fhir/v2/Practitioner/pra-helene-lefevre?_format=xml'), 406, 'read ?_format=xml');
  for (const [accept, q] of [['application/json', ''], ['application/fhir+json', ''], ['application/fhir+json; fhirVersion=4.0', ''], ['*/*', ''], ['text/html', '_format=json'], ['', '_format=application/fhir+json'], ['', '_format=application/fhir%2Bjson']] as const) {
    const res = await get(`/fhir/v2/Practitioner?_count=1${q ? `&${q}` : ''}`, accept ? { accept } : {});
    t.same({ status: res.statusCode, type: String(res.headers['content-type']).split(';')[0] }, { status: 200, type: 'application/fhir+json' }, `Accept: ${accept || '(none)'} ${q} → 200 application/fhir+json`);
  }
});

t.test('413 and 414: a body or a URL too long', async (t) => {
  await expectError(t, await form('/fhir/v2/Practitioner/_search', `family=${'a'.repeat(70000)}`), 413, 'a 70 kB form body');
  await expectError(t, await get(`/fhir/v2/Practitioner?family=${'a'.repeat(9000)}`), 414, 'a 9 kB URL');
});

t.test('404: unknown type, version, endpoint or id', async (t) => {
  await expectError(t, await get('/fhir/v2/Patient?name=x'), 404, 'unknown type Patient');
  await expectError(t, await get('/fhir/v2/Device'), 404, 'Device has no endpoint (include only)');
  await expectError(t, await get('/fhir/v2/HealthcareService'), 404, 'HealthcareService has no endpoint (include only)');
  await expectError(t, await get('/fhir/v1/Device/dev-scanner-nord'), 404, 'Device read in v1 (v2 reads it: tests/full-urls.test.ts)');
  await expectError(t, await get('/fhir/v1/Practitioner'), 404, 'Practitioner in v1');
  await expectError(t, await get('/fhir/v3/Organization'), 404, 'unknown version v3');
  await expectError(t, await get('/fhir/v2/Practitioner/nope'), 404, 'read of an unknown id', 'nope');
  await expectError(t, await get('/fhir/v2/Practitioner/org-hcl'), 404, 'read of an id of another type');
  await expectError(t, await form('/fhir/v2/Patient/_search', 'name=x'), 404, 'POST _search on an unknown type');
  const miss = await get('/fhir/v2/PractitionerRole?practitioner=does-not-exist');
  t.same({ status: miss.statusCode, total: (miss.json() as Bundle).total }, { status: 200, total: 0 }, 'a logical miss is an empty 200 Bundle');
});

t.test('read', async (t) => {
  for (const [type, id] of [['Practitioner', 'pra-closed-10100000024'], ['Organization', 'org-maternite-des-lilas'], ['PractitionerRole', 'role-closed-1000000030']]) {
    const res = await get(`/fhir/v2/${type}/${id}`);
    t.same({ status: res.statusCode, type: res.json().resourceType, id: res.json().id, active: res.json().active }, { status: 200, type, id, active: false }, `read ${type}/${id} (tombstone)`);
  }
  const v1 = await get('/fhir/v1/Organization/org-hcl');
  t.same({ status: v1.statusCode, id: v1.json().id }, { status: 200, id: 'org-hcl' });
});
