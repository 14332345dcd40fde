/**
 * Two readings of FHIR search that depend on the element's type, not the parameter's: an instant
 * (meta.lastUpdated) is a point, so `_lastUpdated` compares it with the query's range as a point
 * (docs/fhir-search §3.4 vectors); a `code` element has the code system its binding implies, so
 * `system|code` with that system means the bare code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { load, testApp } from './helpers/app.ts';
import { API_KEY, searchHelpers } from './helpers/search.ts';

const TRACE = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/StructureDefinition/as-ext-data-trace';
const INFO_SYSTEM = 'https://interop.esante.gouv.fr/ig/fhir/annuaire/CodeSystem/as-cs-type-systeme-information';
const ADDRESS_USE = 'http://hl7.org/fhir/address-use';

const practitioner = (id: string, lastUpdated: string, system?: string) => ({
  resourceType: 'Practitioner',
  id,
  meta: {
    lastUpdated,
    ...(system ? { extension: [{ url: TRACE, extension: [{ url: 'systeme-information', valueCode: system }] }] } : {}),
  },
});
const organization = (id: string, uses: string[], active?: boolean) => ({
  resourceType: 'Organization',
  id,
  meta: { lastUpdated: '2024-01-01T00:00:00Z' },
  ...(active === undefined ? {} : { active }),
  address: uses.map((use) => ({ use, city: 'Lyon' })),
});

const dir = mkdtempSync(path.join(tmpdir(), 'instants-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const resources = [
  practitioner('A', '2020-01-15T10:30:00.123Z', 'RPPS'),
  practitioner('B', '2020-01-16T00:00:00.000Z', 'RPPS'),
  practitioner('C', '2020-01-14T23:59:59.999Z', 'FINESS'),
  practitioner('D', '2020-01-15T23:30:00-05:00', 'MSS'),
  practitioner('E', '2024-08-13T01:50:51Z'),
  practitioner('F', '2024-03-31T01:00:00Z'),
  organization('org-work', ['work'], true),
  organization('org-home-old', ['home', 'old'], false),
  organization('org-no-use', []),
];
writeFileSync(path.join(dir, 'data.ndjson'), resources.map((r) => JSON.stringify(r)).join('\n'));

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const loaded = await load(db, [dir]);
t.same(loaded.rejects, [], 'the resources load');
const { table, expect400 } = searchHelpers(app);

t.test('_lastUpdated reads meta.lastUpdated as a point (docs/fhir-search §3.4)', async (t) => {
  await table(t, [
    ['Practitioner?_lastUpdated=2020-01-15', ['A']],
    ['Practitioner?_lastUpdated=eq2020-01-15', ['A']],
    ['Practitioner?_lastUpdated=ne2020-01-15', ['B', 'C', 'D', 'E', 'F']],
    ['Practitioner?_lastUpdated=gt2020-01-15&_lastUpdated=lt2021', ['B', 'D']],
    ['Practitioner?_lastUpdated=ge2020-01-15&_lastUpdated=lt2021', ['A', 'B', 'D']],
    ['Practitioner?_lastUpdated=lt2020-01-15', ['C']],
    ['Practitioner?_lastUpdated=le2020-01-15', ['A', 'C']],
    ['Practitioner?_lastUpdated=sa2020-01-15&_lastUpdated=lt2021', ['B', 'D']],
    ['Practitioner?_lastUpdated=eb2020-01-15', ['C']],
    ['Practitioner?_lastUpdated=2020-01', ['A', 'B', 'C', 'D']],
    ['Practitioner?_lastUpdated=gt2020&_lastUpdated=lt2021', []],
    ['Practitioner?_lastUpdated=eq2020-01-15T10:30:00Z', ['A']],
    ['Practitioner?_lastUpdated=eq2020-01-15T10:30Z', ['A']],
    ['Practitioner?_lastUpdated=eq2020-01-15T10:30:00.123Z', ['A']],
    ['Practitioner?_lastUpdated=eq2020-01-15T10:30:00.124Z', []],
    ['Practitioner?_lastUpdated=ge2020-01-15T11:30:00%2B01:00&_lastUpdated=lt2021', ['A', 'B', 'D']],
    ['Practitioner?_lastUpdated=lt2020-01-15T10:30', ['C']],
    ['Practitioner?_lastUpdated=ge2020-01-15&_lastUpdated=lt2020-01-16', ['A']],
    ['Practitioner?_lastUpdated=gt2020-01-15T10:30:00.123Z&_lastUpdated=lt2021', ['B', 'D']],
    ['Practitioner?_lastUpdated=le2020-01-14T23:59:59.999Z', ['C']],
  ]);
});

t.test('two _lastUpdated conditions (read as one interval) match what each matches alone, for every pair of prefixes', async (t) => {
  const wrong: string[] = [];
  const ids = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `/fhir/v2/Practitioner?${query}`, headers: { 'SERVICE-API-KEY': API_KEY } });
    if (res.statusCode !== 200) wrong.push(`${query}: ${res.statusCode}`);
    const b = res.json() as { total?: number; entry?: { resource: { id: string } }[] };
    return { ids: (b.entry ?? []).map((e) => e.resource.id).sort(), total: b.total };
  };
  const values = ['2020-01-15', '2020-01-15T10:30:00.123Z', '2020'];
  const conditions = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb'].flatMap((p) => values.map((v) => `_lastUpdated=${p}${encodeURIComponent(v)}`));
  const alone = new Map<string, string[]>();
  for (const c of conditions) alone.set(c, (await ids(c)).ids);
  for (const a of conditions) {
    for (const b of conditions) {
      const expected = alone.get(a)!.filter((id) => alone.get(b)!.includes(id));
      const got = await ids(`${a}&${b}`);
      if (JSON.stringify(got) !== JSON.stringify({ ids: expected, total: expected.length })) wrong.push(`${a}&${b}: ${JSON.stringify(got)}, expected ${expected}`);
    }
  }
  t.same(wrong, [], `${conditions.length ** 2} pairs`);
});

t.test('an instant stored to the second is found by the same instant written with milliseconds or no zone', async (t) => {
  await table(t, [
    ['Practitioner?_lastUpdated=eq2024-08-13T01:50:51.000Z', ['E']],
    ['Practitioner?_lastUpdated=2024-08-13T01:50:51.000Z', ['E']],
    ['Practitioner?_lastUpdated=eq2024-08-13T01:50:51Z', ['E']],
    ['Practitioner?_lastUpdated=eq2024-08-13T03:50:51.000%2B02:00', ['E']],
    ['Practitioner?_lastUpdated=eq2024-08-13T01:50:51.001Z', []],
    ['Practitioner?_lastUpdated=eq2024-03-31T01:00:00.000', ['F']],
    ['Practitioner?_lastUpdated=eq2024-03-31T01:00:00', ['F']],
    ['Practitioner?_lastUpdated=gt2024-08-13T01:50:50.999Z', ['E']],
    ['Practitioner?_lastUpdated=lt2024-08-13T01:50:51.000Z&_lastUpdated=gt2024-01-01', ['F']],
    ['Practitioner?_lastUpdated=le2024-08-13T01:50:51.000Z&_lastUpdated=gt2024-01-01', ['E', 'F']],
    ['Practitioner?_lastUpdated=ne2024-08-13T01:50:51.000Z&_lastUpdated=gt2024-01-01', ['F']],
  ]);
});

t.test('data-information-system: its code system is implied by the element', async (t) => {
  await table(t, [
    ['Practitioner?data-information-system=RPPS', ['A', 'B']],
    [`Practitioner?data-information-system=${INFO_SYSTEM}|RPPS`, ['A', 'B']],
    [`Practitioner?data-information-system=${INFO_SYSTEM}%7CFINESS,MSS`, ['C', 'D']],
    [`Practitioner?data-information-system=${INFO_SYSTEM}|`, ['A', 'B', 'C', 'D']],
    ['Practitioner?data-information-system=http://example.org/other|RPPS', []],
    ['Practitioner?data-information-system=|RPPS', []],
    ['Practitioner?data-information-system=|RPPS,FINESS', ['C']],
    [`Practitioner?data-information-system:not=${INFO_SYSTEM}|RPPS`, ['C', 'D', 'E', 'F']],
    [`Practitioner?data-information-system:not=${INFO_SYSTEM}|`, ['E', 'F']],
    ['Practitioner?data-information-system:not=|RPPS', ['A', 'B', 'C', 'D', 'E', 'F']],
  ]);
  await table(t, [[`Organization?as-sp-data-information-system=${INFO_SYSTEM}|RPPS`, []]], '/fhir/v1/');
});

t.test('address-use (v1): its code system is implied by the element', async (t) => {
  await table(
    t,
    [
      ['Organization?address-use=work', ['org-work']],
      [`Organization?address-use=${ADDRESS_USE}|old`, ['org-home-old']],
      [`Organization?address-use=${ADDRESS_USE}|`, ['org-work', 'org-home-old']],
      ['Organization?address-use=|work', []],
      ['Organization?address-use=http://terminology.hl7.org/CodeSystem/v3-AddressUse|work', []],
      [`Organization?address-use:not=${ADDRESS_USE}|home`, ['org-work', 'org-no-use']],
    ],
    '/fhir/v1/',
  );
  await expect400(t, '/fhir/v1/Organization?address-use=a|b|c', 'address-use');
});

t.test('an id and a boolean have no system: `|value` is the value, a system is no id and no boolean', async (t) => {
  await table(t, [
    ['Practitioner?_id=|A', ['A']],
    ['Practitioner?_id=|A,B', ['A', 'B']],
    ['Practitioner?_id=http://example.org/ids|A', []],
    ['Practitioner?_id=http://example.org/ids|', []],
    ['Practitioner?_id=http://example.org/ids|A,C', ['C']],
    ['Practitioner?_id:not=|A&_lastUpdated=2020-01', ['B', 'C', 'D']],
    ['Practitioner?_id:not=http://example.org/ids|A&_lastUpdated=2020-01', ['A', 'B', 'C', 'D']],
    ['Organization?active=|true', ['org-work']],
    ['Organization?active=true,|false', ['org-work', 'org-home-old']],
    ['Organization?active:not=|true', ['org-home-old', 'org-no-use']],
  ]);
  await expect400(t, '/fhir/v2/Organization?active=http://example.org/bool|true', 'active');
  await expect400(t, '/fhir/v2/Organization?active=|', 'active');
  await expect400(t, '/fhir/v2/Practitioner?_id=a|b|c', '_id');
});
