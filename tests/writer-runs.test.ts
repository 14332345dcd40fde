/**
 * A run's outcome is recorded even when the database went away for a moment as the run ended (the
 * usual reason it failed); an error that is not the database's absence is not tried again.
 */
import t from 'tap';
import type { Sql } from '../src/db.ts';
import { startRun } from '../src/writer-runs.ts';

/** A stand-in for postgres.js's tag: the insert answers an id; each update throws the next of `failures`, then succeeds. */
function database(failures: unknown[]) {
  const updates: string[] = [];
  const sql = Object.assign(
    async (strings: TemplateStringsArray) => {
      const text = strings.join('?');
      if (text.includes('insert into writer_run')) return [{ id: '1' }];
      updates.push(text);
      const failure = failures.shift();
      if (failure) throw failure;
      return [];
    },
    { json: (value: unknown) => value },
  );
  return { sql: sql as unknown as Sql, updates };
}

t.test('the outcome is tried again while the database comes back', async (t) => {
  const { sql, updates } = database([Object.assign(new Error('terminating connection'), { code: '57P01' }), Object.assign(new Error('closed'), { code: 'CONNECTION_CLOSED' })]);
  const run = await startRun(sql, 'import', {}, new Date());
  await run.finish('failure');
  t.equal(updates.length, 3, 'two failed tries, then the one that records it');
});

t.test('a database gone for longer leaves the run running, and finish does not throw', async (t) => {
  const gone = Array.from({ length: 20 }, () => Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
  const { sql, updates } = database(gone);
  const run = await startRun(sql, 'load', {}, new Date());
  await t.resolves(run.finish('failure'));
  t.equal(updates.length, 8, 'eight tries, over 6.35 s');
});

t.test('an error that is not the database going away is not tried again', async (t) => {
  const { sql, updates } = database([new Error('a bug')]);
  const run = await startRun(sql, 'sync', {}, new Date());
  await t.resolves(run.finish('success'));
  t.equal(updates.length, 1);
});
