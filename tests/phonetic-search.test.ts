import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pageQuery, rankPhase } from '../src/fhir/compile.ts';
import { parseSearch } from '../src/fhir/parse.ts';
import { stmt } from '../src/fhir/statement.ts';
import { registry } from '../src/registry/index.ts';
import { Planner } from '../src/store/planner.ts';
import { query, runOn } from '../src/store/query.ts';
import { load, testApp } from './helpers/app.ts';

/**
 * `phonetic` as users search: names heard on the phone or mistyped, through HTTP with default
 * settings (no `_count`) and every `next` link, exact spellings first, then sound-alikes, then typos.
 */
const KEY = 'phonetic-test-key-0123456789';
const headers = { 'SERVICE-API-KEY': KEY };

const practitioner = (id: string, family: string, given: string, active = true) => ({
  resourceType: 'Practitioner', id, active, meta: { lastUpdated: '2025-01-02T03:04:05Z' }, name: [{ family, given: [given] }],
});
const organization = (id: string, name: string) => ({ resourceType: 'Organization', id, active: true, meta: { lastUpdated: '2025-01-02T03:04:05Z' }, name });

const people = [
  ...Array.from({ length: 60 }, (_, i) => practitioner(`lefebvre-${i}`, 'Lefebvre', i % 2 ? 'Anne' : 'Paul')),
  ...Array.from({ length: 40 }, (_, i) => practitioner(`lefevre-${i}`, 'Lefèvre', 'Hélène', i % 4 !== 0)),
  practitioner('typo-lefebvres', 'Lefebvrez', 'Jean'),
  practitioner('dupont', 'Dupont', 'Marie'),
  practitioner('dumont', 'Dumont', 'Marie'),
  practitioner('philippe', 'Durand', 'Philippe'),
  practitioner('rousseau', 'Rousseau', 'Luc'),
  practitioner('chevalier', 'Chevalier', 'Anne'),
  practitioner('le-bihan', 'Le Bihan', 'Yann'),
  practitioner('lebihan', 'Lebihan', 'Erwan'),
  practitioner('da-silva', 'Da Silva', 'Joao'),
  practitioner('dupont-martin', 'Dupont-Martin', 'Claire'),
  ...Array.from({ length: 12 }, (_, i) => practitioner(`martin-${i}`, 'Martin', 'Louis')),
  practitioner('martineau', 'Martineau', 'Louis'),
  practitioner('marin', 'Marin', 'Louis'),
  practitioner('morin', 'Morin', 'Louis'),
  practitioner('fontaine', 'Fontaine', 'Jean'),
  practitioner('lafontaine', 'Lafontaine', 'Jean'),
  practitioner('la-fontaine', 'La Fontaine', 'Jean'),
  practitioner('fontenay', 'Fontenay', 'Jean'),
  ...Array.from({ length: 120 }, (_, i) => practitioner(`bernard-${String(i).padStart(3, '0')}`, 'Bernard', 'Luc')),
  // Two words, each matched exactly, by sound or by a typo ("roux" is too short for typos).
  practitioner('granier-roux', 'Granier-Roux', 'Paul'),
  practitioner('garnier-rou', 'Garnier-Rou', 'Paul'),
  practitioner('garnier-roux', 'Garnier-Roux', 'Paul'),
  practitioner('garner-roux', 'Garner-Roux', 'Paul'),
  practitioner('garnyer-roux', 'Garnyer-Roux', 'Paul'),
  practitioner('granier-rou', 'Granier-Rou', 'Paul'),
  practitioner('garnier-rey', 'Garnier-Rey', 'Paul'),
];
const organizations = [organization('chu-bellevue', 'CHU Hôpital Bellevue'), organization('clinique-pasteur', 'Clinique Pasteur'), organization('pharmacie', 'Pharmacie Centrale')];

interface Bundle {
  total?: number;
  entry?: { resource: { id: string; name?: unknown }; search: { mode: string } }[];
  link: { relation: string; url: string }[];
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'phonetic-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await writeFile(path.join(dir, 'people.ndjson'), [...people, ...organizations].map((r) => JSON.stringify(r)).join('\n'));
const { app, db } = await testApp(t, { env: { API_KEYS: KEY } });
await load(db, [dir]);

/** Every match of a search, in order, through every next link. */
async function all(first: string, init: { method?: 'GET' | 'POST'; body?: string } = {}): Promise<{ ids: string[]; total?: number; pages: number }> {
  const ids: string[] = [];
  let total: number | undefined;
  let pages = 0;
  for (let url: string | undefined = first; url; pages++) {
    const post = pages === 0 && init.method === 'POST';
    const res = await app.inject({ method: post ? 'POST' : 'GET', url, headers: post ? { ...headers, 'content-type': 'application/x-www-form-urlencoded' } : headers, payload: post ? init.body : undefined });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    const b = res.json() as Bundle;
    if (pages === 0) total = b.total;
    ids.push(...(b.entry ?? []).filter((e) => e.search.mode === 'match').map((e) => e.resource.id));
    url = b.link.find((l) => l.relation === 'next')?.url.replace('http://fhir.test', '');
  }
  return { ids, total, pages };
}

t.test('sound-alikes and typos of the names users mistype', async (t) => {
  const cases: [string, string[]][] = [
    ['dupond', ['dupont']],
    ['filipe', ['philippe']],
    ['rousso', ['rousseau']],
    ['chevallier', ['chevalier']],
    ['dupnot', ['dupont']],
    ['le bihan', ['le-bihan', 'lebihan']],
    ['lebihan', ['le-bihan', 'lebihan']],
    ['le-bihan', ['le-bihan', 'lebihan']],
    ['da silva', ['da-silva']],
    ['dupont-martin', ['dupont-martin']],
    ['dupont martin', ['dupont-martin']],
  ];
  for (const [value, expected] of cases) {
    const { ids } = await all(`/fhir/v2/Practitioner?phonetic=${encodeURIComponent(value)}`);
    for (const id of expected) t.ok(ids.includes(id), `phonetic=${value} finds ${id} (${ids.join(', ')})`);
    t.notOk(ids.includes('dumont'), `phonetic=${value}: not Dumont`);
  }
});

t.test('a name heard, typed as it sounds: fontene and lafontene find Fontaine and Lafontaine', async (t) => {
  for (const [value, expected] of [
    ['fontene', ['fontaine', 'la-fontaine']],
    ['fontène', ['fontaine', 'la-fontaine']],
    ['lafontene', ['lafontaine', 'la-fontaine']],
    ['la fontene', ['la-fontaine', 'lafontaine']],
  ] as const) {
    const { ids } = await all(`/fhir/v2/Practitioner?phonetic=${encodeURIComponent(value)}`);
    t.same([...ids].sort(), [...expected].sort(), `phonetic=${value}: ${expected.join(', ')}, not Fontenay`);
  }
});

t.test('exact spellings first, then sound-alikes, then typos, each match once through every next link', async (t) => {
  const { ids, total, pages } = await all('/fhir/v2/Practitioner?phonetic=lefebvre');
  t.equal(new Set(ids).size, ids.length, 'no match twice');
  t.ok(pages >= 3, `several pages of the default size (${pages})`);
  t.equal(total, 101, 'the total counts every match');
  t.same([...ids].sort(), [...people.filter((p) => /^(lefebvre|lefevre)-|typo-lefebvres/.test(p.id)).map((p) => p.id)].sort(), 'every Lefebvre, Lefèvre and Lefebvrez');
  t.ok(ids.slice(0, 60).every((id) => id.startsWith('lefebvre-')), 'the 60 exact spellings come first');
  t.ok(ids.slice(60, 100).every((id) => id.startsWith('lefevre-')), 'then the 40 sound-alikes');
  t.equal(ids[100], 'typo-lefebvres', 'then the typo');
  // A typo of "lefebvre" sounds like Lefebvre and Lefèvre; Lefebvrez is two letters away from it.
  const typo = await all('/fhir/v2/Practitioner?phonetic=lefevbre');
  t.same([...typo.ids].sort(), [...people.filter((p) => /^(lefebvre|lefevre)-/.test(p.id)).map((p) => p.id)].sort(), 'lefevbre: every Lefebvre and Lefèvre');
});

t.test('two words: exact, then each by sound, then a typo in either, each once, whatever the page size', async (t) => {
  for (const count of ['', '&_count=2']) {
    const { ids } = await all(`/fhir/v2/Practitioner?phonetic=garnier%20roux${count}`);
    t.same(ids[0], 'garnier-roux', `${count || 'default'}: the exact spelling first`);
    t.same([...ids.slice(1, 3)].sort(), ['garnier-rou', 'garnyer-roux'], 'then the two sound-alikes');
    t.same([...ids.slice(3)].sort(), ['garner-roux', 'granier-rou', 'granier-roux'], 'then the typos, a sound-alike word beside one included');
  }
});

t.test('a common name stays bounded to its sound-alikes', async (t) => {
  const { ids } = await all('/fhir/v2/Practitioner?phonetic=martin');
  // Marin is one letter away from "martin"; Morin two, Martineau sounds and spells otherwise.
  t.same(ids.filter((id) => !id.startsWith('martin-') && id !== 'dupont-martin'), ['marin'], 'the Martins, and Marin, the one typo, last');
  t.equal(ids.filter((id) => id.startsWith('martin-')).length, 12);
  t.equal(ids.at(-1), 'marin');
});

t.test('a page reads at most a page of rows per lookup, however many resources match', async (t) => {
  // "bernad" is one letter from Bernard and sounds otherwise: the 120 Bernards are typos.
  const walked = await all('/fhir/v2/Practitioner?phonetic=bernad');
  t.same(walked.ids, people.filter((p) => p.id.startsWith('bernard-')).map((p) => p.id), 'every Bernard once, through every next link');
  t.equal(walked.pages, 3);
  const req = parseSearch([['phonetic', 'bernad']], {
    version: 'v2', type: 'Practitioner', registry, strict: false, bases: [], now: Date.now(), defaultCount: 50, maxCount: 1000, maxValuesPerParam: 100, maxParams: 50,
  });
  const hints = await new Planner().plan(runOn(db.sql), req);
  const [{ 'QUERY PLAN': [{ Plan: plan }] }] = await query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(db.sql,
    stmt`explain (analyze, format json) ${pageQuery(hints, rankPhase(req, 2), undefined, 51)}`);
  let read = 0;
  const visit = (n: PlanNode) => {
    if (n['Relation Name'] === 'phonetic_idx' && !/^e(_\d+)?$/.test(n.Alias ?? '')) read += n['Actual Rows'] * n['Actual Loops'];
    n.Plans?.forEach(visit);
  };
  visit(plan);
  const bounded = read > 0 && read <= 51;
  t.ok(bounded, `the typos' page read ${read} index rows, at most the page and one`);
  if (!bounded) t.comment(JSON.stringify(plan, null, 1));
});

interface PlanNode { 'Relation Name'?: string; Alias?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] }

t.test('phonetic combines with other parameters, _sort, POST, and v1 Organization', async (t) => {
  const active = await all('/fhir/v2/Practitioner?phonetic=lefevre&active=false');
  t.same(active.ids.sort(), people.filter((p) => p.id.startsWith('lefevre-') && !p.active).map((p) => p.id).sort(), 'AND active=false');
  const posted = await all('/fhir/v2/Practitioner/_search', { method: 'POST', body: 'phonetic=rousso' });
  t.same(posted.ids, ['rousseau'], 'POST _search');
  const sorted = await all('/fhir/v2/Practitioner?phonetic=lefebvre&_sort=-given');
  const given = (id: string) => people.find((p) => p.id === id)!.name[0].given[0];
  const order = sorted.ids.map(given);
  t.same(order, [...order].sort((a, b) => b.localeCompare(a)), 'with _sort, the sort decides');
  t.same((await all('/fhir/v1/Organization?phonetic=hopital')).ids, ['chu-bellevue'], 'v1 Organization by sound of its name');
  t.same((await all('/fhir/v2/Organization?phonetic=klinik%20pastere')).ids, ['clinique-pasteur'], 'two words, each by sound');
  const bad = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner?phonetic:exact=x', headers });
  t.equal(bad.statusCode, 400, 'no modifier on phonetic');
  const empty = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner?phonetic=--', headers });
  t.equal(empty.statusCode, 400, 'a value without a letter');
});

t.test('a sound held twice by one name is one match: every page full, every match through the next links', async (t) => {
  // "de" and "des" sound alike: two of each name's rows hold the sound of "d". Loaded last, not to
  // change the plans of the tests above.
  const maisons = Array.from({ length: 70 }, (_, i) => organization(`maison-${String(i).padStart(2, '0')}`, `Maison de santé des Lilas ${i}`));
  await writeFile(path.join(dir, 'maisons.ndjson'), maisons.map((r) => JSON.stringify(r)).join('\n'));
  await load(db, [path.join(dir, 'maisons.ndjson')]);
  const { ids, pages } = await all('/fhir/v2/Organization?phonetic=d');
  t.same(ids, maisons.map((o) => o.id), 'the 70 names with "de" and "des", each once');
  t.equal(pages, 2, 'a full page of the default size, then the rest');
});
