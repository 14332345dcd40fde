// The write path's updates rewrite only the index rows of the parameters whose rows changed. Every
// update here is checked against a full rewrite of the resource's index rows (the rows the registry
// extracts from the stored content), the oracle of the invariant in src/store/write.ts.

import t from 'tap';
import type { Db } from '../src/db.ts';
import { extractorFor } from '../src/fhir/extract.ts';
import { registry, type ResourceType } from '../src/registry/index.ts';
import { TokenSystems } from '../src/store/token-systems.ts';
import { preparePut } from '../src/load/prepare.ts';
import { encodeIndexRows } from '../src/store/copy-encode.ts';
import { deleteIndexRows, insertIndexRows, loaderTx, writeBatch, type WriteCounts } from '../src/store/write.ts';
import { testDatabase } from './helpers/db.ts';

const db = await testDatabase(t);
const sql = db.sql;
const systems = new TokenSystems();

const write = (values: Record<string, unknown>[]): Promise<WriteCounts> =>
  loaderTx(sql, (tx) => writeBatch(sql, registry, systems, values.map((v) => preparePut(registry, v)), tx));

/** A resource's index rows, every table, as comparable text. */
async function rowsOf(q: Db, rid: string): Promise<string[]> {
  const out = await Promise.all([
    q`select 'token' as t, param, s.uri as a, code as b from token_idx x left join token_system s on s.id = x.sys where rid = ${rid}`,
    q`select 'string' as t, param, norm as a, exact as b from string_idx where rid = ${rid}`,
    q`select 'date' as t, param, low::text as a, high::text as b from date_idx where rid = ${rid}`,
    q`select 'reference' as t, param, target_type as a, target_id as b from reference_idx where rid = ${rid}`,
  ]);
  return out.flat().map((r) => `${r.t} ${r.param} ${r.a} ${r.b}`).sort();
}

/** The rows a full rewrite gives the stored resource (computed in a transaction rolled back). */
async function fullRewrite(rid: string): Promise<string[]> {
  const [{ type, content }] = await sql<{ type: ResourceType; content: Record<string, unknown> }[]>`select type, content from resource where rid = ${rid}`;
  let rows: string[] = [];
  const rollback = new Error('rollback');
  await sql
    .begin(async (tx) => {
      await deleteIndexRows(tx, registry, [{ rid, type }]);
      const index = encodeIndexRows(extractorFor(registry, type)(content));
      await systems.intern(sql, index.systems);
      await insertIndexRows(tx, systems, [{ rid, index }]);
      rows = await rowsOf(tx, rid);
      throw rollback;
    })
    .catch((e) => {
      if (e !== rollback) throw e;
    });
  return rows;
}

const ridOf = async (type: string, id: string) => (await sql<{ rid: string }[]>`select rid from resource where type = ${type} and id = ${id}`)[0].rid;
const ctids = async (rid: string) =>
  (await sql<{ c: string }[]>`select ctid::text || param as c from string_idx where rid = ${rid} union all select ctid::text || param from token_idx where rid = ${rid}`)
    .map((r) => r.c)
    .sort();

const practitioner = (over: Record<string, unknown> = {}) => ({
  resourceType: 'Practitioner',
  id: 'p-write',
  meta: { lastUpdated: '2024-01-01T00:00:00Z' },
  identifier: [{ system: 'urn:oid:1.2.250.1.71.4.2.1', value: '810000000001' }, { system: 'https://rpps.esante.gouv.fr', value: '10000000001' }],
  active: true,
  name: [{ family: 'Martin', given: ['Anne', 'Marie'] }],
  ...over,
});

t.test('an update rewrites the rows of the parameters that changed, and only them', async (t) => {
  t.equal((await write([practitioner()])).inserted, 1);
  const rid = await ridOf('Practitioner', 'p-write');
  const before = await ctids(rid);

  // Nothing indexed changes but meta.lastUpdated: one date row is rewritten, nothing else.
  const c = await write([practitioner({ language: 'fr', meta: { lastUpdated: '2024-02-01T00:00:00Z' } })]);
  t.same([c.updated, c.indexRows], [1, 1]);
  t.same(await ctids(rid), before, 'token and string rows of unchanged parameters stay where they were');
  t.same(await rowsOf(sql, rid), await fullRewrite(rid));

  const steps: [string, Record<string, unknown>][] = [
    ['a family name changed, a given name added', { name: [{ family: 'Martin-Durand', given: ['Anne', 'Marie', 'Lou'] }] }],
    ['an identifier of another system, one removed', { identifier: [{ system: 'urn:oid:1.2.250.1.213.1.4.8', value: '810000000001' }] }],
    ['every name removed', { name: undefined, active: false }],
    ['names back, identifiers gone', { name: [{ family: 'Martin', given: ['Anne'] }], identifier: undefined }],
    ['a value repeated', { name: [{ family: 'Martin' }, { family: 'Martin' }] }],
  ];
  let day = 2;
  for (const [what, over] of steps) {
    const counts = await write([practitioner({ ...over, meta: { lastUpdated: `2024-03-0${day++}T00:00:00Z` } })]);
    t.equal(counts.updated, 1, what);
    t.same(await rowsOf(sql, rid), await fullRewrite(rid), what);
  }
});

t.test('references and tokens of a PractitionerRole, several resources in one batch', async (t) => {
  const role = (id: string, org: string, code: string) => ({
    resourceType: 'PractitionerRole',
    id,
    meta: { lastUpdated: '2024-01-01T00:00:00Z' },
    practitioner: { reference: 'Practitioner/p-write' },
    organization: { reference: `Organization/${org}` },
    code: [{ coding: [{ system: 'https://mos.esante.gouv.fr/NOS/TRE_G15-ProfessionSante/FHIR/TRE-G15-ProfessionSante', code }] }],
  });
  await write([role('r1', 'o1', '10'), role('r2', 'o1', '10')]);
  const counts = await write([role('r1', 'o2', '10'), role('r2', 'o1', '21'), role('r3', 'o3', '40')]);
  t.same([counts.inserted, counts.updated], [1, 2]);
  for (const id of ['r1', 'r2', 'r3']) {
    const rid = await ridOf('PractitionerRole', id);
    t.same(await rowsOf(sql, rid), await fullRewrite(rid), id);
  }
});

t.test('a resource changed by another transaction while the update waited is rewritten whole', async (t) => {
  const other = db.sql;
  const rid = await ridOf('Practitioner', 'p-write');
  // The other transaction changes the identifiers and holds the row; this update, which keeps the
  // identifiers its snapshot sees, takes that snapshot, then waits for the lock.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const locked = new Promise<void>((resolve, reject) => {
    loaderTx(other, async (tx) => {
      await writeBatch(other, registry, systems, [preparePut(registry, practitioner({ identifier: [{ system: 'urn:example:other', value: 'concurrent' }], meta: { lastUpdated: '2024-05-01T00:00:00Z' } }))], tx);
      resolve();
      await held;
    }).catch(reject);
  });
  await locked;
  const waiting = write([practitioner({ name: [{ family: 'Last', given: ['Writer'] }], meta: { lastUpdated: '2024-06-01T00:00:00Z' } })]);
  let waited = false;
  for (let i = 0; i < 100 && !waited; i++) {
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`;
    waited = n > 0;
    if (!waited) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(waited, 'the update waited for the row the other transaction held');
  release();
  t.equal((await waiting).updated, 1);
  const [{ family }] = await sql<{ family: string }[]>`select content #>> '{name,0,family}' as family from resource where rid = ${rid}`;
  t.equal(family, 'Last');
  t.same(await rowsOf(sql, rid), await fullRewrite(rid), 'no row of the concurrent version is left');
});
