import t0, { test } from 'tap';
import postgres from 'postgres';
import type { Sql } from '../src/db.ts';
import { tryLock, withSessionLock } from '../src/load/session-lock.ts';
import { testDatabase } from './helpers/db.ts';

const KEY = 724099;
const db = await testDatabase(t0);

/** A pool of one connection: a connection not given back makes the next query wait forever. */
async function onePool(t: Parameters<typeof testDatabase>[0], url = db.url): Promise<Sql> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 5 }));
  return sql as unknown as Sql;
}

const answers = (sql: Sql) =>
  Promise.race([sql`select 1 as one`.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);

test('session lock: one holder at a time; released, it can be taken again', async (t) => {
  const a = await tryLock(db.sql, KEY);
  t.ok(a, 'taken');
  t.equal(await tryLock(db.sql, KEY), undefined, 'another session is refused');
  await a!.release();
  const b = await tryLock(db.sql, KEY);
  t.ok(b, 'taken again once released');
  await b!.release();
  t.equal(await withSessionLock(db.sql, KEY, async () => 'done', () => 'busy'), 'done');
  const c = await tryLock(db.sql, KEY);
  t.equal(await withSessionLock(db.sql, KEY, async () => 'done', () => 'busy'), 'busy');
  await c!.release();
});

test('session lock: the connection goes back to the pool when the lock query throws', async (t) => {
  const sql = await onePool(t);
  const bad = 'not a number' as unknown as number;
  await t.rejects(tryLock(sql, bad), /invalid input syntax|bigint/);
  t.ok(await answers(sql), 'the pool of one still answers');
  await t.rejects(withSessionLock(sql, bad, async () => 1, () => 0));
  t.ok(await answers(sql), 'again through withSessionLock');
});

test('session lock: a failing job is thrown, the lock and the connection given back', async (t) => {
  const sql = await onePool(t);
  await t.rejects(withSessionLock(sql, KEY, async (conn) => conn`select * from no_such_table`, () => undefined), /no_such_table/);
  t.ok(await answers(sql), 'the pool of one still answers');
  const again = await tryLock(db.sql, KEY);
  t.ok(again, 'the lock is free');
  await again!.release();
});
