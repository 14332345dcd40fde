/**
 * `npm run import` stopped midway — its database sessions ended (a failover, an administrator) or
 * its process killed — in each phase of a first and of a daily import, then run again: it says in
 * one line what happened, and the rerun leaves the database a clean run leaves (resources' content
 * and versions, the state tables).
 */
import path from 'node:path';
import t from 'tap';
import { connectUrl } from '../src/db.ts';
import { generateOpenData } from '../src/generate/open-data-files.ts';
import { COPY_TABLES } from '../src/store/copy-encode.ts';
import { interruptWhen, keepState, testDatabase } from './helpers/db.ts';
import { canonical, importCli, storedResources, withoutVersion } from './helpers/import.ts';
import { tmpDir } from './helpers/open-data.ts';

const root = tmpDir(t, 'import-faults');
const [day0, day1] = [0, 1].map((day) => path.join(root, `day-${day}`));
for (const [day, outDir] of [day0, day1].entries()) await generateOpenData({ scale: 0.002, seed: 5, day, changeRate: 0.02, outDir, badShare: 0 });

const db = await testDatabase(t);
const admin = connectUrl(db.url, { max: 1 });
t.teardown(() => admin.end({ timeout: 1 }));

const TABLES = [...COPY_TABLES, 'value_count', 'import_person', 'import_structure', 'writer_run'];
/** An empty directory: no resource, no import state. */
const reset = () => db.sql.unsafe(`truncate ${TABLES.join(', ')}`);
/** The database a clean import of day 0 leaves, kept by the reference below. */
let toDay0: () => Promise<void>;

/** What a run must leave: every resource's content (lastUpdated aside: each run has its own) and version, and the state. */
async function snapshot() {
  const resources = [...(await storedResources(db))].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, r]) => [key, r.version, canonical(withoutVersion(r.content))]);
  const persons = await db.sql`select person, digest, roles, active from import_person order by person`;
  const structures = await db.sql`select structure, digest, active from import_structure order by structure`;
  return { resources: JSON.stringify(resources), persons: JSON.stringify(persons), structures: JSON.stringify(structures), count: resources.length };
}

async function imported(t: Tap, dir: string, ...args: string[]) {
  const r = await importCli(db, [...args, dir]);
  t.equal(r.code, 0, `npm run import -- ${args.join(' ')} ${path.basename(dir)}`, { stderr: r.stderr });
}
type Tap = Pick<typeof t, 'equal'>;

let afterDay0: Awaited<ReturnType<typeof snapshot>>;
let afterDay1: Awaited<ReturnType<typeof snapshot>>;
t.test('clean runs, the reference', async (t) => {
  await reset();
  await imported(t, day0);
  afterDay0 = await snapshot();
  toDay0 = await keepState(db.sql, TABLES);
  await imported(t, day1);
  afterDay1 = await snapshot();
  t.ok(afterDay0.count > 4000, `a clean first import: ${afterDay0.count} resources`);
  t.not(afterDay1.resources, afterDay0.resources, 'day 1 changes some');
});

const onResource = (table: string) => `exists (select 1 from pg_stat_progress_copy p join pg_class c on c.oid = p.relid where p.datname = current_database() and c.relname = '${table}')`;
const scenarios = [
  { name: 'first import, while its lines are staged', first: true, when: onResource('import_line') },
  { name: 'first import, while the bulk load streams its resources', first: true, when: onResource('resource') },
  { name: 'first import, while the bulk load builds its indexes', first: true, when: 'exists (select 1 from pg_stat_progress_create_index where datname = current_database())' },
  { name: 'daily import, once some batches are committed', first: false, when: 'exists (select 1 from resource where version_id > 1)', args: ['--batch-size', '20'] },
  { name: 'daily import killed (SIGKILL) once some batches are committed', first: false, kill: true, when: 'exists (select 1 from resource where version_id > 1)', args: ['--batch-size', '20'] },
];

for (const s of scenarios) {
  t.test(`${s.name}: one line, then the same command converges`, async (t) => {
    await (s.first ? reset() : toDay0());
    const dir = s.first ? day0 : day1;
    let pid = 0;
    const run = importCli(db, [...(s.args ?? []), dir], (p) => (pid = p));
    const { hit, result } = await interruptWhen(admin, s.when, run, s.kill ? () => process.kill(pid, 'SIGKILL') : undefined);
    t.ok(hit, 'stopped in that phase');
    if (s.kill) t.equal(result.code, null, 'killed (no exit code)');
    else {
      t.equal(result.code, 1, 'exit code 1', { stdout: result.stdout });
      // Off a terminal, an import says where it is every 10 s (src/cli/import-progress.ts): on a
      // slow machine such lines come before the fault, and the failure is one line after them.
      const lines = result.stderr.trim().split('\n').filter((l) => !/^import \d+\.\d s: /.test(l));
      t.equal(lines.length, 1, 'one line', { stderr: result.stderr });
      t.match(lines[0], /^import failed: the database went away or did not answer \(.*\)\. What was written is kept, .*run the same import again to finish it\.$/);
    }
    await imported(t, dir);
    t.same(await snapshot(), s.first ? afterDay0 : afterDay1, 'the database a clean run leaves');
    if (s.first) {
      await imported(t, day1);
      t.same(await snapshot(), afterDay1, 'and day 1 after it too');
    }
    const runs = await db.sql<{ outcome: string }[]>`select outcome from writer_run where kind = 'import' order by id`;
    // A killed process cannot say how it ended: its run stays 'running' (src/writer-runs.ts).
    t.same(runs.map((r) => r.outcome), [...(s.first ? [] : ['success']), s.kill ? 'running' : 'failure', 'success', ...(s.first ? ['success'] : [])], 'the stopped run is recorded as such');
  });
}

t.test('killed after the bulk commit, before the state was written: a rerun finds everything unchanged', async (t) => {
  await toDay0();
  // What a kill between the bulk load's commit and the state's leaves: resources, no state.
  await db.sql`truncate import_person, import_structure`;
  const r = await importCli(db, [day0]);
  t.equal(r.code, 0);
  t.match(r.stdout, /^persons: 0 new, 0 changed, 0 deactivated, [\d,]+ unchanged$/m, 'nothing written again');
  t.same(await snapshot(), afterDay0, 'the database a clean run leaves');
  await imported(t, day1);
  t.same(await snapshot(), afterDay1, 'and day 1 after it too');
});
