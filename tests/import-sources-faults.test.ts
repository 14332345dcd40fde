/**
 * An import of the three sources (RPPS, FINESS, MSSanté) stopped midway — its sessions ended, or its
 * process killed — then run again: the rerun leaves what a clean run leaves, resources and the state
 * of every source (mailboxes whose owners an interrupted run had not rewritten included).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { connectUrl } from '../src/db.ts';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { COPY_TABLES } from '../src/store/copy-encode.ts';
import { interruptWhen, keepState, testDatabase } from './helpers/db.ts';
import { canonical, importCli, storedResources, withoutVersion } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';

const root = tmpDir(t, 'import-sources-faults');
const [day0, day1] = [0, 1].map((day) => path.join(root, `day-${day}`));
for (const [day, outDir] of [day0, day1].entries()) {
  await generateOpenData({ scale: 0.002, seed: 9, day, changeRate: 0.05, outDir, badShare: 0, sources: ['rpps', 'finess', 'mss'] });
}

// Day 0's RPPS and FINESS files with day 1's mailboxes: a day whose only changes are mailboxes.
const mailboxDay = path.join(root, 'mailbox-day');
fs.mkdirSync(mailboxDay);
for (const [dir, keep] of [[day0, (n: string) => !n.startsWith('Extraction')], [day1, (n: string) => n.startsWith('Extraction')]] as const) {
  for (const n of fs.readdirSync(dir).filter(keep)) fs.copyFileSync(path.join(dir, n), path.join(mailboxDay, n));
}

// Day 0's files but a feed where a few establishments the RPPS lines name lose or gain their point:
// a day that changes Locations and the roles at them. The model's establishments come first, one legal entity each.
const locatedDay = path.join(root, 'located-day');
fs.mkdirSync(locatedDay);
for (const n of fs.readdirSync(day0)) {
  if (!n.startsWith('finess-structures')) {
    fs.copyFileSync(path.join(day0, n), path.join(locatedDay, n));
    continue;
  }
  const feed = JSON.parse(gunzipSync(fs.readFileSync(path.join(day0, n))).toString('utf8'));
  const geographic = feed.pmej.slice(0, 40).map((p: any) => p.ege[0].adresse.find((a: any) => a.usageAdresse === '03'));
  for (const a of geographic.filter((a: any) => a.coordonneesGeographique).slice(0, 3)) a.coordonneesGeographique = null;
  for (const a of geographic.filter((a: any) => !a.coordonneesGeographique).slice(3, 6)) {
    a.coordonneesGeographique = { coordonneeX: '2.35', coordonneeY: '48.85', directionLatitude: '6862000', directionLongitude: '652000', cleInInteropBAN: '75056_1234', scoreBAN: '0.9' };
  }
  fs.writeFileSync(path.join(locatedDay, n), gzipSync(JSON.stringify(feed)));
}

const db = await testDatabase(t);
const admin = connectUrl(db.url, { max: 1 });
t.teardown(() => admin.end({ timeout: 1 }));

const STATE = ['import_person', 'import_structure', 'import_finess', 'import_mailbox', 'import_pending'];
const TABLES = [...COPY_TABLES, 'value_count', ...STATE, 'writer_run'];
const reset = () => db.sql.unsafe(`truncate ${TABLES.join(', ')}`);
/** The database a clean import of day 0 leaves, kept by the reference below. */
let toDay0: () => Promise<void>;

async function snapshot() {
  const resources = [...(await storedResources(db))].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, r]) => [key, r.version, canonical(withoutVersion(r.content))]);
  const state = await db.sql`
    select (select json_agg(x order by x.person) from (select person, digest, roles, active from import_person) x) as persons,
           (select json_agg(x order by x.structure) from (select structure, digest, fields, active from import_structure) x) as structures,
           (select json_agg(x order by x.org) from (select org, digest, active from import_finess) x) as finess,
           (select json_agg(x order by x.digest) from (select digest, person, structure from import_mailbox) x) as mailboxes,
           (select count(*)::int from import_pending) as pending`;
  return { resources: JSON.stringify(resources), state: JSON.stringify(state), count: resources.length };
}

type Tap = Pick<typeof t, 'ok'>;
async function imported(t: Tap, dir: string, ...args: string[]) {
  const r = await importCli(db, [...args, dir]);
  t.ok(r.code === 0 || r.code === 2, `npm run import -- ${args.join(' ')} ${path.basename(dir)} (exit ${r.code})`, { stderr: r.stderr });
}

let afterDay1: Awaited<ReturnType<typeof snapshot>>;
let afterMailboxDay: Awaited<ReturnType<typeof snapshot>>;
let afterLocatedDay: Awaited<ReturnType<typeof snapshot>>;
t.test('clean runs, the reference', async (t) => {
  await reset();
  await imported(t, day0);
  const afterDay0 = await snapshot();
  toDay0 = await keepState(db.sql, TABLES);
  await imported(t, day1);
  afterDay1 = await snapshot();
  t.not(afterDay1.resources, afterDay0.resources, 'day 1 changes some');
  t.match(afterDay1.resources, /"Location\/[^"]+",2,/, 'some Location among them');
  t.match(afterDay1.state, /"pending":0/, 'nothing pending after a run');
  await toDay0();
  t.same(await snapshot(), afterDay0, 'day 0 kept');
  await imported(t, mailboxDay);
  afterMailboxDay = await snapshot();
  t.not(afterMailboxDay.resources, afterDay0.resources, 'a day of mailboxes alone changes resources');
  await toDay0();
  await imported(t, locatedDay);
  afterLocatedDay = await snapshot();
  t.match(afterLocatedDay.resources, /"PractitionerRole\/[^"]+",2,/, 'a day of points lost and gained gives roles a new version');
});

const versioned = 'exists (select 1 from resource where version_id > 1)';
// Right after the mailbox state became the new extract's (its count moved from day 0's), before the resources it changes are rewritten.
const mailboxState = 'mailbox state';
for (const s of [
  { name: 'daily import, its sessions ended once some batches are committed', kill: false, when: versioned },
  { name: 'daily import killed (SIGKILL) once some batches are committed', kill: true, when: versioned },
  { name: 'daily import killed (SIGKILL) once the new mailboxes are the state', kill: true, when: mailboxState },
  // The Locations are written with their establishments, before the roles that follow them.
  { name: 'daily import killed (SIGKILL) once a Location has its new version', kill: true, when: "exists (select 1 from resource where type = 'Location' and version_id > 1)" },
  { name: 'a day of mailboxes alone killed (SIGKILL) once they are the state', kill: true, when: mailboxState, dir: mailboxDay },
  {
    name: 'a day of points lost and gained killed (SIGKILL) once a Location has its new version, before its roles', kill: true, dir: locatedDay,
    when: "exists (select 1 from resource where type = 'Location' and version_id > 1) and not exists (select 1 from resource where type = 'PractitionerRole' and version_id > 1)",
  },
]) {
  t.test(`${s.name}: the same command converges`, async (t) => {
    await toDay0();
    let pid = 0;
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from import_mailbox`;
    const dir = s.dir ?? day1;
    const run = importCli(db, ['--batch-size', '20', dir], (p) => (pid = p));
    const when = s.when === mailboxState ? `(select count(*) from import_mailbox) <> ${n}` : s.when;
    const { hit, result } = await interruptWhen(admin, when, run, s.kill ? () => process.kill(pid, 'SIGKILL') : undefined);
    t.ok(hit, 'stopped in that phase');
    t.equal(result.code, s.kill ? null : 1, s.kill ? 'killed (no exit code)' : 'exit code 1', { stdout: result.stdout });
    if (dir === locatedDay) {
      const [{ n: pending }] = await db.sql<{ n: number }[]>`select count(*)::int as n from import_pending where kind = 'location'`;
      t.ok(pending > 0, `killed with ${pending} establishments whose roles are still to rewrite`);
    }
    await imported(t, dir);
    t.same(await snapshot(), dir === day1 ? afterDay1 : dir === mailboxDay ? afterMailboxDay : afterLocatedDay, 'the database a clean run leaves');
  });
}
