import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectUrl } from '../src/db.ts';
import { generate } from '../src/generate/index.ts';
import { loaderCli } from './helpers/app.ts';
import { interruptWhen, testDatabase } from './helpers/db.ts';

/**
 * The loader CLI when the database ends its sessions in the middle of a load (a failover, an
 * administrator, a restart): it stops with one line saying what happened, what is stored and what
 * to run, never a stack trace, and running what it says gives the database a clean load gives.
 */
const dir = await mkdtemp(path.join(os.tmpdir(), 'loader-faults-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await generate({ scale: 0.005, seed: 7, outDir: dir });

const db = await testDatabase(t);
const admin = connectUrl(db.url, { max: 1 });
t.teardown(() => admin.end({ timeout: 1 }));
const TABLES = ['resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx'];
const empty = () => db.sql.unsafe(`truncate ${TABLES.join(', ')}`);

/** Rows of each table, and a digest of the stored resources. */
async function stored() {
  const counts: Record<string, number> = {};
  for (const table of TABLES) counts[table] = (await db.sql.unsafe(`select count(*)::int as n from ${table}`))[0].n as number;
  const [{ h }] = await db.sql`select md5(string_agg(type || '/' || id || '/' || content::text, ',' order by type, id)) as h from resource`;
  return { counts, h };
}

const interrupt = <T>(when: string, run: Promise<T>) => interruptWhen(admin, when, run);

const scenarios = [
  {
    name: 'bulk, while its rows stream in',
    args: ['--bulk'],
    when: 'exists (select 1 from pg_stat_progress_copy where datname = current_database() and tuples_processed > 0)',
    says: /Nothing of the bulk load is kept: run the same command again\.$/,
    then: ['--bulk'],
  },
  {
    name: 'bulk, while its indexes are built',
    args: ['--bulk'],
    when: 'exists (select 1 from pg_stat_progress_create_index where datname = current_database())',
    says: /Every row of the bulk load was stored before it failed: run the same files again without --bulk to finish it\.$/,
    then: [],
  },
  {
    name: 'incremental, once batches are written',
    args: [],
    when: 'exists (select 1 from resource)',
    says: /The batches written are kept: run the same command again to finish/,
    then: [],
  },
];

t.test('sessions ended during a load', async (t) => {
  const clean = await loaderCli(db, ['--bulk', dir]);
  t.equal(clean.code, 0, 'a clean bulk load', { stderr: clean.stderr });
  const expected = await stored();
  t.ok(expected.counts.resource > 10_000, `${expected.counts.resource} resources`);

  for (const s of scenarios) {
    t.test(`${s.name}: one clear line, then what it says finishes the load`, async (t) => {
      await empty();
      const { hit, result: r } = await interrupt(s.when, loaderCli(db, [...s.args, dir]));
      t.ok(hit, 'the sessions were ended in that phase');
      t.equal(r.code, 1, 'exit code 1');
      const lines = r.stderr.trim().split('\n');
      t.equal(lines.length, 1, 'one line', { stderr: r.stderr });
      t.match(lines[0], /^load failed: the database went away or did not answer \(/, 'naming the cause');
      t.match(lines[0], s.says, 'what is stored and what to run');
      const again = await loaderCli(db, [...s.then, dir]);
      t.equal(again.code, 0, `then \`npm run load -- ${[...s.then, '<files>'].join(' ')}\` succeeds`, { stderr: again.stderr });
      t.same(await stored(), expected, 'and the database holds what a clean load gives');
    });
  }
});
