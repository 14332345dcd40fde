/**
 * `npm run import` day after day on generated extracts: each import is the directory as of its
 * files. Against an oracle that maps each day's lines in memory (tests/helpers/import.ts
 * directoryOf): unchanged resources keep their version and lastUpdated, changed ones get a new
 * version as of the run, absent ones become inactive, returning ones active again, and a client
 * polling `_lastUpdated=ge<run start>` sees exactly those. Then the 5 % guard and --force.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { testApp } from './helpers/app.ts';
import { canonical, directoryOf, importCli, searchRefs, storedResources, withoutVersion } from './helpers/import.ts';
import { collect, tmpDir } from './helpers/open-data.ts';
import { API_KEY } from './helpers/search.ts';

const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY } });
const root = tmpDir(t, 'import-days');
/** A high change rate, so that three days have persons that leave, miss a day and come back (hence --force). */
const days = [0, 1, 2].map((day) => path.join(root, `day-${day}`));
for (const [day, outDir] of days.entries()) {
  await generateOpenData({ scale: 0.002, seed: 11, day, changeRate: 0.25, outDir, badShare: 0 });
}
const TYPES = ['Practitioner', 'Organization', 'PractitionerRole'];

async function lastRun() {
  const [run] = await db.sql<{ started_at: Date; outcome: string; counts: Record<string, any> }[]>`
    select started_at, outcome, detail as counts from writer_run where kind = 'import' order by id desc limit 1`;
  return run;
}

t.test('three days: versions, lastUpdated, active and the _lastUpdated window are exactly what changed', async (t) => {
  for (const [day, dir] of days.entries()) {
    const { records, rejects } = await collect([dir]);
    t.same(rejects, [], `day ${day}: the generated lines are all good`);
    const expected = directoryOf(records);
    const before = await storedResources(db);
    const run = await importCli(db, day === 0 ? [dir] : ['--force', dir]);
    t.equal(run.code, 0, `day ${day}: exit code 0`, { stderr: run.stderr });
    const { started_at: started, outcome } = await lastRun();
    t.equal(outcome, 'success');
    const at = started.toISOString();
    const after = await storedResources(db);

    const want = { new: [] as string[], changed: [] as string[], back: [] as string[], gone: [] as string[], unchanged: [] as string[] };
    for (const [key, resource] of expected) {
      const was = before.get(key);
      if (!was) want.new.push(key);
      else if (JSON.stringify(canonical(withoutVersion(was.content))) === JSON.stringify(canonical(resource))) want.unchanged.push(key);
      else (was.content.active === false ? want.back : want.changed).push(key);
    }
    for (const [key, was] of before) {
      if (expected.has(key)) continue;
      (was.content.active === false ? want.unchanged : want.gone).push(key);
    }
    if (day > 0) {
      for (const k of ['new', 'changed', 'gone', 'unchanged'] as const) t.ok(want[k].length > 0, `day ${day}: some ${k} (${want[k].length})`);
    }
    // Persons who missed day 1 are back on day 2.
    if (day === 2) t.ok(want.back.filter((k) => k.startsWith('Practitioner/')).length > 0, `day 2: persons back (${want.back.length} resources)`);

    const wrong: string[] = [];
    const check = (key: string, ok: boolean, why: string) => ok || wrong.push(`${key}: ${why}`);
    for (const key of [...want.new, ...want.changed, ...want.back]) {
      const now = after.get(key);
      check(key, now !== undefined, 'not stored');
      if (!now) continue;
      check(key, JSON.stringify(canonical(withoutVersion(now.content))) === JSON.stringify(canonical(expected.get(key))), 'content is not the mapped lines');
      check(key, now.version === (before.get(key)?.version ?? 0) + 1 && now.content.meta.versionId === String(now.version), `version ${now.version}`);
      check(key, now.lastUpdated === at && now.content.meta.lastUpdated === at, `lastUpdated ${now.lastUpdated}, run ${at}`);
    }
    for (const key of want.unchanged) {
      check(key, JSON.stringify(after.get(key)) === JSON.stringify(before.get(key)), 'an unchanged resource was written');
    }
    for (const key of want.gone) {
      const was = before.get(key)!;
      const now = after.get(key)!;
      check(key, now.content.active === false && now.version === was.version + 1 && now.lastUpdated === at, 'not deactivated as of the run');
      check(key, JSON.stringify(canonical(withoutVersion(now.content))) === JSON.stringify(canonical({ ...withoutVersion(was.content), active: false })), 'more than active changed');
    }
    t.same(wrong.slice(0, 20), [], `day ${day}: ${want.new.length} new, ${want.changed.length} changed, ${want.back.length} back, ${want.gone.length} gone, ${want.unchanged.length} unchanged`);
    t.equal(after.size, new Set([...before.keys(), ...expected.keys()]).size, 'nothing else is stored, nothing deleted');

    // What a client polling since the run's start gets: exactly what this run wrote.
    const written = [...want.new, ...want.changed, ...want.back, ...want.gone];
    for (const type of TYPES) {
      t.same(await searchRefs(app, `/fhir/v2/${type}?_lastUpdated=ge${at}`), written.filter((k) => k.startsWith(`${type}/`)).sort(), `${type}?_lastUpdated=ge<run start>`);
    }
    const inactive = [...after].filter(([, r]) => r.content.active === false).map(([k]) => k);
    for (const type of TYPES) {
      t.same(await searchRefs(app, `/fhir/v2/${type}?active=false`), inactive.filter((k) => k.startsWith(`${type}/`)).sort(), `${type}?active=false`);
    }
  }
});

t.test('a truncated Personne_activite is refused, naming --force, and nothing is written; --force imports it', async (t) => {
  const dir = tmpDir(t, 'import-truncated');
  for (const name of fs.readdirSync(days[2])) {
    let text = fs.readFileSync(path.join(days[2], name), 'latin1');
    // Cut after a whole line: a file cut inside one is refused on its own (tests/import-feed.test.ts).
    if (name.includes('Personne_activite')) text = text.slice(0, text.lastIndexOf('\n', Math.floor(text.length * 0.8)) + 1);
    fs.writeFileSync(path.join(dir, name), text, 'latin1');
  }
  const before = await storedResources(db);
  const state = async () => db.sql`select person, digest, roles, active from import_person order by person`;
  const stateBefore = await state();
  const refused = await importCli(db, [dir]);
  t.equal(refused.code, 1, 'exit code 1');
  const lines = refused.stderr.trim().split('\n');
  t.match(lines.at(-1)!, /^import refused: this snapshot would deactivate \d+ of \d+ persons \([\d.]+ %\), .*\d+ of \d+ activities .*--force\.$/, 'one line naming --force');
  t.same(await storedResources(db), before, 'no resource written');
  t.same(await state(), stateBefore, 'the state unchanged');
  const last = await lastRun();
  t.equal(last.outcome, 'failure', 'the run is recorded as a failure');
  t.equal(last.counts.refused, true, 'refused');

  const forced = await importCli(db, ['--force', dir]);
  t.equal(forced.code, 0, '--force imports it', { stderr: forced.stderr });
  const { records } = await collect([dir]);
  const expected = directoryOf(records.filter((r) => r.fields.idnps !== ''));
  const after = await storedResources(db);
  const activeNow = [...after].filter(([, r]) => r.content.active !== false).map(([k]) => k).sort();
  t.same(activeNow, [...expected.keys()].sort(), 'what the truncated extract holds is active, the rest inactive');
  t.match(forced.stdout, /^activities: 0 new, 0 changed, [1-9][\d,]* deactivated, [\d,]+ unchanged$/m, 'the summary counts the deactivated activities');
});
