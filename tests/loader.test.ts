import t from 'tap';
import type postgres from 'postgres';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../src/db.ts';
import { FIXTURES, load } from './helpers/app.ts';
import { testDatabase } from './helpers/db.ts';
import { BulkCopies, buildMemory, failBulk, finishInterruptedBulk, rowsCommitted, startBulk } from '../src/load/bulk.ts';
import { connectUrl } from '../src/db.ts';
import { LOADER_CONNECTIONS, loadFiles, loaderConnections } from '../src/load/loader.ts';
import { registry } from '../src/registry/index.ts';
import { COPY_TABLES, CopyEncoder } from '../src/store/copy-encode.ts';
import { prepareResource } from '../src/fhir/resource.ts';

/** The loader on a real database: every input form, idempotence, rejects, --strict, bulk, reruns. */
const dir = await mkdtemp(path.join(os.tmpdir(), 'loader-test-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const pra = (id: string, family: string, extra: Record<string, unknown> = {}) => ({
  resourceType: 'Practitioner', id, meta: { lastUpdated: '2024-05-06T07:08:09Z' }, active: true, name: [{ family, given: ['Anne'] }],
  identifier: [{ system: 'https://rpps.esante.gouv.fr', value: `1${id.replace(/\D/g, '').padStart(10, '0')}` }], ...extra,
});
const write = async (name: string, content: string | Buffer) => {
  const f = path.join(dir, name);
  await mkdir(path.dirname(f), { recursive: true });
  await writeFile(f, content);
  return f;
};
const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** A digest of everything the loader writes: resources (without the server's timestamps) and index rows. */
async function snapshot(db: Database) {
  const [r] = await db.sql`select count(*)::int as n, md5(string_agg(type || '/' || id || '/' || version_id || '/' || content::text, ',' order by type, id)) as h from resource`;
  const idx: Record<string, unknown> = {};
  for (const table of ['token_idx', 'string_idx', 'date_idx', 'reference_idx']) {
    // rids and system ids are internal: compare what they stand for.
    const [x] = await db.sql.unsafe(`select count(*)::int as n, md5(string_agg(j::text, ',' order by j::text)) as h from (
      select to_jsonb(i) - 'rid' - 'sys' || jsonb_build_object('type', r.type, 'id', r.id, 'sys', ${table === 'token_idx' ? '(select uri from token_system s where s.id = i.sys)' : 'null'}) as j
      from ${table} i join resource r using (rid)
      ${table === 'date_idx' ? "where i.low < now() - interval '1 day'" : ''}) x`); // "now" differs between runs
    idx[table] = x;
  }
  return { resource: r, ...idx };
}

t.test('every input form loads; a second run changes nothing', async (t) => {
  const db = await testDatabase(t);
  const files = [
    await write('forms/one.json', JSON.stringify(pra('p1', 'Un'))),
    await write('forms/collection.json', JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry: [{ resource: pra('p2', 'Deux') }] })),
    await write('forms/searchset.json', JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [{ resource: pra('p3', 'Trois'), search: { mode: 'match' } }] })),
    await write('forms/batch.json', JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [{ resource: pra('p4', 'Quatre'), request: { method: 'PUT', url: 'Practitioner/p4' } }] })),
    await write('forms/lines.ndjson', ndjson([pra('p5', 'Cinq'), pra('p6', 'Six')])),
    await write('forms/lines.ndjson.gz', gzipSync(ndjson([pra('p7', 'Sept')]))),
    await write('forms/deep/nested/one.json.gz', gzipSync(JSON.stringify(pra('p8', 'Huit')))),
    await write('forms/ignored.txt', 'not loaded'),
  ];
  t.equal(files.length, 8);
  const first = await load(db, [path.join(dir, 'forms')]);
  t.same(first.rejects, []);
  t.equal(first.files, 7, 'directories are read recursively, only loadable extensions');
  t.equal(first.inserted, 8);
  const before = await snapshot(db);
  const second = await load(db, [path.join(dir, 'forms')]);
  t.match(second, { inserted: 0, updated: 0, unchanged: 8, indexRows: 0 });
  t.same(await snapshot(db), before, 'identical database after the second run');
});

t.test('transaction bundles delete; the last entry for an id wins; versions and lastUpdated', async (t) => {
  const db = await testDatabase(t);
  await load(db, [await write('v/a.ndjson', ndjson([pra('v1', 'Avant'), pra('v2', 'Garde', { meta: undefined }), pra('v1', 'Apres', { meta: { lastUpdated: '2024-01-02T03:04:05.678+01:00' } })]))]);
  let [row] = await db.sql`select version_id, content from resource where id = 'v1'`;
  t.equal(row.version_id, 1, 'last entry wins within one input, one version');
  t.equal(row.content.name[0].family, 'Apres');
  t.equal(row.content.meta.lastUpdated, '2024-01-02T03:04:05.678+01:00', 'meta.lastUpdated from the input is kept');
  t.equal(row.content.meta.versionId, '1');
  const [noMeta] = await db.sql`select content, last_updated from resource where id = 'v2'`;
  t.ok(Date.now() - new Date(noMeta.content.meta.lastUpdated).getTime() < 60000, 'lastUpdated set to now when absent');

  // Same content with other meta.versionId/lastUpdated: a no-op.
  await load(db, [await write('v/b.json', JSON.stringify(pra('v1', 'Apres', { meta: { versionId: '9', lastUpdated: '2025-01-01T00:00:00Z' } })))]);
  [row] = await db.sql`select version_id, content from resource where id = 'v1'`;
  t.equal(row.version_id, 1, 'no new version for equal content');
  t.equal(row.content.meta.lastUpdated, '2024-01-02T03:04:05.678+01:00');

  // A real change: versionId 2, index rows rewritten.
  const changed = await load(db, [await write('v/c.json', JSON.stringify(pra('v1', 'Nouveau')))]);
  t.equal(changed.updated, 1);
  [row] = await db.sql`select version_id, content from resource where id = 'v1'`;
  t.equal(row.version_id, 2);
  t.equal(row.content.meta.versionId, '2');
  const norms = await db.sql`select s.norm from string_idx s join resource r using (rid) where r.id = 'v1' order by norm`;
  t.same(norms.map((n) => n.norm), ['anne', 'anne', 'nouveau', 'nouveau'], 'old index rows are gone (family + name, given + name)');

  const tx = await load(db, [await write('v/tx.json', JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'DELETE', url: 'Practitioner/v1' } }] }))]);
  t.equal(tx.deleted, 1);
  t.equal((await db.sql`select count(*)::int as n from resource where id = 'v1'`)[0].n, 0);
  t.equal((await db.sql`select count(*)::int as n from token_idx t left join resource r using (rid) where r.rid is null`)[0].n, 0, 'no orphan index rows');
});

t.test('bad entries: one line each with file and line, the load goes on; --strict rejects the whole file', async (t) => {
  const db = await testDatabase(t);
  const bad = await write('bad/mixed.ndjson', [
    JSON.stringify(pra('ok1', 'Bon')),
    '{not json',
    JSON.stringify({ id: 'x' }),
    JSON.stringify({ resourceType: 'Patient', id: 'x' }),
    JSON.stringify({ resourceType: 'Practitioner' }),
    JSON.stringify({ resourceType: 'Practitioner', id: 'bad id!' }),
    JSON.stringify({ resourceType: 'Practitioner', id: 'p-ident', identifier: { value: '1' } }),
    JSON.stringify({ resourceType: 'Practitioner', id: 'p-fam', name: [{ family: 42 }] }),
    JSON.stringify({ resourceType: 'Practitioner', id: 'p-meta', meta: { lastUpdated: 'yesterday' } }),
    '',
    JSON.stringify(pra('ok2', 'Bien')),
  ].join('\n'));
  const r = await load(db, [bad]);
  t.equal(r.inserted, 2);
  t.equal(r.rejected, 8);
  t.match(r.rejects, [
    /mixed\.ndjson:2: not JSON/,
    /mixed\.ndjson:3: missing resourceType/,
    /mixed\.ndjson:4: unknown resourceType "Patient"/,
    /mixed\.ndjson:5: missing id/,
    /mixed\.ndjson:6: invalid id "bad id!"/,
    /mixed\.ndjson:7: identifier: must be an array, found an object/,
    /mixed\.ndjson:8: name\[0\]\.family: must be a string, found a number/,
    /mixed\.ndjson:9: meta\.lastUpdated is not a FHIR instant/,
  ]);

  const strictDb = await testDatabase(t);
  const good = await write('strict/good.ndjson', ndjson([pra('s1', 'Un'), pra('s2', 'Deux')]));
  const badBundle = await write('strict/z-bad.json', JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry: [{ resource: pra('s3', 'Trois') }, { resource: { resourceType: 'Person', id: 'x' } }] }));
  const s = await load(strictDb, [good, badBundle], { strict: true, batchSize: 1 });
  t.equal(s.rejectedFiles, 1);
  t.match(s.rejects, [/z-bad\.json#entry\[1\]: unknown resourceType "Person"/, /z-bad\.json: file rejected/]);
  const ids = await strictDb.sql`select id from resource order by id`;
  t.same(ids.map((i) => i.id), ['s1', 's2'], 'nothing of the rejected file was written, the good file was');
});

t.test('an interrupted run followed by a rerun converges to the state of one clean run', async (t) => {
  const rows = Array.from({ length: 60 }, (_, i) => pra(`i${i}`, `Nom${i}`));
  const full = await write('int/full.ndjson', ndjson(rows));
  const clean = await testDatabase(t);
  await load(clean, [full], { batchSize: 7 });
  const interrupted = await testDatabase(t);
  // The interrupted run wrote some batches (here: the first 25 lines, one of them changed since).
  await load(interrupted, [await write('int/part.ndjson', ndjson([...rows.slice(0, 24), pra('i24', 'Autre')]))], { batchSize: 7 });
  await load(interrupted, [full], { batchSize: 7 });
  const a = await snapshot(clean);
  const b = await snapshot(interrupted);
  t.same({ ...b, resource: undefined }, { ...a, resource: undefined }, 'same index rows');
  t.equal((b.resource as { n: number }).n, 60);
});

/** Index and constraint definitions of the tables a bulk load fills (what it drops and builds again). */
async function indexDefinitions(db: Database) {
  const idx = await db.sql<{ indexname: string; indexdef: string }[]>`
    select indexname, indexdef from pg_indexes
    where schemaname = current_schema() and tablename = any(${[...COPY_TABLES, 'string_value']}::text[]) order by 1`;
  const con = await db.sql<{ conname: string; contype: string }[]>`
    select conname, contype from pg_constraint where conrelid = 'resource'::regclass and contype in ('p', 'u') order by 1`;
  return { indexes: idx.map((i) => `${i.indexname}: ${i.indexdef}`), constraints: con.map((c) => `${c.conname} ${c.contype}`) };
}

t.test('bulk load into an empty database gives the same rows as the incremental one, indexes rebuilt', async (t) => {
  const files = [path.join(FIXTURES, 'ans-ig-examples'), path.join(FIXTURES, 'extraction')];
  const incremental = await testDatabase(t);
  const before = await indexDefinitions(incremental);
  await load(incremental, files);
  const bulk = await testDatabase(t);
  const dup = await write('bulk/dup.ndjson', ndjson([pra('b1', 'Premier'), pra('b1', 'Second')]));
  const dup2 = await write('bulk/dup2.ndjson', ndjson([pra('b1', 'Troisieme')]));
  await load(incremental, [dup, dup2]);
  const built: string[] = [];
  const r = await load(bulk, [...files, dup, dup2], { bulk: true, onIndex: (name, ms) => (t.ok(ms >= 0), built.push(name)) });
  t.same(r.rejects, []);
  const dropped = (await indexDefinitions(incremental)).indexes
    .map((i) => i.split(':')[0])
    .filter((n) => !n.startsWith('resource_'));
  t.same(built.filter((n) => !/^(analyze|fill) /.test(n)).sort(), dropped.sort(), 'each index of the index tables is reported as it is built');
  t.same(built.filter((n) => n.startsWith('fill ')), ['fill string_value'], 'string_value filled before its indexes');
  t.same(built.filter((n) => n.startsWith('analyze ')).sort(), ['analyze date_idx', 'analyze geo_idx', 'analyze pair_idx', 'analyze phonetic_idx', 'analyze reference_idx', 'analyze resource', 'analyze string_idx', 'analyze string_value', 'analyze token_idx']);
  t.same({ ...(await snapshot(bulk)), resource: undefined }, { ...(await snapshot(incremental)), resource: undefined });
  // string_value holds every value of string_idx, and also, in both databases, the family names of
  // b1's first two versions (rewritten after they were written), which no row has any more.
  const values = async (db: Database) => (await db.sql<{ missing: number; extra: number }[]>`
    select (select count(*)::int from (select distinct param, norm from string_idx) d
              where not exists (select 1 from string_value v where v.param = d.param and v.norm = d.norm)) as missing,
           (select count(*)::int from string_value v
              where not exists (select 1 from string_idx d where d.param = v.param and d.norm = v.norm)) as extra`)[0];
  t.same(await values(bulk), { missing: 0, extra: 2 });
  t.same(await values(incremental), { missing: 0, extra: 2 });
  const [b1] = await bulk.sql`select version_id, content from resource where id = 'b1'`;
  t.equal(b1.content.name[0].family, 'Troisieme', 'an id that comes again: the last entry wins');
  t.equal(b1.version_id, 2, 'and its earlier version counts, as in an incremental load');
  t.same(await indexDefinitions(bulk), before, 'every index and key constraint is back, as defined');
  t.equal((await bulk.sql`select count(*)::int as n from load_state`)[0].n, 0);
  t.equal((await bulk.sql`select count(*)::int as n from bulk_state`)[0].n, 0);
  await t.rejects(load(bulk, [dup], { bulk: true }), /needs an empty database/);
  const [{ next }] = await bulk.sql`select nextval(pg_get_serial_sequence('resource', 'rid')) > max(rid) as next from resource`;
  t.ok(next, 'the key sequence is past every key the bulk load assigned');
});

t.test('bulk (binary COPY) stores what the incremental load stores: lastUpdated as PostgreSQL reads the instant, escapes, non-ASCII text', async (t) => {
  // Fractions beyond the microsecond round as PostgreSQL's text input rounds them (half to even),
  // offsets are applied, and a fraction that rounds up carries into the next second.
  const instants = [
    '2024-05-06T07:08:09Z', '2024-05-06T07:08:09.1234565+02:00', '2024-12-31T23:59:59.9999996-05:30', '1999-12-31T23:59:59.0000005Z',
    '2000-01-01T00:00:00.0000015Z', '1969-07-20T20:17:40.123456789Z', '0100-03-01T00:00:00+14:00', '9999-12-31T23:59:59.999999Z', '2024-02-29T12:00:00.5-00:30',
  ];
  const rows = instants.map((lastUpdated, i) =>
    pra(`lu${i}`, ['O"Brien \\ tab\t', 'Zoë Ærø 漢字 😀', 'line\nbreak'][i % 3], { meta: { versionId: '1', lastUpdated } }),
  );
  rows.push(pra('lu-now', 'Sans date', { meta: {} })); // lastUpdated given by the loader
  const file = await write('binary/a.ndjson', ndjson(rows) + `${JSON.stringify(pra('lu-raw', 'x')).replace('"x"', '"\\u00e9t\\u00e9 \\\\ \\"q\\""')}\n`);
  const incremental = await testDatabase(t);
  await load(incremental, [file]);
  const stored = async (db: Database) =>
    (await db.sql`select id, version_id, last_updated::text as at, content::text as content from resource where id <> 'lu-now' order by id`).map((r) => ({ ...r }));
  for (const workers of [0, 2]) {
    const bulk = await testDatabase(t);
    const r = await load(bulk, [file], { bulk: true, workers });
    t.same(r.rejects, []);
    t.same(await stored(bulk), await stored(incremental), `workers ${workers}: the same rows`);
    t.same({ ...(await snapshot(bulk)), resource: undefined }, { ...(await snapshot(incremental)), resource: undefined }, `workers ${workers}: the same index rows`);
    const [{ n }] = await bulk.sql`select count(*)::int as n from resource where last_updated is distinct from (content->'meta'->>'lastUpdated')::timestamptz`;
    t.equal(n, 0, 'last_updated is the instant of meta.lastUpdated, as PostgreSQL reads it');
    const [{ at }] = await bulk.sql`select last_updated::text as at from resource where id = 'lu2'`;
    t.equal(at, '2025-01-01 05:30:00+00', 'a fraction that rounds up carries into the next second');
    const [raw] = await bulk.sql`select content->'name'->0->>'family' as family from resource where id = 'lu-raw'`;
    t.equal(raw.family, 'été \\ "q"', 'escapes in the JSON text are read as JSON, not as COPY escapes');
  }
});

t.test('resources up to a page are stored uncompressed, by both loads; a larger one is still compressed and reads back whole', async (t) => {
  // ~3 kB of JSON that pglz shrinks to a fraction: compressed before migration 007, whichever load wrote it.
  const qualification = Array.from({ length: 16 }, (_, i) => ({ code: { coding: [{ system: 'https://mos.esante.gouv.fr/NOS/TRE_R48-DiplomeEtatFrancais/FHIR/TRE-R48-DiplomeEtatFrancais', code: `DE${i}` }] } }));
  const mid = (id: string) => pra(id, 'Moyen', { qualification });
  const big = pra('tc-big', 'Grand', { qualification: Array.from({ length: 80 }, () => qualification[0]) });
  const stored = async (db: Database) =>
    db.sql<{ id: string; bytes: number; compression: string | null; content: Record<string, unknown> }[]>`
      select id, pg_column_size(content) as bytes, pg_column_compression(content) as compression, content - 'meta' as content
      from resource order by id`;
  for (const bulk of [false, true]) {
    const how = bulk ? 'bulk' : 'incremental';
    const db = await testDatabase(t);
    await load(db, [await write(`toast/${how}.ndjson`, ndjson([mid('tc-1'), mid('tc-2'), big]))], { bulk });
    const rows = await stored(db);
    t.same(rows.map((r) => r.id), ['tc-1', 'tc-2', 'tc-big']);
    for (const r of rows.slice(0, 2)) {
      t.ok(r.bytes > 2100, `${how}: ${r.id} takes ${r.bytes} bytes, over the 2 kB where PostgreSQL compresses by default`);
      t.equal(r.compression, null, `${how}: ${r.id} stored uncompressed`);
      const { meta: _, ...written } = mid(r.id);
      t.same(r.content, written, `${how}: ${r.id} reads back as written`);
    }
    // pglz, or lz4 on a server whose default_toast_compression says so.
    t.not(rows[2].compression, null, `${how}: a resource larger than a page is still compressed`);
    const { meta: _, ...written } = big;
    t.same(rows[2].content, written, `${how}: and reads back whole`);
  }
});

t.test('a bulk load writes its rows frozen and all-visible: no VACUUM afterwards', async (t) => {
  const db = await testDatabase(t);
  const rows = Array.from({ length: 3000 }, (_, i) =>
    i % 2 ? pra(`fz${i}`, `Nom${i % 40}`) : { resourceType: 'PractitionerRole', id: `fzr${i}`, practitioner: { reference: `Practitioner/fz${i + 1}` } });
  await load(db, [await write('freeze/a.ndjson', ndjson(rows))], { bulk: true, workers: 2 });
  await db.sql`create extension if not exists pg_visibility`;
  for (const table of ['resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx']) {
    // Pages that hold a row (the file may end with empty pages it was extended by in advance).
    const [v] = await db.sql.unsafe(`
      select count(*)::int as pages, count(*) filter (where v.all_visible and v.all_frozen)::int as frozen
      from (select distinct (ctid::text::point)[0]::bigint as blkno from ${table}) p
      join pg_visibility_map('${table}') v using (blkno)`);
    t.ok(v.pages > 0, `${table} has rows`);
    t.equal(v.frozen, v.pages, `${table}: every page with rows is all-visible and all-frozen`);
  }
});

t.test('a bulk load turns autovacuum off while rows stream in, and on again when it ends or is finished at start-up', async (t) => {
  const db = await testDatabase(t);
  const off = async () =>
    (await db.sql<{ relname: string }[]>`
      select relname from pg_class where relname in ('resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx')
      and 'autovacuum_enabled=false' = any(coalesce(reloptions, '{}')) order by 1`).map((r) => r.relname);
  const state = await startBulk(db.sql);
  t.same(await off(), ['date_idx', 'reference_idx', 'resource', 'string_idx', 'token_idx'], 'off during the load');
  await state.release(); // the load is interrupted here
  t.ok((await finishInterruptedBulk(db.sql)) > 0, 'the next start recreates the indexes');
  t.same(await off(), [], 'and gives the tables back to autovacuum');
  await load(db, [await write('av/a.ndjson', ndjson([pra('av1', 'Auto')]))], { bulk: true });
  t.same(await off(), [], 'a complete bulk load ends with autovacuum on');
});

t.test('index builds: B-trees sort in 8 MB runs, the GIN trigram index gets the large memory (never less than the server\'s)', async (t) => {
  const db = await testDatabase(t);
  const indexes = await db.sql<{ name: string; definition: string }[]>`
    select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as definition from pg_index
    where indrelid in ('token_idx'::regclass, 'string_idx'::regclass, 'string_value'::regclass, 'date_idx'::regclass, 'reference_idx'::regclass)`;
  t.equal(indexes.length, 11);
  const conn = await db.sql.reserve();
  const bytes = async (setting: string) =>
    Number((await conn<{ b: string }[]>`select pg_size_bytes(current_setting(${setting}))::text as b`)[0].b);
  const GiB = 2 ** 30;
  try {
    const sharedBuffers = await bytes('shared_buffers');
    // The server's own setting, then one above the 3 GB cap, which a GIN build must keep.
    for (const server of [await bytes('maintenance_work_mem'), 4 * GiB]) {
      await conn.unsafe(`set maintenance_work_mem = '${server / 1024}kB'`);
      const gin = Math.max(server, Math.min(3 * GiB, Math.floor(sharedBuffers / 2 / 1024) * 1024));
      for (const { name, definition } of indexes) {
        await conn.unsafe(buildMemory(definition));
        // sql/016: string_value_trgm is the one GIN index of the schema
        t.equal(await bytes('maintenance_work_mem'), name === 'string_value_trgm' ? gin : 8 * 2 ** 20, `${name}, server ${server} bytes`);
        await conn.unsafe(`set maintenance_work_mem = '${server / 1024}kB'`);
      }
    }
  } finally {
    await conn`reset maintenance_work_mem`;
    conn.release();
  }
});

t.test('a bulk load drops the indexes of the index tables (resource keeps its keys), and an interruption is put right at the next start', async (t) => {
  const db = await testDatabase(t);
  const defined = await indexDefinitions(db);
  t.equal(defined.indexes.length, 21);
  const resourceKeys = defined.indexes.filter((i) => i.startsWith('resource'));
  t.equal(resourceKeys.length, 3);
  const messages: string[] = [];
  const restart = () => finishInterruptedBulk(db.sql, (m) => messages.push(m));
  const copyOne = async (copies: BulkCopies) => {
    const enc = new CopyEncoder(new Map());
    enc.add(1, prepareResource(registry, { resourceType: 'Practitioner', id: 'cut1', meta: { lastUpdated: '2024-01-01T00:00:00Z' }, active: true, name: [{ family: 'Coupure' }] }));
    await copies.write(enc.take());
  };
  const count = async () => (await db.sql`select count(*)::int as n from resource`)[0].n as number;

  // 1. Stopped while rows stream in: nothing was committed; indexes back at the next start.
  let session = await startBulk(db.sql);
  t.same((await indexDefinitions(db)).indexes, resourceKeys, 'while rows stream in, only resource keeps its indexes');
  t.same((await indexDefinitions(db)).constraints, defined.constraints, 'and its key constraints');
  let copies = await BulkCopies.open(db.sql);
  await copyOne(copies);
  await copies.abort(new Error('killed'));
  await session.release();
  t.equal(await restart(), 18);
  t.same(await indexDefinitions(db), defined);
  t.equal(await count(), 0);

  // 2. Stopped after the COPY transactions committed but before the load said so: rows emptied.
  session = await startBulk(db.sql);
  copies = await BulkCopies.open(db.sql);
  await copyOne(copies);
  await copies.commit();
  t.equal(await count(), 1);
  await session.release();
  messages.length = 0;
  await restart();
  t.equal(await count(), 0, 'rows of a load that did not finish committing are removed');
  t.match(messages, [/rows were not all committed/, /recreated 18 index/]);
  t.same(await indexDefinitions(db), defined);
  t.same((await db.sql`select count(*)::int as n from token_idx`)[0].n, 0);

  // 3. Stopped while indexes were built: the rows stay, the indexes are finished.
  session = await startBulk(db.sql);
  copies = await BulkCopies.open(db.sql);
  await copyOne(copies);
  await copies.commit();
  await rowsCommitted(db.sql);
  await session.release();
  await restart();
  t.equal(await count(), 1, 'committed rows are kept');
  t.same(await indexDefinitions(db), defined);
  t.equal((await db.sql`select count(*)::int as n from resource where type = 'Practitioner' and id = 'cut1'`)[0].n, 1, 'and found through the rebuilt index');
  const family = registry.forType('Practitioner').find((p) => p.code === 'family')!.id;
  t.same(await db.sql`select norm from string_value where param = ${family}`, [{ norm: 'coupure' }], 'string_value filled again for :contains');
});

t.test('a COPY that PostgreSQL refuses ends with its error (it used to wait for ever), and the bulk load leaves nothing', async (t) => {
  const db = await testDatabase(t);
  // postgres.js's COPY stream: the refusal comes as an 'error', not as a 'finish' that never came.
  const copyText = (tx: postgres.TransactionSql, text: string) =>
    (async () => {
      const w = await tx.unsafe('copy date_idx (rid, param, low, high) from stdin').writable();
      const done = new Promise<void>((resolve, reject) => w.once('finish', resolve).once('error', reject));
      w.end(text);
      await done;
    })();
  await t.rejects(db.sql.begin((tx) => copyText(tx, '1\t1\tnot a date\t2024-01-01T00:00:00Z\n')), /invalid input syntax for type timestamp/);
  await t.rejects(db.sql.begin((tx) => copyText(tx, '1\t1\t+010000-01-01T00:00:00.000Z\t2024-01-01T00:00:00Z\n')), /out of range/);
  // The bulk load's streams (binary and text): a refused row fails the commit, and nothing stays.
  const defined = await indexDefinitions(db);
  const session = await startBulk(db.sql);
  const copies = await BulkCopies.open(db.sql);
  const enc = new CopyEncoder(new Map());
  enc.add(1, prepareResource(registry, pra('refused', 'Refus')));
  const tables = enc.take();
  tables[1] = new TextEncoder().encode('not a key\t1\t0\tx\n');
  await t.rejects(
    (async () => {
      await copies.write(tables);
      await copies.commit();
    })(),
    /invalid input syntax for type bigint/,
  );
  await failBulk(db.sql, session);
  t.equal((await db.sql`select count(*)::int as n from resource`)[0].n, 0, 'no resource was written');
  t.equal((await db.sql`select count(*)::int as n from date_idx`)[0].n, 0, 'nor an index row');
  t.same(await indexDefinitions(db), defined, 'and the indexes are back');
});

t.test('bulk: NDJSON Bundle lines, deletions and ids that come again are written in input order', async (t) => {
  const lines = [
    JSON.stringify(pra('o1', 'Un')),
    JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'DELETE', url: 'Practitioner/o1' } }, { resource: pra('o2', 'Bundle') }] }),
    JSON.stringify(pra('o2', 'Ligne')),
    JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'DELETE', url: 'Practitioner/o3' } }] }),
    JSON.stringify(pra('o3', 'Apres')),
    JSON.stringify(pra('o4', 'Quatre')),
  ];
  const file = await write('order/a.ndjson', lines.join('\n'));
  const incremental = await testDatabase(t);
  await load(incremental, [file], { batchSize: 1 });
  for (const workers of [0, 2]) {
    const bulk = await testDatabase(t);
    const r = await load(bulk, [file], { bulk: true, workers, batchSize: 1 });
    t.same(r.rejects, []);
    const rows = await bulk.sql`select id, content->'name'->0->>'family' as family from resource order by id`;
    t.same(rows.map((x) => `${x.id}:${x.family}`), ['o2:Ligne', 'o3:Apres', 'o4:Quatre'], `workers ${workers}`);
    t.same({ ...(await snapshot(bulk)), resource: undefined }, { ...(await snapshot(incremental)), resource: undefined });
  }
});

t.test('bulk with --strict: one bad entry and nothing of the load is written', async (t) => {
  const db = await testDatabase(t);
  const good = await write('bstrict/a.ndjson', ndjson([pra('bs1', 'Un'), pra('bs2', 'Deux')]));
  const bad = await write('bstrict/b.ndjson', [JSON.stringify(pra('bs3', 'Trois')), '{oops'].join('\n'));
  const r = await load(db, [good, bad], { bulk: true, strict: true });
  t.equal(r.inserted, 0);
  t.equal(r.rejected, 1);
  t.match(r.rejects, [/b\.ndjson:2: not JSON/, /nothing of this bulk load was written/]);
  t.equal((await db.sql`select count(*)::int as n from resource`)[0].n, 0);
  t.equal((await db.sql`select count(*)::int as n from pg_indexes where tablename = 'token_idx'`)[0].n, 2, 'indexes back');
  const again = await load(db, [good], { bulk: true, strict: true });
  t.equal(again.inserted, 2, 'the database is ready for another bulk load');
});

t.test('what PostgreSQL could not store is refused entry by entry, its look-alikes are kept (incremental and bulk)', async (t) => {
  const meta = { versionId: '1', lastUpdated: '2024-05-06T07:08:09Z' };
  const lines = [
    // kept: escapes that are not NUL nor unpaired surrogates, a literal backslash-u0000, an exponent inside a string
    `{"resourceType":"Practitioner","id":"k1","meta":${JSON.stringify(meta)},"name":[{"family":"Ren\\u00e9e \\ud83d\\ude00"}]}`,
    `{"resourceType":"Practitioner","id":"k2","meta":${JSON.stringify(meta)},"name":[{"family":"a\\\\u0000b"}]}`,
    `{"resourceType":"Practitioner","id":"k3","meta":${JSON.stringify(meta)},"name":[{"family":"3e12345"}],"x":1.10}`,
    // refused
    `{"resourceType":"Practitioner","id":"r1","name":[{"family":"bad \\ud800 surrogate"}]}`,
    `{"resourceType":"Practitioner","id":"r2","meta":${JSON.stringify(meta)},"name":[{"family":"nul \\u0000 here"}]}`,
    `{"resourceType":"Practitioner","id":"r3","meta":${JSON.stringify(meta)},"y":1e400}`,
    JSON.stringify({ resourceType: 'Practitioner', id: 'r4', identifier: [{ system: 'urn:x', value: 'v'.repeat(600) }] }),
    JSON.stringify({ resourceType: 'Practitioner', id: 'r5', name: [{ family: 'Long'.repeat(200) }] }),
  ];
  const file = await write('storable/a.ndjson', lines.join('\n'));
  for (const opts of [{}, { bulk: true, workers: 0 }, { bulk: true, workers: 2 }]) {
    const db = await testDatabase(t);
    const r = await load(db, [file], opts);
    t.match(r.rejects, [
      /a\.ndjson:4: contains an unpaired UTF-16 surrogate/,
      /a\.ndjson:5: contains a NUL character/,
      /a\.ndjson:6: contains a number too large/,
      /a\.ndjson:7: a code of search parameter identifier is too long to index \(600 characters, at most 512\)/,
      /a\.ndjson:8: a value of search parameter (family|name) is too long to index/,
    ], JSON.stringify(opts));
    const rows = await db.sql`select id, content from resource order by id`;
    t.same(rows.map((x) => x.id), ['k1', 'k2', 'k3']);
    t.same(rows.map((x) => x.content.name[0].family), ['Renée 😀', 'a\\u0000b', '3e12345']);
  }
});

t.test('worker threads prepare NDJSON exactly as the main thread: same rows, same rejects in the same order', async (t) => {
  // More bytes than two worker chunks (1 MiB each, cut after a newline), bad lines in several
  // chunks, a Bundle line, an id repeated across chunks (the last one wins), a gzip file and a .json
  // file (main thread).
  const lines: string[] = [];
  const pad = 'x'.repeat(600);
  for (let i = 0; i < 4000; i++) {
    if (i % 97 === 5) lines.push('{not json');
    else if (i % 211 === 7) lines.push(JSON.stringify({ resourceType: 'Practitioner', id: `w${i}`, name: [{ family: 42 }] }));
    else if (i === 600) lines.push(JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry: [{ resource: pra('wb1', 'Bundle') }, { resource: { resourceType: 'Person', id: 'x' } }] }));
    else if (i === 3900) lines.push(JSON.stringify(pra('w3', 'Dernier')));
    else lines.push(JSON.stringify({ ...pra(`w${i}`, `Nom${i % 50}`), text: { status: 'generated', div: `<div xmlns="http://www.w3.org/1999/xhtml">${pad}</div>` } }));
  }
  t.ok(Buffer.byteLength(lines.join('\n')) > 2 * 2 ** 20, 'three chunks at least');
  const files = [
    await write('workers/a.ndjson', lines.join('\n')),
    await write('workers/b.ndjson.gz', gzipSync(ndjson([pra('w3', 'Encore'), pra('wz', 'Zed')]))),
    await write('workers/c.json', JSON.stringify(pra('wc', 'Json'))),
  ];
  const single = await testDatabase(t);
  const a = await load(single, files, { workers: 0 });
  const pooled = await testDatabase(t);
  const b = await load(pooled, files, { workers: 2 });
  t.ok(a.rejected > 15, `bad lines rejected (${a.rejected})`);
  t.same(b.rejects, a.rejects, 'same rejects, same file:line, same order');
  t.same({ ...b, elapsedMs: 0, indexMs: 0 }, { ...a, elapsedMs: 0, indexMs: 0 }, 'same counts');
  t.same(await snapshot(pooled), await snapshot(single), 'same resources and index rows');
  const [w3] = await pooled.sql`select content from resource where id = 'w3'`;
  t.equal(w3.content.name[0].family, 'Encore', 'the last entry for an id wins across files and chunks');
  const bulk = await testDatabase(t);
  const c = await load(bulk, files, { workers: 2, bulk: true });
  t.same(c.rejects, a.rejects);
  t.same({ ...(await snapshot(bulk)), resource: undefined }, { ...(await snapshot(single)), resource: undefined }, 'bulk with workers: same index rows');
});

/** A load that waits for a connection its own pool holds never ends: fail it after a minute instead. */
const withTimeout = <T>(p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the load waited for a connection')), 60_000).unref())]);

t.test('a pool of LOADER_CONNECTIONS (what the CLI opens) is enough for every kind of load', async (t) => {
  const db = await testDatabase(t);
  const sql = connectUrl(db.url, { max: LOADER_CONNECTIONS });
  t.teardown(() => sql.end({ timeout: 5 }));
  const files = [await write('pool/a.ndjson', ndjson(Array.from({ length: 2500 }, (_, i) => pra(`pool${i}`, `Nom${i % 7}`))))];
  const bulk = await withTimeout(loadFiles(sql, registry, files, { bulk: true, workers: 2, batchSize: 500 }));
  t.equal(bulk.inserted, 2500, 'bulk');
  const again = await withTimeout(loadFiles(sql, registry, files, { workers: 2, batchSize: 500 }));
  t.equal(again.unchanged, 2500, 'incremental');
});

t.test('--concurrency above the default: the pool the CLI opens (loaderConnections) never waits for itself', async (t) => {
  // Every batch (of one resource) brings a token system not interned yet: each batch transaction
  // needs a second connection to intern it while it holds its own. With 12 batches at once on the
  // default pool of 7 connections, all 7 were held by transactions waiting for an eighth.
  const db = await testDatabase(t);
  const concurrency = 12;
  const sql = connectUrl(db.url, { max: loaderConnections(concurrency) });
  t.teardown(() => sql.end({ timeout: 5 }));
  const rows = Array.from({ length: 40 }, (_, i) => pra(`conc${i}`, 'Nom', { identifier: [{ system: `urn:test:system-${i}`, value: `v${i}` }] }));
  const files = [await write('conc/a.ndjson', ndjson(rows))];
  const loaded = await withTimeout(loadFiles(sql, registry, files, { batchSize: 1, concurrency, workers: 0 }));
  t.equal(loaded.inserted, 40);
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from token_system where uri like 'urn:test:system-%'`;
  t.equal(n, 40, 'every system interned');
  t.equal(loaderConnections(), LOADER_CONNECTIONS, 'the default needs no more than LOADER_CONNECTIONS');
});

t.test('index values with COPY specials and the system marker character round-trip exactly', async (t) => {
  const db = await testDatabase(t);
  const odd = ['a\u0002b', 'back\\slash', 'tab\there', 'line\nbreak', '\u00020\u0002'];
  const res = { ...pra('odd', 'Odd'), identifier: odd.map((value, i) => ({ system: `urn:test:${i}\u0002`, value })) };
  for (const workers of [0, 2]) {
    const r = await load(db, [await write(`odd/${workers}.ndjson`, ndjson([{ ...res, id: `odd${workers}` }]))], { workers });
    t.same(r.rejects, []);
    const rows = await db.sql<{ uri: string; code: string }[]>`
      select s.uri, t.code from token_idx t join token_system s on s.id = t.sys join resource r using (rid)
      where r.id = ${`odd${workers}`} and s.uri like 'urn:test:%' order by s.uri`;
    t.same(rows.map((x) => [x.uri, x.code]), odd.map((v, i) => [`urn:test:${i}\u0002`, v]), `workers ${workers}`);
  }
});
