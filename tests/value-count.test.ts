import t from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Database, Db } from '../src/db.ts';
import { generate } from '../src/generate/index.ts';
import { testDatabase } from './helpers/db.ts';
import { load, testApp } from './helpers/app.ts';

/**
 * The counts per value that the write path keeps (value_count, sql/012) are those the index tables
 * hold, whatever wrote them: a bulk load (counted by the loader), incremental loads, updates,
 * deletions, concurrent writers. "Those the index tables hold" is rebuild_value_counts(), computed
 * from the tables alone.
 */
class Rollback extends Error {}

type Row = { param: number; key: string; n: number };
const folded = (db: Db) => db<Row[]>`select param, key, sum(n)::int as n from value_count group by 1, 2 having sum(n) <> 0 order by 1, 2`;

async function rebuilt(db: Database): Promise<Row[]> {
  let rows: Row[] = [];
  await db.sql
    .begin(async (tx) => {
      await tx`select rebuild_value_counts()`;
      rows = await folded(tx);
      throw new Rollback();
    })
    .catch((err) => {
      if (!(err instanceof Rollback)) throw err;
    });
  return rows;
}

async function same(t: { same(a: unknown, b: unknown, message: string): unknown }, db: Database, label: string): Promise<Row[]> {
  const kept = await folded(db.sql);
  t.same(kept, await rebuilt(db), label);
  return kept;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'value-count-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await generate({ scale: 0.002, seed: 5, outDir: path.join(dir, 'data') });
const lines = async (file: string) => (await readFile(path.join(dir, 'data', file), 'utf8')).split('\n').filter(Boolean);
const practitioners = (await lines('Practitioner.ndjson')).map((l) => JSON.parse(l) as Record<string, unknown> & { id: string });
// An id that comes again, changed, in the same input; a deletion.
await writeFile(path.join(dir, 'data', 'zz-again.ndjson'), JSON.stringify({ ...practitioners[0], name: [{ family: 'Zorro', given: ['Diego'] }], active: false }));
await writeFile(path.join(dir, 'data', 'zz-delete.json'), JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [{ request: { method: 'DELETE', url: `Practitioner/${practitioners[1].id}` } }] }));

t.test('a bulk load counts what it copies; an incremental load of the same input counts alike', async (t) => {
  const bulk = await testDatabase(t);
  t.same((await load(bulk, [path.join(dir, 'data')], { bulk: true })).rejects, []);
  const bulkCounts = await same(t, bulk, 'bulk: the counts are the index tables’');
  t.ok(bulkCounts.length > 500, `many values counted (${bulkCounts.length})`);
  const incremental = await testDatabase(t);
  await load(incremental, [path.join(dir, 'data')]);
  t.same(await same(t, incremental, 'incremental: the counts are the index tables’'), bulkCounts, 'both loads keep the same counts');
});

t.test('updates, deletions and concurrent writers keep the counts exact', async (t) => {
  const db = await testDatabase(t);
  await load(db, [path.join(dir, 'data')]);
  const changed = practitioners.slice(2, 80).map((p, i) => ({
    ...p,
    meta: { lastUpdated: `2026-0${1 + (i % 9)}-1${i % 10}T10:00:00Z` },
    active: i % 2 === 0,
    name: i % 3 ? [{ family: `Nouveau${i % 7}`, given: ['Jean', 'Pierre'] }] : undefined,
    qualification: i % 4 ? undefined : [{ code: { coding: [{ system: 'https://example.org/q', code: `Q${i % 5}` }] } }],
  }));
  await writeFile(path.join(dir, 'changed.ndjson'), changed.map((r) => JSON.stringify(r)).join('\n'));
  await load(db, [path.join(dir, 'changed.ndjson')]);
  await same(t, db, 'after updates');
  const deletions = { resourceType: 'Bundle', type: 'batch', entry: practitioners.slice(80, 120).map((p) => ({ request: { method: 'DELETE', url: `Practitioner/${p.id}` } })) };
  await writeFile(path.join(dir, 'deletions.json'), JSON.stringify(deletions));
  await load(db, [path.join(dir, 'deletions.json')]);
  await same(t, db, 'after deletions');
  // Two loads at once, writing the same resources and values, in batches of 7.
  const a = practitioners.slice(120, 220).map((p) => ({ ...p, active: false, name: [{ family: 'Concurrent', given: ['A'] }] }));
  const b = practitioners.slice(150, 250).map((p) => ({ ...p, active: true, name: [{ family: 'Concurrent', given: ['B'] }] }));
  await writeFile(path.join(dir, 'a.ndjson'), a.map((r) => JSON.stringify(r)).join('\n'));
  await writeFile(path.join(dir, 'b.ndjson'), b.map((r) => JSON.stringify(r)).join('\n'));
  await Promise.all([load(db, [path.join(dir, 'a.ndjson')], { batchSize: 7 }), load(db, [path.join(dir, 'b.ndjson')], { batchSize: 7 })]);
  const before = await same(t, db, 'after concurrent loads');
  const rows = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from value_count`)[0].n;
  t.equal(await rows(), before.length, 'a load ends with one row per value (compacted)');
  const [{ param, key }] = before;
  await db.sql`insert into value_count (param, key, n) values (${param}, ${key}, 2), (${param}, ${key}, -2), (${param}, 'p:nothing', 1), (${param}, 'p:nothing', -1)`;
  await db.sql`select compact_value_counts()`;
  t.same(await folded(db.sql), before, 'compacting keeps every count');
  t.equal(await rows(), before.length, 'and folds the rows of a value into one, dropping values that count nothing');
});

t.test('two compactions at once leave one row per value', async (t) => {
  const db = await testDatabase(t);
  const key = 'p:race';
  const rowsOf = async () => (await db.sql<{ n: number }[]>`select n::int as n from value_count where param = 1 and key = ${key}`).map((r) => r.n);
  await db.sql`insert into value_count (param, key, n) values (1, ${key}, 1), (1, ${key}, 1)`;
  let second: Promise<unknown> | undefined;
  await db.sql.begin(async (tx) => {
    await tx`select compact_value_counts()`;
    // Written while the first compaction is not yet committed, and folded by the second.
    await db.sql`insert into value_count (param, key, n) values (1, ${key}, 1)`;
    second = db.sql`select compact_value_counts()`.execute();
    for (let i = 0; i < 100; i++) {
      const [{ waiting }] = await db.sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%compact_value_counts%'`;
      if (waiting > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  await second;
  t.same(await rowsOf(), [3], 'one row holding every count');
});

t.test('the first page of a one-value search carries its total from the counts, without counting', async (t) => {
  const { app, db } = await testApp(t, { env: { API_KEYS: 'value-count-key-0123456789', TOTAL_BUDGET_MS: '0' } });
  await load(db, [path.join(dir, 'data')], { bulk: true });
  const total = async (q: string) =>
    ((await app.inject({ method: 'GET', url: `/fhir/v2/${q}`, headers: { 'SERVICE-API-KEY': 'value-count-key-0123456789' } })).json() as { total?: number }).total;
  const active = practitioners.filter((p) => p.active === true && p.id !== practitioners[1].id && p.id !== practitioners[0].id).length;
  t.equal(await total('Practitioner?active=true'), active, 'active=true: every active practitioner');
  t.equal(await total('Practitioner'), practitioners.length - 1, 'a type: its resources (one was deleted)');
  t.type(await total('Practitioner?family=m'), 'number', 'a one-letter prefix has its total');
  t.type(await total('Practitioner?_lastUpdated=ge2020-01-01'), 'number', 'a range of whole days has its total');
  t.equal(await total('Practitioner?_lastUpdated=ge2000-01-01&_lastUpdated=lt2100-01-01'), practitioners.length - 1, 'so does a range given by both ends');
  // From the first day of the practitioners to the day after the 300th: more matches than a page holds.
  const [{ from, to, n }] = await db.sql<{ from: string; to: string; n: number }[]>`
    with b as (select min(last_updated at time zone 'UTC')::date as lo, (select (last_updated at time zone 'UTC')::date + 1 from resource where type = 'Practitioner' order by last_updated offset 300 limit 1) as hi
               from resource where type = 'Practitioner')
    select to_char(lo, 'YYYY-MM-DD') as from, to_char(hi, 'YYYY-MM-DD') as to,
      (select count(*)::int from resource where type = 'Practitioner' and last_updated at time zone 'UTC' >= b.lo and last_updated at time zone 'UTC' < b.hi) as n from b`;
  t.ok(n > 50 && n < practitioners.length - 1, `${n} practitioners from ${from} to ${to}`);
  t.equal(await total(`Practitioner?_lastUpdated=ge${from}&_lastUpdated=lt${to}&_lastUpdated=ge1999-01-01`), n, 'and the days several ranges share');
  t.equal(await total('Practitioner?_lastUpdated=ge2020-01-01T00:00:00.5Z'), undefined, 'an instant that is not a whole day: counted, and the budget is 0');
  t.equal(await total('Practitioner?family=ma&active=true'), undefined, 'two conditions: counted, and the budget is 0');
});
