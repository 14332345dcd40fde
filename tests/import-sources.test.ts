/**
 * The three national sources in one `npm run import` (RPPS, the FINESS feed, the MSSanté
 * extraction), searched as clients search: default page size, every `next` link followed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { testApp } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { canonical, importCli, searchAll, storedResources, withoutVersion } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';
import { API_KEY } from './helpers/search.ts';
import { KINDS } from '../src/vocabulary/formats/rpps.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const root = tmpDir(t, 'import-sources');
const day0 = path.join(root, 'day-0');
const day1 = path.join(root, 'day-1');
// Day 1's MSSanté extraction has the other header form (the address columns suffixed ` structure BAL`).
await generateOpenData({ scale: 0.001, seed: 5, day: 0, outDir: day0, sources: ['rpps', 'finess', 'mss'], mssHeaderVariant: 'plain' });
await generateOpenData({ scale: 0.001, seed: 5, day: 1, changeRate: 0.05, outDir: day1, sources: ['rpps', 'finess', 'mss'], mssHeaderVariant: 'suffixed' });
const file = (dir: string, prefix: string) => path.join(dir, fs.readdirSync(dir).find((n) => n.startsWith(prefix))!);
const feed = JSON.parse(gunzipSync(fs.readFileSync(file(day0, 'finess-structures'))).toString('utf8'));

/** The stored resources of a database without their versions: what a client reads. */
const contents = async (d: typeof db) => new Map([...(await storedResources(d))].map(([k, v]) => [k, canonical(withoutVersion(v.content))]));
let allAtOnce: Map<string, unknown> | undefined;

const ids = (entries: { resource: { id: string } }[]) => entries.map((e) => e.resource.id).sort();

t.test('a first import of the three sources: one Organization per structure, legal entities, mailboxes', async (t) => {
  const run = await importCli(db, [day0]);
  t.equal(run.code, 2, 'exit 2: the extract has bad lines, reported', { stderr: run.stderr });
  t.match(run.stderr + run.stdout, /\.txt:\d+: /, 'bad lines reported file:line: reason');
  t.match(run.stdout, /FINESS: \d+ establishments/);

  const pmej = feed.pmej[0];
  const ege = pmej.ege[0];
  const finess = ege.informationsGeneralesEGE.numFinessEge.trim();
  const byFiness = await searchAll(app, `/fhir/v2/Organization?identifier=${finess}`);
  t.same(ids(byFiness), [`F${finess}`], 'the establishment by its FINESS number, once');
  const withSiret = feed.pmej.flatMap((p: any) => p.ege).find((e: any) => e.informationsGeneralesEGE.siret);
  const siret = withSiret.informationsGeneralesEGE.siret.trim();
  t.ok(ids(await searchAll(app, `/fhir/v2/Organization?identifier=${siret}`)).includes(`F${withSiret.informationsGeneralesEGE.numFinessEge.trim()}`), 'by its SIRET');
  const geo = ege.adresse.find((a: any) => a.usageAdresse === '03');
  const postal = (geo.codePostal ?? geo.ligneAcheminement.slice(0, 5)).trim();
  t.ok(ids(await searchAll(app, `/fhir/v2/Organization?address-postalcode=${postal}`)).includes(`F${finess}`), 'by the postal code of its geographic address');
  const org = byFiness[0].resource as any;
  t.equal(org.partOf.reference, `Organization/J${pmej.informationsGeneralesPMEJ.numFinessPm.trim()}`, 'partOf its legal entity');
  const parts = await searchAll(app, `/fhir/v2/Organization?partof=J${pmej.informationsGeneralesPMEJ.numFinessPm.trim()}`);
  t.ok(ids(parts).includes(`F${finess}`), 'the legal entity names its establishments (partof)');
  const legal = await searchAll(app, `/fhir/v2/Organization?type=LEGAL-ENTITY`);
  t.equal(legal.length, feed.pmej.length, 'every legal entity, through every page');

  const pharmacies = await searchAll(app, '/fhir/v2/Organization?type:text=pharmacie');
  const byCode = await searchAll(app, '/fhir/v2/Organization?type=620');
  t.ok(byCode.length > 0, 'pharmacies by category code');
  t.ok(ids(byCode).every((id) => ids(pharmacies).includes(id)), 'and by the label of their category (:text)');

  const fromFiness = await searchAll(app, '/fhir/v2/Organization?data-information-system=FINESS');
  const establishments = feed.pmej.reduce((n: number, p: any) => n + p.ege.length, 0);
  t.equal(fromFiness.length, establishments + feed.pmej.length, 'data-information-system=FINESS: what the feed brought');

  // A structure both sources describe: one resource with both traces, its roles pointing to it.
  const both = fromFiness.map((e: any) => e.resource).find((r: any) => r.meta.extension.some((x: any) => x.extension[0].valueCode === 'RPPS'));
  t.ok(both, 'an establishment the RPPS lines also name');
  const roles = await searchAll(app, `/fhir/v2/PractitionerRole?organization=Organization/${both.id}`);
  t.ok(roles.length > 0, 'its PractitionerRoles point to it');

  const mss = fs.readFileSync(file(day0, 'Extraction_Correspondance'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('|'));
  const per = mss.find((f) => f[0] === 'PER' && f.length === 31 && f[6] !== '')!;
  const found = await searchAll(app, `/fhir/v2/Practitioner?mailbox-mss=${encodeURIComponent(per[1])}`);
  t.same(ids(found), [per[4]], 'a PER mailbox on its Practitioner (exact)');
  const local = per[1].split('@')[0];
  const contains = await searchAll(app, `/fhir/v2/Practitioner?mailbox-mss:contains=${encodeURIComponent(local)}`);
  t.ok(ids(contains).includes(per[4]), 'and by :contains');
  const orgLine = mss.find((f) => f[0] === 'ORG' && f.length === 31 && !f[6].startsWith('39'))!;
  const orgs = await searchAll(app, `/fhir/v2/Organization?mailbox-mss=${encodeURIComponent(orgLine[1])}`);
  t.equal(orgs.length, 1, 'an ORG mailbox on its Organization');
  const withRoleMailbox = await searchAll(app, '/fhir/v2/PractitionerRole?data-information-system=MSS');
  t.ok(withRoleMailbox.length > 0, 'PER mailboxes on roles at their structure');
  const dup = mss.filter((f) => f[1] === per[1]);
  const practitioner = found[0].resource as any;
  t.equal(practitioner.telecom.filter((x: any) => x.value === per[1]).length, 1, `one telecom for an address on ${dup.length} line(s)`);
  allAtOnce = await contents(db);
});

t.test('one structure, one Organization, whatever the order in which the sources are imported', async (t) => {
  // The roles at a geolocated establishment refer to its Location whether the RPPS lines come before the feed or after it.
  const located = [...allAtOnce!].filter(([k, v]) => k.startsWith('PractitionerRole/') && (v as { location?: unknown }).location);
  t.ok(located.length > 0 && [...allAtOnce!.keys()].some((k) => k.startsWith('Location/')), `Locations and ${located.length} roles at them among the resources compared`);
  const names = fs.readdirSync(day0);
  const rpps = names.filter((n) => n.startsWith('PS_LibreAcces')).map((n) => path.join(day0, n));
  for (const order of [[[file(day0, 'Extraction')], [file(day0, 'finess')], rpps], [rpps, [file(day0, 'Extraction')], [file(day0, 'finess')]]]) {
    const other = await testDatabase(t);
    for (const paths of order) {
      const r = await importCli(other, paths);
      t.ok([0, 2].includes(r.code ?? -1), `imported ${paths.map((p) => path.basename(p)).join(', ')}`, { code: r.code, stdout: r.stdout, stderr: r.stderr });
    }
    const got = await contents(other);
    t.same([...got.keys()].sort(), [...allAtOnce!.keys()].sort(), 'the same resources');
    t.ok([...got].every(([k, v]) => JSON.stringify(v) === JSON.stringify(allAtOnce!.get(k))), 'with the same content');
  }
});

t.test('the next day: only what changed gets a version; the same files again change nothing', async (t) => {
  const run = await importCli(db, [day1]);
  t.equal(run.code, 2, 'imported', { stderr: run.stderr });
  const [{ at }] = await db.sql<{ at: Date }[]>`select started_at as at from writer_run where kind = 'import' order by id desc limit 1`;
  const now = await contents(db);
  const reallyChanged = [...now].filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(allAtOnce!.get(k))).map(([k]) => k).sort();
  const fed: string[] = [];
  for (const type of ['Organization', 'Practitioner', 'PractitionerRole', 'Location']) {
    fed.push(...(await searchAll(app, `/fhir/v2/${type}?_lastUpdated=ge${at.toISOString()}`)).map((e) => `${type}/${e.resource.id}`));
  }
  t.ok(reallyChanged.some((k) => k.startsWith('Organization/')), 'some Organizations changed');
  t.same(fed.sort(), reallyChanged, '_lastUpdated=ge<run> gives exactly the resources whose content changed');
  t.match(run.stdout, /MSSanté: [1-9][\d,]* mailboxes/, 'the suffixed header form read');
  t.notMatch(run.stdout, /skipped/, 'no file skipped');
  const again = await importCli(db, [day1]);
  t.equal(again.code, 2);
  const [{ at: at2 }] = await db.sql<{ at: Date }[]>`select started_at as at from writer_run where kind = 'import' order by id desc limit 1`;
  for (const type of ['Organization', 'Practitioner', 'PractitionerRole', 'Location']) {
    t.same(await searchAll(app, `/fhir/v2/${type}?_lastUpdated=ge${at2.toISOString()}`), [], `${type}: nothing new on the same files`);
  }
});

t.test('a state whose structure lines are objects (an import made before they were arrays) is read as well', async (t) => {
  const names = fs.readdirSync(day0);
  const rpps = names.filter((n) => n.startsWith('PS_LibreAcces')).map((n) => path.join(day0, n));
  const dbs = [await testDatabase(t), await testDatabase(t)];
  for (const [i, d] of dbs.entries()) {
    t.equal((await importCli(d, rpps)).code, 2, 'the RPPS extract imported');
    if (i === 0) {
      const [{ n }] = await d.sql<{ n: number }[]>`
        with c as (select key, i from unnest(${KINDS.activity.columns as readonly string[]}::text[]) with ordinality as c(key, i))
        update import_structure set fields = (select json_object_agg(c.key, fields::json->>(c.i::int - 1) order by c.i) from c)::text
        where fields is not null returning 1 as n`.then((rows) => [{ n: rows.length }]);
      t.ok(n > 0, `${n} structure lines written as objects`);
    }
    // Every FINESS entity rebuilt, so that the structures both sources describe are built from the state's line.
    t.ok([0, 2].includes((await importCli(d, [file(day0, 'finess')])).code ?? -1), 'the FINESS feed imported');
    await d.sql`update import_finess set digest = 'stale'`;
    t.ok([0, 2].includes((await importCli(d, [file(day1, 'finess')])).code ?? -1), 'the next FINESS feed imported');
    t.ok([0, 2].includes((await importCli(d, [file(day0, 'Extraction')])).code ?? -1), 'the MSSanté extraction imported alone: its ORG mailboxes find their structures by the state\'s keys');
  }
  const [objects, arrays] = [await contents(dbs[0]), await contents(dbs[1])];
  t.ok([...objects.keys()].some((k) => k.startsWith('Organization/F')), 'establishments');
  t.same([...objects.keys()].sort(), [...arrays.keys()].sort(), 'the same resources');
  t.ok([...objects].every(([k, v]) => JSON.stringify(v) === JSON.stringify(arrays.get(k))), 'with the same content');
});

t.test('a file that is not the feed: exit 1, nothing written', async (t) => {
  const dir = tmpDir(t, 'not-feed');
  fs.writeFileSync(path.join(dir, 'finess-structures-journalier-20261101.json.gz'), '<!DOCTYPE html><html><body>Maintenance</body></html>');
  const [{ n: before }] = await db.sql<{ n: number }[]>`select count(*)::int as n from resource`;
  const run = await importCli(db, [dir]);
  t.equal(run.code, 1);
  t.match(run.stderr + run.stdout, /finess-structures-journalier-20261101\.json\.gz: .*(web page|HTML)/i);
  const [{ n: after }] = await db.sql<{ n: number }[]>`select count(*)::int as n from resource`;
  t.equal(after, before, 'nothing written');
});
