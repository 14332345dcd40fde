/**
 * The published ANS IG examples (shared/ans-ig/examples, SHARED_EXAMPLES): every Practitioner,
 * Organization and PractitionerRole loads and is found by `_id` and by each of its identifiers;
 * the two Person files are rejected with a message saying why. Also: everything in fixtures/
 * (the demo data) loads without a reject, on top of them.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { expandPaths } from '../src/load/sources.ts';
import { FIXTURES, load, SHARED_EXAMPLES, testApp } from './helpers/app.ts';
import { API_KEY, searchHelpers, type Bundle } from './helpers/search.ts';

interface Identifier { system?: string; value?: string }
interface Resource { resourceType: string; id: string; identifier?: Identifier[] }

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const { get } = searchHelpers(app, { key: API_KEY });

t.test('shared ANS IG examples', { skip: existsSync(SHARED_EXAMPLES) ? false : `no ${SHARED_EXAMPLES} here` }, async (t) => {
  const files = (await expandPaths([SHARED_EXAMPLES])).filter((f) => f.endsWith('.json'));
  const resources: { file: string; r: Resource }[] = [];
  for (const file of files) resources.push({ file: path.relative(SHARED_EXAMPLES, file), r: JSON.parse(await readFile(file, 'utf8')) as Resource });
  const searchable = resources.filter(({ r }) => ['Practitioner', 'Organization', 'PractitionerRole'].includes(r.resourceType));
  const persons = resources.filter(({ r }) => r.resourceType === 'Person');
  t.equal(persons.length, 2, 'two Person examples');
  t.ok(searchable.length >= 20, `${searchable.length} Practitioner/Organization/PractitionerRole examples`);

  const summary = await load(db, [SHARED_EXAMPLES]);
  t.equal(summary.rejected, 2, 'exactly two rejects');
  t.equal(summary.rejects.length, 2);
  for (const { file } of persons) {
    const line = summary.rejects.find((r) => r.includes(path.basename(file)));
    t.ok(line, `${file} is rejected`);
    t.match(line, /Person/, `${file}: the message names the resource type`);
    t.match(line, /resourceType/i, `${file}: …and says it is the resourceType that is not accepted (${line})`);
  }

  for (const { file, r } of searchable) {
    const byId = await get(`/fhir/v2/${r.resourceType}?_id=${encodeURIComponent(r.id)}`);
    const b = byId.json() as Bundle;
    t.same({ status: byId.statusCode, ids: (b.entry ?? []).map((e) => e.resource.id) }, { status: 200, ids: [r.id] }, `${file}: ${r.resourceType}?_id=${r.id}`);
    for (const ident of r.identifier ?? []) {
      if (!ident.value) continue;
      const esc = (s: string) => s.replace(/[\\,|$]/g, (c) => `\\${c}`);
      const token = ident.system ? `${esc(ident.system)}|${esc(ident.value)}` : esc(ident.value);
      const res = await get(`/fhir/v2/${r.resourceType}?identifier=${encodeURIComponent(token)}&_count=1000`);
      const ids = ((res.json() as Bundle).entry ?? []).map((e) => e.resource.id);
      t.ok(res.statusCode === 200 && ids.includes(r.id), `${file}: ${r.resourceType}?identifier=${token} finds ${r.id}`);
    }
  }
  // the DP twins share their identifiers with the DR ones: an identifier finds both
  const twins = await get(`/fhir/v2/Organization?identifier=${encodeURIComponent('https://finess.esante.gouv.fr|754567860')}`);
  t.same(((twins.json() as Bundle).entry ?? []).map((e) => e.resource.id).sort(), ['158480', '158480DP']);
  // the real-API-derived PractitionerRole references the real-API-derived Practitioner and Organization
  const inc = await get('/fhir/v2/PractitionerRole?identifier=1011848351&_include=*');
  t.same(((inc.json() as Bundle).entry ?? []).map((e) => `${e.search.mode}:${e.resource.resourceType}/${e.resource.id}`).sort(), [
    'include:Organization/org-example', 'include:Practitioner/practitioner-example', 'match:PractitionerRole/practitionerrole-example']);
});

t.test('everything in fixtures/ loads without a reject', async (t) => {
  const all = await load(db, [FIXTURES]);
  t.same(all.rejects, [], 'no rejects');
  t.equal(all.rejected, 0);
  const written = all.inserted + all.updated + all.unchanged;
  t.ok(written >= 101 + 21, `fixtures/directory (101) + fixtures/ans-ig-examples (21) at least (${written})`);
});
