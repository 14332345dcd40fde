/**
 * `npm run import` on hand-written extracts (lines of third-party readers' tests of the real files):
 * both encodings and both forms of Personne_activite in one snapshot, bad lines, a file that is
 * not an extract, the same files as a ZIP, a truncated ZIP, two imports at once; and the imported
 * directory searched over HTTP as clients do (no _count: pages of DEFAULT_COUNT=2, every next link
 * followed). Expected results are written out by hand from the lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import t from 'tap';
import { connectUrl } from '../src/db.ts';
import { IMPORT_LOCK } from '../src/opendata/import.ts';
import { roleId } from '../src/opendata/map.ts';
import type { ActivityRecord } from '../src/opendata/read.ts';
import { testApp } from './helpers/app.ts';
import { importCli, searchAll, searchRefs, storedResources } from './helpers/import.ts';
import {
  collect, HEADER_52, HEADER_56, HEADER_DIPLOMA, HEADER_SAVOIR_FAIRE, LINE_ADELI_OPTICIAN, LINE_ADELI_PARIS, LINE_RPPS_ABROAD,
  LINE_RPPS_HOSPITAL, tmpDir, to56, writeZip,
} from './helpers/open-data.ts';
import { API_KEY } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, DEFAULT_COUNT: '2' } });
const admin = connectUrl(db.url, { max: 1 });
t.teardown(() => admin.end({ timeout: 1 }));

const NOS = (key: string) => `https://mos.esante.gouv.fr/NOS/${key}/FHIR/${key.replace(/_/g, '-')}`;
const HOSPITAL_35 = to56(LINE_RPPS_HOSPITAL, ['FON-35', 'Praticien hospitalier'], ['GENR01', 'Activité standard']);
const HOSPITAL_01 = to56(LINE_RPPS_HOSPITAL, ['FON-01', 'Fonction libérale'], ['GENR01', 'Activité standard']);
const ABROAD = to56(LINE_RPPS_ABROAD, ['FON-AU', 'Autre fonction'], ['GENR04', 'Activité de prévention']);
const files: Record<string, Buffer> = {
  // The older 52-column form, in Windows-1252 with CRLF line ends.
  'PS_LibreAcces_Personne_activite_52.txt': iconv.encode([HEADER_52, LINE_ADELI_OPTICIAN, LINE_ADELI_PARIS, ''].join('\r\n'), 'win1252'),
  // The 56-column form in UTF-8: an exact duplicate (one role), a second activity, a short line (line 6).
  'PS_LibreAcces_Personne_activite_56.txt': Buffer.from([HEADER_56, HOSPITAL_35, HOSPITAL_35, HOSPITAL_01, ABROAD, HOSPITAL_01.slice(0, HOSPITAL_01.lastIndexOf('|', HOSPITAL_01.length - 2) + 1), ''].join('\n')),
  // Windows-1252 too: a person known only by her savoir-faire, and a line of an unknown identifier type (line 3).
  'PS_LibreAcces_SavoirFaire.txt': iconv.encode([
    HEADER_SAVOIR_FAIRE,
    "8|10009999990|810009999990|MARTIN|ÉLODIE|10|Médecin|C|Civil|CAPA|Capacité|CAPA05|Capacité de médecine d'urgence|",
    '3|10009999991|310009999991|DURAND|PAUL|10|Médecin|C|Civil|S|Spécialité ordinale|SM54|Médecine générale|', '',
  ].join('\n'), 'win1252'),
  'PS_LibreAcces_Dipl_AutExerc.txt': Buffer.from([HEADER_DIPLOMA, "8|10001045367|810001045367|GUIGNARD|ERIC|DE|Diplôme d'Etat français|DE01|Diplôme d'Etat de docteur en médecine|||||", ''].join('\n')),
  'README.txt': Buffer.from('Extraction du répertoire RPPS\n'),
};
const dir = tmpDir(t, 'import-files');
for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), bytes);
const file = (name: string) => path.join(dir, name);

t.test('a truncated ZIP: exit 1, one clear line, nothing written', async (t) => {
  const zip = path.join(tmpDir(t, 'import-zip'), 'PS_LibreAcces.zip');
  const bytes = await writeZip(zip, Object.fromEntries(Object.entries(files)));
  fs.writeFileSync(zip, bytes.subarray(0, Math.floor(bytes.length * 0.7)));
  const r = await importCli(db, [zip]);
  t.equal(r.code, 1);
  t.same(r.stderr.trim().split('\n'), [`import failed: ${zip}: not a complete ZIP archive (truncated download?). Nothing was written.`]);
  t.equal((await storedResources(db)).size, 0, 'no resource');
  t.same(await db.sql`select * from import_person`, [], 'no state');
  t.same((await db.sql`select outcome from writer_run where kind = 'import'`).map((r) => r.outcome), ['failure'], 'the run recorded as failed');
});

t.test('both encodings and both column forms: bad lines reported as file:line, the rest imported, exit 2', async (t) => {
  const r = await importCli(db, [dir]);
  t.equal(r.code, 2, 'exit code 2');
  t.same(r.stderr.trim().split('\n').sort(), [
    `${file('PS_LibreAcces_Personne_activite_56.txt')}:6: 55 fields, expected 56`,
    `${file('PS_LibreAcces_SavoirFaire.txt')}:3: Type d'identifiant PP "3" is neither 0 (ADELI) nor 8 (RPPS)`,
    `${file('README.txt')}: skipped: not a PS_LibreAcces extract (no column of Personne_activite, SavoirFaire or Dipl_AutExerc)`,
  ].sort());
  t.same(r.stdout.trim().split('\n').slice(0, 3), [
    'persons: 5 new, 0 changed, 0 deactivated, 0 unchanged',
    'structures: 4 new, 0 changed, 0 deactivated, 0 unchanged',
    'activities: 5 new, 0 changed, 0 deactivated, 0 unchanged',
  ]);
  t.match(r.stdout, /^10 lines read, 2 rejected, 1 file\(s\) skipped; first import \(bulk load\)/m);
  const [optician] = await searchAll(app, '/fhir/v2/Practitioner?_id=0012600631');
  t.same((optician.resource as any).qualification[0].code.coding[0], { system: NOS('TRE_G15-ProfessionSante'), code: '26', display: 'Audioprothésiste' }, 'Windows-1252 read as such');
  const [martin] = await searchAll(app, '/fhir/v2/Practitioner?_id=810009999990');
  t.same((martin.resource as any).name[0].given, ['ÉLODIE']);
});

t.test('searches as clients write them, every next link followed', async (t) => {
  const P = (id: string) => `Practitioner/${id}`;
  const rows: [string, string[]][] = [
    ['Practitioner?identifier=https://rpps.esante.gouv.fr|10100271385', [P('810100271385')]],
    ['Practitioner?identifier=10001045367', [P('810001045367')]],
    ['Practitioner?identifier=https://adeli.esante.gouv.fr|012600631', [P('0012600631')]],
    ['Practitioner?identifier=urn:oid:1.2.250.1.71.4.2.1|0759124159', [P('0759124159')]],
    ['Practitioner?name=petitguyot', [P('0012600631')]],
    ['Practitioner?family=de ruijter', [P('0759124159')]],
    ['Practitioner?given=elodie', [P('810009999990')]],
    ['Practitioner?name=leger&given=romain', [P('810100271385')]],
    ['Practitioner?qualification-code=10', [P('810001045367'), P('810100271385'), P('810009999990')]],
    ['Practitioner?qualification-code=SM53', [P('810100271385')]],
    ['Practitioner?qualification-code=CAPA05', [P('810009999990')]],
    ['Practitioner?qualification-code=DE01', [P('810001045367')]],
    ['Practitioner?qualification-code:text=orthophoniste', [P('0759124159')]],
    ['Practitioner?qualification-code:text=urgence', [P('810009999990')]],
    ['Organization?identifier=F250000700', ['Organization/F250000700']],
    ['Organization?identifier=https://finess.esante.gouv.fr|250000700', ['Organization/F250000700']],
    ['Organization?address-postalcode=25', ['Organization/C49940088500020', 'Organization/F250000700']],
    ['Organization?address-city=pontarlier', ['Organization/F250000700']],
    ['Organization?address-city=paris', ['Organization/C75912415900']],
    ['Organization?address-city=doubs', ['Organization/C49940088500020']],
  ];
  for (const [q, want] of rows) t.same(await searchRefs(app, `/fhir/v2/${q}`), want.sort(), q);

  // Roles, by what the lines say of each activity.
  const { records } = await collect([file('PS_LibreAcces_Personne_activite_52.txt'), file('PS_LibreAcces_Personne_activite_56.txt')]);
  const roleOfLine = (at: string) => `PractitionerRole/${roleId(records.find((r) => r.where.endsWith(at)) as ActivityRecord)}`;
  const [opticianRole, parisRole] = [roleOfLine('_52.txt:2'), roleOfLine('_52.txt:3')];
  const [h35, h01, abroad] = [roleOfLine('_56.txt:2'), roleOfLine('_56.txt:4'), roleOfLine('_56.txt:5')];
  const R = (key: string, code: string) => `${NOS(key)}|${code}`;
  const roles: [string, string[]][] = [
    ['PractitionerRole?practitioner.identifier=10100271385', [h35, h01]],
    ['PractitionerRole?practitioner.identifier=https://adeli.esante.gouv.fr|012600631', [opticianRole]],
    ['PractitionerRole?practitioner=Practitioner/810009999990', []],
    ['PractitionerRole?role=' + R('TRE_R21-Fonction', 'FON-35'), [h35]],
    ['PractitionerRole?role=' + R('TRE_R22-GenreActivite', 'GENR01'), [h35, h01]],
    ['PractitionerRole?role=' + R('TRE_R23-ModeExercice', 'S'), [opticianRole, h35, h01, abroad]],
    ['PractitionerRole?role=' + R('TRE_R23-ModeExercice', 'L'), [parisRole]],
    ['PractitionerRole?organization.identifier=F250000700', [h35, h01]],
    ['PractitionerRole?organization.identifier=C75912415900', [parisRole]],
  ];
  t.equal(new Set([opticianRole, parisRole, h35, h01, abroad]).size, 5, 'five distinct activities');
  for (const [q, want] of roles) t.same(await searchRefs(app, `/fhir/v2/${q}`), want.sort(), q);
});

t.test('the same files as a ZIP are the same snapshot: nothing written', async (t) => {
  const zip = path.join(tmpDir(t, 'import-zip'), 'PS_LibreAcces.zip');
  await writeZip(zip, files);
  const before = await storedResources(db);
  const r = await importCli(db, [zip]);
  t.equal(r.code, 2, 'the same bad lines');
  t.match(r.stderr, `${zip}!PS_LibreAcces_Personne_activite_56.txt:6: 55 fields, expected 56`);
  t.same(r.stdout.trim().split('\n').slice(0, 3), [
    'persons: 0 new, 0 changed, 0 deactivated, 5 unchanged',
    'structures: 0 new, 0 changed, 0 deactivated, 4 unchanged',
    'activities: 0 new, 0 changed, 0 deactivated, 5 unchanged',
  ]);
  t.same(await storedResources(db), before);
});

t.test('two imports at once: the second is refused', async (t) => {
  let first: ReturnType<typeof importCli> | undefined;
  let second: Awaited<ReturnType<typeof importCli>> | undefined;
  // The first import waits on the state table the test holds, with the import lock taken. pg_locks
  // shows every database of the server and every advisory lock (migrations, bulk loads): only this
  // database's import lock is the one.
  await db.sql.begin(async (tx) => {
    await tx`lock table import_person in access exclusive mode`;
    first = importCli(db, [dir]);
    while (!(await admin`
      select exists (select 1 from pg_locks l join pg_database d on d.oid = l.database
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.objid::bigint = ${IMPORT_LOCK}
          and d.datname = current_database()) as held`)[0].held) {
      await new Promise((r) => setTimeout(r, 20));
    }
    second = await importCli(db, [dir]);
  });
  t.equal(second!.code, 1);
  t.same(second!.stderr.trim().split('\n'), ['import refused: another import is running on this database.']);
  const r = await first!;
  t.equal(r.code, 2, 'the first one goes on once the table is free');
});
