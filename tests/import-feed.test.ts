/**
 * What the change feed (`_lastUpdated=ge<run start>`) says after an import is what happened in the
 * directory, through `npm run import` and the API: practitioners leaving and joining rewrite only
 * the structures that appear or disappear; a damaged copy of a snapshot (a line cut short, a last
 * line cut by a download stopped early, a line naming no person) deactivates nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { testApp } from './helpers/app.ts';
import { importCli, searchAll, searchRefs, storedResources } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';
import { API_KEY } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const root = tmpDir(t, 'import-feed');
const day0 = path.join(root, 'day-0');
await generateOpenData({ scale: 0.002, seed: 23, day: 0, outDir: day0, badShare: 0, duplicateShare: 0 });
const TYPES = ['Practitioner', 'Organization', 'PractitionerRole'];

/** A snapshot's files: name → lines (bytes as latin1 text, so that any encoding survives; `\r` kept). */
type Snapshot = Map<string, string[]>;
const readSnapshot = (dir: string): Snapshot =>
  new Map(fs.readdirSync(dir).sort().map((name) => [name, fs.readFileSync(path.join(dir, name), 'latin1').split('\n')]));
function writeSnapshot(dir: string, s: Snapshot): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, lines] of s) fs.writeFileSync(path.join(dir, name), lines.join('\n'), 'latin1');
  return dir;
}
const activityFile = (s: Snapshot) => [...s.keys()].find((n) => n.includes('Personne_activite'))!;
const column = (s: Snapshot, name: string) => s.get(activityFile(s))![0].split('|').indexOf(name);
/** The data lines of a file (header and the empty string after the last newline left out). */
const dataLines = (lines: string[]) => lines.slice(1).filter((l) => l.trim() !== '');

/** Every resource changed by a run that started after `since`, as the feed gives it: `Type/id`s. */
async function feed(since: string): Promise<string[]> {
  const refs: string[] = [];
  for (const type of TYPES) refs.push(...(await searchRefs(app, `/fhir/v2/${type}?_lastUpdated=ge${since}`)));
  return refs.sort();
}

/** An import's start, read back from its run (what the resources it wrote carry). */
async function lastRunStart(): Promise<string> {
  const [run] = await db.sql<{ started_at: Date }[]>`select started_at from writer_run where kind = 'import' order by id desc limit 1`;
  return run.started_at.toISOString();
}

async function importOk(t: Test, dir: string, code = 0, args: string[] = []) {
  const r = await importCli(db, [...args, dir]);
  t.equal(r.code, code, `exit ${code}`, { stderr: r.stderr, stdout: r.stdout });
  return r;
}

t.test('a next-day snapshot where practitioners leave and join rewrites only the structures that appear or disappear', async (t) => {
  await importOk(t, day0);
  const s = readSnapshot(day0);
  const act = activityFile(s);
  const idnps = column(s, 'Identification nationale PP');
  const structure = column(s, 'Identifiant technique de la structure');
  const authority = s.get(act)![0].split('|').findIndex((c) => c.includes("d'enregistrement"));
  t.ok(idnps >= 0 && structure >= 0 && authority >= 0, 'columns found');
  const lines = dataLines(s.get(act)!);
  const personsAt = new Map<string, Set<string>>();
  for (const l of lines) {
    const f = l.split('|');
    if (f[structure]) (personsAt.get(f[structure]) ?? personsAt.set(f[structure], new Set()).get(f[structure])!).add(f[idnps]);
  }
  // Those who leave: the persons of the file's first lines, each often the first to name its structure.
  const leaving = new Set(lines.slice(0, 12).map((l) => l.split('|')[idnps]));
  // And the person of a structure no one else works at, which goes with them.
  for (const ps of [...personsAt.values()].filter((ps) => ps.size === 1).slice(0, 2)) leaving.add([...ps][0]);
  const goneStructures = [...personsAt].filter(([, ps]) => [...ps].every((p) => leaving.has(p))).map(([id]) => `Organization/${id}`);
  const keptShared = [...personsAt].filter(([, ps]) => [...ps].some((p) => leaving.has(p)) && ![...ps].every((p) => leaving.has(p)));
  t.ok(keptShared.length > 0, `structures that someone leaves and others stay at (${keptShared.length})`);
  t.ok(goneStructures.length > 0, `structures everyone leaves (${goneStructures.length})`);

  // Those who join, first in the file: at a structure others stay at, under another authority
  // (the third part of "Autorité d'enregistrement" differs per activity), and at a new structure.
  const template = lines.find((l) => l.split('|')[structure] === keptShared[0][0])!.split('|');
  const thirds = new Set(lines.filter((l) => l.split('|')[structure] === keptShared[0][0]).map((l) => l.split('|')[authority].split('/')[2]));
  const third = ['ARS', 'CNOM', 'CPAM', 'CNOP', 'CNOSF'].find((a) => !thirds.has(a))!;
  const joiner = (n: number, structureId: string) => {
    const f = [...template];
    f[1] = `1009999${String(n).padStart(4, '0')}`;
    f[idnps] = `8${f[1]}`;
    f[structure] = structureId;
    f[authority] = `${third}/${third}/${third}`;
    return f.join('|');
  };
  // The new structure has no FINESS site number: one with the template's would be the template's structure.
  const finessSite = s.get(act)![0].split('|').findIndex((c) => c.includes('FINESS site'));
  const newcomer = joiner(2, 'R99999999999').split('|');
  newcomer[finessSite] = '';
  const joined = [joiner(1, keptShared[0][0]), newcomer.join('|')];
  const next: Snapshot = new Map();
  for (const [name, ls] of s) {
    const kept = ls.filter((l, i) => i === 0 || !leaving.has(l.split('|')[idnps]));
    next.set(name, name === act ? [kept[0], ...joined, ...kept.slice(1)] : kept);
  }
  const dir = writeSnapshot(path.join(root, 'day-1'), next);
  await importOk(t, dir);
  const at = await lastRunStart();
  t.same(
    (await searchRefs(app, `/fhir/v2/Organization?_lastUpdated=ge${at}`)),
    [...goneStructures, 'Organization/R99999999999'].sort(),
    `only the ${goneStructures.length} gone structures and the new one are written`,
  );
  t.same(
    await searchRefs(app, `/fhir/v2/Practitioner?_lastUpdated=ge${at}`),
    [...[...leaving].map((p) => `Practitioner/${p}`), 'Practitioner/810099990001', 'Practitioner/810099990002'].sort(),
    'the persons who left and joined',
  );
  // The current files, for the tests below.
  fs.rmSync(day0, { recursive: true });
  fs.cpSync(dir, day0, { recursive: true });
});

/** The current snapshot with its lines changed by `damage` (file name, data lines → data lines), in a folder of its own. */
function damaged(label: string, damage: (name: string, lines: string[]) => string[], end = '\n'): string {
  const s = readSnapshot(day0);
  const out: Snapshot = new Map();
  for (const [name, ls] of s) {
    const body = damage(name, dataLines(ls));
    out.set(name, [ls[0], ...body.slice(0, -1), body.at(-1)! + end]);
  }
  const dir = path.join(root, label);
  fs.rmSync(dir, { recursive: true, force: true });
  return writeSnapshot(dir, out);
}

t.test('a cut line and a truncated last line: refused (exit 1) without --force; with it, exit 2 and nothing a client can see changes', async (t) => {
  const s = readSnapshot(day0);
  const act = activityFile(s);
  const structure = column(s, 'Identifiant technique de la structure');
  const lines = dataLines(s.get(act)!);
  const structures = lines.map((l) => l.split('|')[structure]);
  // A line whose structure no other line names: with it rejected, the structure would be gone.
  const alone = structures.findIndex((id, i) => id && i < lines.length - 1 && structures.filter((x) => x === id).length === 1);
  t.ok(alone >= 0, 'a structure named by one line');
  const dir = damaged('cut', (name, ls) => {
    if (name !== act) return ls;
    const out = [...ls];
    out[alone] = out[alone].split('|').slice(0, 30).join('|');
    const last = out.at(-1)!;
    out[out.length - 1] = last.slice(0, Math.floor(last.length / 2));
    return out;
  }, '');
  const before = await storedResources(db);
  const since = new Date().toISOString();

  const refused = await importOk(t, dir, 1);
  const lastLine = lines.length + 1;
  t.match(refused.stderr, new RegExp(`import failed: ${dir}/${act}:${lastLine}: .*truncated.*--force.*Nothing was written\\.`), 'names the cut last line and --force');
  t.same(await feed(since), [], 'nothing in the feed');
  t.same(await storedResources(db), before, 'nothing written');

  const forced = await importOk(t, dir, 2, ['--force', '--workers', '2']);
  t.match(forced.stderr, `${dir}/${act}:${alone + 2}: 29 fields, expected`, 'the cut line is reported (its last field empty)');
  t.match(forced.stderr, `${dir}/${act}:${lastLine}: `, 'the truncated line is reported');
  t.match(forced.stdout, /^2 persons kept as they were/m, 'the summary says the persons are kept');
  t.same(await feed(since), [], '_lastUpdated=ge<before> is empty on all three types');
  t.same(await storedResources(db), before, 'nothing written');

  await importOk(t, day0);
  t.same(await feed(since), [], 'the good files again: nothing to write');
});

t.test('a line naming no person: nothing of the kinds its file feeds is deactivated, and the summary says so', async (t) => {
  const s = readSnapshot(day0);
  const act = activityFile(s);
  const idnps = column(s, 'Identification nationale PP');
  const lines = dataLines(s.get(act)!);
  const linesOf = new Map<string, number>();
  for (const ls of s.values()) for (const l of dataLines(ls)) linesOf.set(l.split('|')[idnps], (linesOf.get(l.split('|')[idnps]) ?? 0) + 1);
  // A person of one line in all three files: with that line unreadable, the person would be gone.
  const only = lines.findIndex((l) => linesOf.get(l.split('|')[idnps]) === 1);
  t.ok(only >= 0, 'a person of one line');
  // And an activity that really ends: a later line of a person whose earlier line has the same
  // profession and savoir-faire (the Practitioner stays the same), at a structure others name too.
  const structure = column(s, 'Identifiant technique de la structure');
  const f = lines.map((l) => l.split('|'));
  const named = new Map<string, number>();
  for (const x of f) named.set(x[structure], (named.get(x[structure]) ?? 0) + 1);
  const same = (a: string[], b: string[]) => [9, 11, 13, 15].every((i) => a[i] === b[i]);
  const ends = f.findIndex((x, i) => i !== only && x[structure] && named.get(x[structure])! > 1 &&
    f.some((y, j) => j < i && y[idnps] === x[idnps] && y[structure] !== x[structure] && same(x, y)));
  t.ok(ends >= 0, 'an activity that ends');
  const person = f[ends][idnps];
  const cutAndEnd = (name: string, ls: string[]) =>
    name === act ? ls.flatMap((l, i) => (i === ends ? [] : i === only ? [l.split('|').slice(0, 2).join('|')] : [l])) : ls;
  const dir = damaged('no-person', cutAndEnd);
  const before = await storedResources(db);
  const since = new Date().toISOString();
  const r = await importOk(t, dir, 2);
  t.match(r.stderr, `${dir}/${act}:${only + 2}: 2 fields, expected`);
  t.match(r.stdout, /^1 rejected line of PS_LibreAcces_Personne_activite names no person: no persons, structures or activities deactivated by this import$/m, 'one summary line');
  t.same(await feed(since), [], 'nothing in the feed, the activity that ended included');
  t.same(await storedResources(db), before, 'nothing written');

  // The next import without the unreadable line ends that activity, and only it.
  const clean = damaged('ended', (name, ls) => (name === act ? ls.filter((_, i) => i !== ends) : ls));
  await importOk(t, clean);
  const at = await lastRunStart();
  const written = await feed(at);
  t.equal(written.length, 1, `one resource written: ${written.join(', ')}`);
  const [role] = await searchAll(app, `/fhir/v2/PractitionerRole?_lastUpdated=ge${at}`);
  t.equal((role?.resource as any)?.active, false, 'the activity that ended, deactivated');
  t.equal((role?.resource as any)?.practitioner.reference, `Practitioner/${person}`);
});
