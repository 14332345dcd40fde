/**
 * The published ANS IG examples, from their copy in fixtures/ (runs in every clone): the 21
 * Practitioner, Organization and PractitionerRole examples of fixtures/ans-ig-examples (demo data
 * too) load and are each found by `_id` and by each of their identifiers; the two Person examples,
 * kept in fixtures/ans-ig-examples/rejected with a `.rejected` suffix so that no load of fixtures/
 * reads them, are rejected with a message saying why when loaded under their published names.
 * Also: fixtures/ holds each resource once, and all of it loads without a reject.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { bundleEntries, expandPaths } from '../src/load/sources.ts';
import { FIXTURES, load, SHARED_EXAMPLES, testApp } from './helpers/app.ts';
import { API_KEY, searchHelpers, type Bundle } from './helpers/search.ts';

interface Identifier { system?: string; value?: string }
interface Resource { resourceType: string; id: string; identifier?: Identifier[] }

const EXAMPLES = path.join(FIXTURES, 'ans-ig-examples');
const REJECTED = path.join(EXAMPLES, 'rejected');
const SUFFIX = '.rejected';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const { get } = searchHelpers(app, { key: API_KEY });

/** The examples the server does not serve, under their published names in a temporary folder. */
function publishedRejects(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ig-rejected-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of readdirSync(REJECTED)) copyFileSync(path.join(REJECTED, f), path.join(dir, f.slice(0, -SUFFIX.length)));
  return dir;
}

t.test('ANS IG examples (fixtures/ans-ig-examples)', async (t) => {
  const files = await expandPaths([EXAMPLES]);
  const searchable: { file: string; r: Resource }[] = [];
  for (const file of files) searchable.push({ file: path.relative(EXAMPLES, file), r: JSON.parse(await readFile(file, 'utf8')) as Resource });
  t.same([...new Set(searchable.map(({ r }) => r.resourceType))].sort(), ['Organization', 'Practitioner', 'PractitionerRole'], 'the loadable examples are of the three served types');
  t.equal(searchable.length, 21, '21 Practitioner/Organization/PractitionerRole examples');
  t.same(readdirSync(REJECTED).filter((f) => f.endsWith(SUFFIX)).length, 2, 'two examples kept aside, not loadable as they are');

  const rejectedDir = publishedRejects();
  const persons = readdirSync(rejectedDir);
  const summary = await load(db, [EXAMPLES, rejectedDir]);
  t.equal(summary.rejected, 2, 'exactly two rejects');
  t.equal(summary.rejects.length, 2);
  for (const file of persons) {
    t.equal((JSON.parse(readFileSync(path.join(rejectedDir, file), 'utf8')) as Resource).resourceType, 'Person', `${file} is a Person`);
    const line = summary.rejects.find((r) => r.includes(file));
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

t.test('the copy is the published examples', { skip: existsSync(SHARED_EXAMPLES) ? false : `no ${SHARED_EXAMPLES} here to compare with` }, async (t) => {
  const published = await expandPaths([SHARED_EXAMPLES]);
  t.equal(published.length, 23, 'shared/ans-ig/examples: 21 served examples and 2 Person');
  for (const file of published) {
    const name = path.basename(file);
    const copy = [path.join(EXAMPLES, name), path.join(REJECTED, `${name}${SUFFIX}`)].find(existsSync);
    t.ok(copy && readFileSync(copy).equals(readFileSync(file)), `${path.relative(SHARED_EXAMPLES, file)}: copied unchanged (${copy && path.relative(FIXTURES, copy)})`);
  }
});

/** `Type/id` of every resource in the loadable files of fixtures/, with the files that hold it. */
async function fixtureResources(): Promise<Map<string, string[]>> {
  const where = new Map<string, string[]>();
  for (const file of await expandPaths([FIXTURES])) {
    for (const entry of bundleEntries(path.relative(FIXTURES, file), JSON.parse(await readFile(file, 'utf8')))) {
      if (entry.kind !== 'resource') continue;
      const r = entry.value as Resource;
      const k = `${r.resourceType}/${r.id}`;
      where.set(k, [...(where.get(k) ?? []), path.relative(FIXTURES, file)]);
    }
  }
  return where;
}

t.test('fixtures/ (the demo data) holds each resource once, and all of it loads without a reject', async (t) => {
  const where = await fixtureResources();
  t.same([...where].filter(([, files]) => files.length > 1), [], 'no resource in two places: the IG examples are not loaded twice and share no id with fixtures/directory or extraction');
  t.ok([...where.keys()].includes('Organization/org-example') && [...where.keys()].includes('Organization/org-hcl'), 'the IG examples and the directory are both in it');
  const all = await load(db, [FIXTURES]);
  t.same(all.rejects, [], 'no rejects');
  t.equal(all.rejected, 0);
  t.equal(all.inserted + all.updated + all.unchanged, where.size, `every resource of fixtures/ written once (${where.size})`);
});
