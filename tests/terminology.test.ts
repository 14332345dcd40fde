import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { load, testApp } from './helpers/app.ts';

/**
 * Codes by their labels: `:text` on every token parameter, with the label a stored coding carries
 * (display, or its concept's text) or, without one, the label the server knows (the shipped
 * terminology, or a label another resource taught it); and `CodeSystem/$lookup`.
 */
const KEY = 'terminology-test-key-0123456789';
const headers = { 'SERVICE-API-KEY': KEY };
const NOS = (key: string) => `https://mos.esante.gouv.fr/NOS/${key}/FHIR/${key.replace(/_/g, '-')}`;
const G15 = NOS('TRE_G15-ProfessionSante');
const R38 = NOS('TRE_R38-SpecialiteOrdinale');
const R21 = NOS('TRE_R21-Fonction');
const R66 = NOS('TRE_R66-CategorieEtablissement');
const LOCAL = 'https://example.org/CodeSystem/local-specialties';
const meta = { lastUpdated: '2025-01-02T03:04:05Z' };

const resources = [
  // A display in the data.
  { resourceType: 'Practitioner', id: 'cardio-displayed', meta, qualification: [{ code: { coding: [{ system: R38, code: 'SM04', display: 'Cardiologie et Maladies vasculaires (SM)' }] } }] },
  // No display: the shipped terminology labels SM04 and 10.
  { resourceType: 'Practitioner', id: 'cardio-bare', meta, qualification: [{ code: { coding: [{ system: R38, code: 'SM04' }] } }, { code: { coding: [{ system: G15, code: '10' }] } }] },
  // A code no shipped system knows: labelled by the CodeableConcept's text here...
  { resourceType: 'Practitioner', id: 'local-texted', meta, qualification: [{ code: { text: 'Médecine du sport', coding: [{ system: LOCAL, code: 'SPORT' }] } }] },
  // ...which labels it for this resource too, stored without a display.
  { resourceType: 'Practitioner', id: 'local-bare', meta, qualification: [{ code: { coding: [{ system: LOCAL, code: 'SPORT' }] } }] },
  { resourceType: 'Practitioner', id: 'dentist', meta, qualification: [{ code: { coding: [{ system: G15, code: '40' }] } }] },
  { resourceType: 'PractitionerRole', id: 'role-pharma', meta, code: [{ coding: [{ system: R21, code: 'FON-27' }] }] },
  { resourceType: 'Organization', id: 'chr', meta, type: [{ coding: [{ system: R66, code: '101' }] }] },
  { resourceType: 'Organization', id: 'local-hospital', meta, type: [{ coding: [{ system: R66, code: '106' }] }] },
  {
    resourceType: 'Organization', id: 'traced', meta: { ...meta, extension: [{ url: 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-data-trace', extension: [{ url: 'systeme-information', valueCode: 'FINESS' }] }] },
  },
];

interface Bundle { entry?: { resource: { id: string }; search: { mode: string } }[]; link: { relation: string; url: string }[] }

const dir = await mkdtemp(path.join(os.tmpdir(), 'terminology-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await writeFile(path.join(dir, 'coded.ndjson'), resources.map((r) => JSON.stringify(r)).join('\n'));
const { app, db } = await testApp(t, { env: { API_KEYS: KEY } });
await load(db, [dir]);

async function ids(url: string): Promise<string[]> {
  const out: string[] = [];
  for (let next: string | undefined = url; next; ) {
    const res = await app.inject({ method: 'GET', url: next, headers });
    if (res.statusCode !== 200) throw new Error(`${next}: ${res.statusCode} ${res.body}`);
    const b = res.json() as Bundle;
    out.push(...(b.entry ?? []).filter((e) => e.search.mode === 'match').map((e) => e.resource.id));
    next = b.link.find((l) => l.relation === 'next')?.url.replace('http://fhir.test', '');
  }
  return out.sort();
}

t.test(':text finds codes by a word of their label, with or without a stored display', async (t) => {
  const cases: [string, string[]][] = [
    ['Practitioner?qualification-code:text=cardio', ['cardio-bare', 'cardio-displayed']],
    ['Practitioner?qualification-code:text=Cardiologie%20vascul', ['cardio-bare', 'cardio-displayed']],
    ['Practitioner?qualification-code:text=vasculaires%20cardiologie', ['cardio-bare', 'cardio-displayed']],
    ['Practitioner?qualification-code:text=diologie', []],
    ['Practitioner?qualification-code:text=medecin', ['cardio-bare', 'local-bare', 'local-texted']],
    ['Practitioner?qualification-code:text=sport', ['local-bare', 'local-texted']],
    ['Practitioner?qualification-code:text=dentiste,sport', ['dentist', 'local-bare', 'local-texted']],
    ['PractitionerRole?role:text=pharmacien', ['role-pharma']],
    ['Organization?type:text=centre%20hospitalier', ['chr', 'local-hospital']],
    ['Organization?type:text=centre%20regional', ['chr']],
    ['Organization?data-information-system:text=fichier', ['traced']],
    ['Organization?data-information-system:text=repertoire', []],
    ['Practitioner?active:text=true', []],
    ['Practitioner?qualification-code:text=cardio&_id=cardio-bare', ['cardio-bare']],
  ];
  for (const [query, expected] of cases) t.same(await ids(`/fhir/v2/${query}`), expected, query);
  t.same(await ids('/fhir/v1/Organization?type:text=hospitalier'), ['chr', 'local-hospital'], 'v1');
  const posted = await app.inject({ method: 'POST', url: '/fhir/v2/Practitioner/_search', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'qualification-code:text=cardio' });
  t.equal((posted.json() as Bundle).entry?.length, 2, 'POST _search');
  const bad = await app.inject({ method: 'GET', url: '/fhir/v2/Practitioner?qualification-code:text=%20-%20', headers });
  t.equal(bad.statusCode, 400, 'a value without a word');
});

t.test('CodeSystem/$lookup: the shipped terminology and the labels learned from the data', async (t) => {
  const lookup = async (query: string, version = 'v2') => app.inject({ method: 'GET', url: `/fhir/${version}/CodeSystem/$lookup?${query}`, headers });
  const params = (body: string) => Object.fromEntries((JSON.parse(body) as { parameter: { name: string; valueString: string }[] }).parameter.map((p) => [p.name, p.valueString]));
  let res = await lookup(`system=${encodeURIComponent(G15)}&code=10`);
  t.equal(res.statusCode, 200);
  t.same(params(res.body), { name: 'TRE_G15-ProfessionSante', display: 'Médecin' }, 'a NOS code');
  res = await lookup(`system=${encodeURIComponent('https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-systeme-information')}&code=FINESS`, 'v1');
  t.same(params(res.body).name, 'AsCsTypeSystemeInformation', 'an IG CodeSystem: its name');
  t.ok(params(res.body).version, 'and its version');
  res = await lookup(`system=${encodeURIComponent(LOCAL)}&code=SPORT`);
  t.same(params(res.body), { name: 'local-specialties', display: 'Médecine du sport' }, 'a label learned from the data');
  res = await lookup(`system=${encodeURIComponent(G15)}&code=999`);
  t.equal(res.statusCode, 404);
  t.match(res.json().issue[0].diagnostics, /Unknown code 999/);
  res = await lookup(`system=${encodeURIComponent('https://example.org/nothing')}&code=1`);
  t.equal(res.statusCode, 404);
  t.match(res.json().issue[0].diagnostics, /Unknown code system https:\/\/example.org\/nothing/);
  res = await lookup('code=10');
  t.equal(res.statusCode, 400);
  t.same(res.json().issue[0].expression, ['system']);
  const post = await app.inject({
    method: 'POST', url: '/fhir/v2/CodeSystem/$lookup', headers: { ...headers, 'content-type': 'application/fhir+json' },
    payload: JSON.stringify({ resourceType: 'Parameters', parameter: [{ name: 'coding', valueCoding: { system: R21, code: 'FON-27' } }] }),
  });
  t.equal(post.statusCode, 200, 'POST with a coding');
  t.match(params(post.body).display, /Pharmacien/);
  t.equal((await app.inject({ method: 'GET', url: `/fhir/v2/CodeSystem/$lookup?system=${encodeURIComponent(G15)}&code=10` })).statusCode, 401, 'needs the key');
});
