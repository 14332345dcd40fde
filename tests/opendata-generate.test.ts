import fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { parseCli } from '../src/cli/generate.ts';
import { generateOpenData, type OpenDataFileOptions, type OpenDataSummary } from '../src/generate/open-data-files.ts';
import { OpenDataModel } from '../src/generate/open-data.ts';
import { assertMappable, MapError, organizationOf, practitionerId, practitionerOf, roleOf } from '../src/opendata/map.ts';
import type { ActivityRecord, DiplomaRecord, OpenDataRecord, SavoirFaireRecord } from '../src/opendata/read.ts';
import { registry } from '../src/registry/index.ts';
import { prepareResource } from '../src/fhir/resource.ts';
import { collect, tmpDir } from './helpers/open-data.ts';

const SCALE = 0.002; // 2,000 persons, about 2,300 activity lines
const SEED = 7;

async function generated(t: { teardown(fn: () => void): void }, options: Partial<OpenDataFileOptions> = {}) {
  const outDir = tmpDir(t, 'od-gen');
  const summary = await generateOpenData({ scale: SCALE, seed: SEED, outDir, ...options });
  return { outDir, summary };
}

/** Each file of a folder by its SHA-256 (tap's deep comparison of large buffers is far too slow). */
const contents = (dir: string) =>
  Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, createHash('sha256').update(fs.readFileSync(path.join(dir, f))).digest('hex')]));
const file = (s: OpenDataSummary, kind: string) => s.files.find((f) => f.kind === kind)!;
const key = (r: OpenDataRecord) => JSON.stringify(r.fields);

t.test('the same seed gives the same bytes, another seed other bytes', async (t) => {
  const a = await generated(t);
  const b = await generated(t);
  const c = await generated(t, { seed: SEED + 1 });
  t.same(Object.keys(contents(a.outDir)), [
    'PS_LibreAcces_Dipl_AutExerc_202611010000.txt',
    'PS_LibreAcces_Personne_activite_202611010000.txt',
    'PS_LibreAcces_SavoirFaire_202611010000.txt',
  ]);
  t.same(contents(a.outDir), contents(b.outDir));
  t.notSame(contents(a.outDir)['PS_LibreAcces_Personne_activite_202611010000.txt'], contents(c.outDir)['PS_LibreAcces_Personne_activite_202611010000.txt']);
  const z1 = await generated(t, { zip: true });
  const z2 = await generated(t, { zip: true });
  t.same(Object.keys(contents(z1.outDir)), ['PS_LibreAcces_202611010000.zip']);
  t.same(contents(z1.outDir), contents(z2.outDir), 'the archive too');
});

t.test('the files read back with the quirks the generator put in', async (t) => {
  const { outDir, summary } = await generated(t, { duplicateShare: 0.01, badShare: 0.01 });
  const activityFile = path.join(outDir, file(summary, 'activity').name);
  const sfFile = path.join(outDir, file(summary, 'savoirFaire').name);
  t.ok(fs.readFileSync(activityFile, 'latin1').includes('|\r\n'), 'Personne_activite ends its lines with CRLF');
  t.notOk(isUtf8(fs.readFileSync(sfFile)), 'SavoirFaire is in Windows-1252');

  const { records, rejects, skips } = await collect([outDir]);
  t.same(skips, []);
  const short = summary.files.reduce((n, f) => n + f.shortLines, 0);
  const emptyId = summary.files.reduce((n, f) => n + f.emptyIdLines, 0);
  t.ok(short > 0 && emptyId > 0, 'bad lines of both sorts');
  t.equal(rejects.length, short, 'every short line is rejected by the reader');
  for (const r of rejects) {
    const [, n, m] = /^.+:\d+: (\d+) fields, expected (\d+)$/.exec(r) ?? [];
    t.equal(Number(m) - Number(n), 1, r);
  }

  const unmappable = records.filter((r) => {
    try {
      assertMappable(r);
      return false;
    } catch (e) {
      t.ok(e instanceof MapError);
      t.equal((e as Error).message, 'no Identification nationale PP');
      return true;
    }
  });
  t.equal(unmappable.length, emptyId, 'every line without identifier is a MapError');

  const byKind = (kind: string) => records.filter((r) => r.kind === kind && r.fields.idnps !== '');
  for (const kind of ['activity', 'savoirFaire', 'diploma']) {
    const rs = byKind(kind);
    let repeats = 0;
    rs.forEach((r, i) => (repeats += i > 0 && key(r) === key(rs[i - 1]) ? 1 : 0));
    t.equal(repeats, file(summary, kind).duplicates, `${kind}: exact duplicates follow their line`);
  }

  const activities = byKind('activity') as ActivityRecord[];
  const distinct = new Map(activities.map((r) => [key(r), r]));
  const day = new OpenDataModel({ scale: SCALE, seed: SEED }).summary();
  t.equal(distinct.size, day.activities, 'the activity lines, duplicates aside');
  t.equal([...distinct.values()].filter((r) => r.fields.structureId === '').length, day.withoutStructure, 'lines without structure');
  t.ok(day.withoutStructure > 0);
  const persons = new Set(activities.map((r) => r.fields.idnps));
  t.equal(persons.size, day.persons);
  t.equal([...persons].filter((p) => p.startsWith('0')).length, day.adeli, 'ADELI persons');
  t.ok(day.adeli > 0 && day.adeli < day.persons);
  t.ok(activities.length > 1.05 * persons.size, 'some persons have several activities');

  const names = new Map(activities.map((r) => [r.fields.idnps, r.fields.nomExercice]));
  const sf = byKind('savoirFaire') as SavoirFaireRecord[];
  t.ok(sf.some((r) => /[^\x00-\x7f]/.test(r.fields.nomExercice)), 'names outside ASCII in the Windows-1252 file');
  t.ok(sf.every((r) => names.get(r.fields.idnps) === r.fields.nomExercice), 'the same names in both encodings');
});

t.test('every generated line maps to resources the write path takes', async (t) => {
  const { outDir } = await generated(t, { badShare: 0 });
  const { records } = await collect([outDir]);
  const people = new Map<string, { activities: ActivityRecord[]; savoirFaire: SavoirFaireRecord[]; diplomas: DiplomaRecord[] }>();
  for (const r of records) {
    const id = practitionerId(r);
    if (!people.has(id)) people.set(id, { activities: [], savoirFaire: [], diplomas: [] });
    const p = people.get(id)!;
    if (r.kind === 'activity') p.activities.push(r);
    else if (r.kind === 'savoirFaire') p.savoirFaire.push(r);
    else if (r.kind === 'diploma') p.diplomas.push(r);
  }
  const ids = { Practitioner: new Set<string>(), Organization: new Set<string>(), PractitionerRole: new Set<string>() };
  let failures = 0;
  const put = (resource: Record<string, unknown> | undefined) => {
    if (!resource) return;
    try {
      const p = prepareResource(registry, resource);
      ids[p.type as keyof typeof ids].add(p.id);
    } catch (e) {
      if (failures++ < 3) t.fail(`${resource.resourceType}/${resource.id}: ${(e as Error).message}`);
    }
  };
  for (const person of people.values()) {
    put(practitionerOf(person));
    for (const a of person.activities) {
      put(organizationOf(a));
      put(roleOf(a));
    }
  }
  t.equal(failures, 0);
  t.equal(ids.Practitioner.size, people.size);
  t.ok(ids.Organization.size > 100, `${ids.Organization.size} structures`);
  const activities = records.filter((r) => r.kind === 'activity');
  t.equal(ids.PractitionerRole.size, new Set(activities.map((r) => key(r))).size, 'one role per distinct line');
});

t.test('the 52-column form', async (t) => {
  const { outDir, summary } = await generated(t, { form52: true, badShare: 0 });
  const header = fs.readFileSync(path.join(outDir, file(summary, 'activity').name), 'utf8').split('\n')[0];
  t.equal(header.split('|').length - 1, 52);
  const { records, rejects } = await collect([outDir]);
  t.same(rejects, []);
  const activities = records.filter((r): r is ActivityRecord => r.kind === 'activity');
  t.ok(activities.length > 2000);
  t.ok(activities.every((r) => r.fields.codeFonction === '' && r.fields.codeGenreActivite === ''));
});

t.test('the next days: a share of lines changed, persons gone, new and back', async (t) => {
  const rate = 0.1;
  const base = { scale: 0.005, seed: SEED, changeRate: rate, badShare: 0, duplicateShare: 0 };
  const days = [];
  for (const day of [0, 1, 2]) {
    const { outDir, summary } = await generated(t, { ...base, day });
    t.equal(summary.stamp, ['202611010000', '202611020000', '202611030000'][day]);
    const { records } = await collect([outDir]);
    const activities = records.filter((r) => r.kind === 'activity');
    days.push({ lines: new Set(activities.map(key)), persons: new Set(activities.map((r) => r.fields.idnps)) });
  }
  const first = await generated(t, { ...base, changeRate: undefined });
  t.same(contents(first.outDir), contents((await generated(t, { ...base, day: 0 })).outDir), 'day 0 is the first snapshot, whatever the rate');

  const [d0, d1, d2] = days;
  const changed = [...d1.lines].filter((l) => !d0.lines.has(l)).length / d1.lines.size;
  t.ok(changed > rate * 0.6 && changed < rate * 1.5, `${(changed * 100).toFixed(1)} % of day 1's lines are not day 0's`);
  const gone = [...d0.persons].filter((p) => !d1.persons.has(p));
  const arrived = [...d1.persons].filter((p) => !d0.persons.has(p));
  const back = [...d2.persons].filter((p) => d0.persons.has(p) && !d1.persons.has(p));
  t.ok(gone.length > 0, `${gone.length} gone on day 1`);
  t.ok(arrived.length > 0, `${arrived.length} new on day 1`);
  t.ok(back.length > 0, `${back.length} back on day 2`);
  t.ok(gone.length + arrived.length < d0.persons.size * rate * 0.2, 'persons come and go much less than lines change');
});

t.test('CLI: the open-data format and its options', async (t) => {
  t.same(parseCli(['--format', 'open-data', '--scale', '0.01', '--out', 'x']), {
    format: 'open-data', scale: 0.01, out: 'x', seed: 1, zip: false, day: 0, changeRate: 0.01, form52: false,
  });
  t.same(parseCli(['--format', 'open-data', '--scale', '1', '--out', 'x', '--zip', '--day', '3', '--change-rate', '0.05', '--form52', '--seed', '9']), {
    format: 'open-data', scale: 1, out: 'x', seed: 9, zip: true, day: 3, changeRate: 0.05, form52: true,
  });
  for (const bad of [
    ['--format', 'csv', '--scale', '1', '--out', 'x'],
    ['--format', 'open-data', '--scale', '5', '--out', 'x'],
    ['--format', 'open-data', '--scale', '1', '--out', 'x', '--gzip'],
    ['--format', 'open-data', '--scale', '1', '--out', 'x', '--day', '-1'],
    ['--format', 'open-data', '--scale', '1', '--out', 'x', '--day', '1.5'],
    ['--format', 'open-data', '--scale', '1', '--out', 'x', '--change-rate', '2'],
    ['--scale', '1', '--out', 'x', '--zip'],
    ['--scale', '1', '--out', 'x', '--day', '1'],
  ]) {
    t.throws(() => parseCli(bad), { name: 'UsageError' }, bad.join(' '));
  }
});
