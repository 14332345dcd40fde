import type { Db, Sql } from '../db.ts';
import { extract, type IndexRows } from '../fhir/extract.ts';
import { checkResource, InvalidResource } from '../fhir/resource.ts';
import type { Registry, ResourceType } from '../registry/index.ts';

/**
 * The write path: upsert by (type, id) with change detection, index rows rewritten in the same
 * transaction as the resource. Content equal to the stored one apart from meta.versionId and
 * meta.lastUpdated is a no-op; a real change increments the server's versionId.
 */
export type WriteEntry =
  | { op: 'put'; type: ResourceType; id: string; lastUpdated: string; text: string; index: IndexCopy }
  | { op: 'delete'; type: ResourceType; id: string };

export interface WriteCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  indexRows: number;
}

export const emptyCounts = (): WriteCounts => ({ inserted: 0, updated: 0, unchanged: 0, deleted: 0, indexRows: 0 });

export function addCounts(a: WriteCounts, b: WriteCounts): WriteCounts {
  return {
    inserted: a.inserted + b.inserted,
    updated: a.updated + b.updated,
    unchanged: a.unchanged + b.unchanged,
    deleted: a.deleted + b.deleted,
    indexRows: a.indexRows + b.indexRows,
  };
}

/** Validates a resource and prepares everything the database step needs (pure, throws on bad input). */
export function preparePut(registry: Registry, value: unknown, now = new Date()): WriteEntry {
  const { type, id, resource } = checkResource(value);
  const meta = (resource.meta ?? {}) as Record<string, unknown>;
  const lastUpdated = typeof meta.lastUpdated === 'string' ? meta.lastUpdated : now.toISOString();
  const content = { ...resource, meta: { ...meta, versionId: '1', lastUpdated } };
  // Extracted from what is stored (meta.lastUpdated included), exactly as a re-index would.
  const index = encodeRows(extract(content, registry.forType(type)));
  const text = JSON.stringify(content);
  // PostgreSQL's jsonb cannot hold U+0000: refuse the entry rather than fail the whole batch.
  if (text.includes('\\u0000')) throw new InvalidResource('contains a NUL character (\\u0000), which cannot be stored');
  return { op: 'put', type, id, lastUpdated, text, index };
}

/** Token systems are interned in token_system; the ids are cached per process. */
export class SystemIds {
  private cache = new Map<string, number>();

  async resolve(sql: Sql, uris: Iterable<string>): Promise<void> {
    const missing = [...new Set(uris)].filter((u) => !this.cache.has(u));
    if (missing.length === 0) return;
    // Outside the batch transaction: an interned system is harmless even if the batch rolls back.
    await sql`insert into token_system (uri) select unnest(${missing}::text[]) on conflict (uri) do nothing`;
    const found = await sql<{ id: number; uri: string }[]>`select id, uri from token_system where uri = any(${missing}::text[])`;
    for (const r of found) this.cache.set(r.uri, r.id);
  }

  id(uri: string | null): number {
    if (uri === null) return 0;
    const v = this.cache.get(uri);
    if (v === undefined) throw new Error(`token system not interned: ${uri}`);
    return v;
  }

  known(uri: string): number | undefined {
    return this.cache.get(uri);
  }
}

/** Within one input the last entry for an id wins. */
export function lastWins(entries: WriteEntry[]): WriteEntry[] {
  const byKey = new Map<string, WriteEntry>();
  for (const e of entries) {
    const k = `${e.type}/${e.id}`;
    byKey.delete(k);
    byKey.set(k, e);
  }
  return [...byKey.values()];
}

/**
 * Deletes the index rows of rewritten or deleted resources. The rid-side indexes lead with the
 * parameter, so the rows are addressed as (param, rid) for every parameter of the resource's type.
 */
export async function deleteIndexRows(tx: Db, registry: Registry, items: { rid: string; type: string }[]): Promise<void> {
  if (items.length === 0) return;
  const rids = items.map((i) => i.rid);
  const params = [...new Set(items.flatMap((i) => registry.forType(i.type as ResourceType).map((p) => p.id)))];
  for (const table of ['token_idx', 'string_idx', 'date_idx', 'reference_idx'] as const) {
    await tx`delete from ${tx(table)} where param = any(${params}::int[]) and rid = any(${rids}::bigint[])`;
  }
}

/**
 * COPY text format: backslash, tab, newline and carriage return escaped; also U+0002, written as
 * the escape \x02, because the raw character marks token systems in IndexCopy.token.
 */
const copyText = (s: string) => (/[\\\t\n\r\x02]/.test(s) ? s.replace(/[\\\t\n\r\x02]/g, (c) => COPY_ESCAPES[c]) : s);
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x02': '\\x02' };

/**
 * The index rows of one resource as COPY text, prepared before its rid is known (in a loader worker
 * thread, src/load/parallel.ts, where strings cross threads far cheaper than thousands of small
 * objects): every line starts with a tab, the rid goes in front of it at write time. A token's
 * system is written `\x02<i>\x02`, i indexing `systems`: its interned id is only known to the
 * writing thread.
 */
export interface IndexCopy {
  token: string;
  string: string;
  date: string;
  reference: string;
  count: number;
  systems: string[];
}

export function encodeRows(rows: IndexRows): IndexCopy {
  const systems: string[] = [];
  let token = '';
  for (const x of rows.token) {
    let sys = '0';
    if (x.system !== null) {
      let i = systems.indexOf(x.system);
      if (i < 0) i = systems.push(x.system) - 1;
      sys = `\x02${i}\x02`;
    }
    token += `\t${x.param}\t${sys}\t${copyText(x.code)}\n`;
  }
  let string = '';
  for (const x of rows.string) string += `\t${x.param}\t${copyText(x.norm)}\t${copyText(x.exact)}\n`;
  let date = '';
  for (const x of rows.date) date += `\t${x.param}\t${new Date(x.low).toISOString()}\t${new Date(x.high).toISOString()}\n`;
  let reference = '';
  for (const x of rows.reference) reference += `\t${x.param}\t${copyText(x.targetType)}\t${copyText(x.targetId)}\n`;
  const count = rows.token.length + rows.string.length + rows.date.length + rows.reference.length;
  return { token, string, date, reference, count, systems };
}

/** Lines that start with a tab (IndexCopy), each given the rid in front. */
const withRid = (rid: string, lines: string) => (lines === '' ? '' : rid + lines.replaceAll('\n\t', `\n${rid}\t`));

async function copyInto(tx: Db, table: 'resource' | 'token_idx' | 'string_idx' | 'date_idx' | 'reference_idx', columns: string, lines: string[]): Promise<void> {
  let any = false;
  for (const l of lines) if (l !== '') any = true;
  if (!any) return;
  const w = await tx.unsafe(`copy ${table} (${columns}) from stdin`).writable();
  const done = new Promise<void>((resolve, reject) => w.once('finish', resolve).once('error', reject));
  w.end(lines.join(''));
  await done;
}

/**
 * Inserts the index rows of resources whose rid is known (COPY: the cheapest way into PostgreSQL);
 * returns the number of rows.
 */
export async function insertIndexRows(tx: Db, systems: SystemIds, items: { rid: string; index: IndexCopy }[]): Promise<number> {
  const t: string[] = [];
  const s: string[] = [];
  const d: string[] = [];
  const r: string[] = [];
  let count = 0;
  for (const { rid, index } of items) {
    let token = index.token;
    if (index.systems.length) token = token.replace(/\x02(\d+)\x02/g, (_, i: string) => String(systems.id(index.systems[Number(i)])));
    t.push(withRid(rid, token));
    s.push(withRid(rid, index.string));
    d.push(withRid(rid, index.date));
    r.push(withRid(rid, index.reference));
    count += index.count;
  }
  await copyInto(tx, 'token_idx', 'rid, param, sys, code', t);
  await copyInto(tx, 'string_idx', 'rid, param, norm, exact', s);
  await copyInto(tx, 'date_idx', 'rid, param, low, high', d);
  await copyInto(tx, 'reference_idx', 'rid, param, target_type, target_id', r);
  return count;
}

/** Raised by bulkInsert when an id is already stored: the caller writes that batch by upsert. */
export class AlreadyStored extends Error {}

/**
 * Bulk path (empty database, secondary indexes dropped): keys are reserved from the sequence and
 * resources and index rows go in by COPY, no upsert. A batch that meets an id already stored (the
 * same resource twice in one load) raises AlreadyStored, and is then written by the upsert path.
 */
export async function bulkInsert(sql: Sql, systems: SystemIds, batch: WriteEntry[], tx: Db): Promise<WriteCounts> {
  const entries = lastWins(batch);
  const puts = entries.filter((e): e is Extract<WriteEntry, { op: 'put' }> => e.op === 'put');
  if (puts.length !== entries.length) throw new AlreadyStored('deletions take the upsert path');
  await systems.resolve(sql, systemsOf(puts));
  // Checked before the COPY: a COPY that fails on a duplicate key is costlier to recover from.
  const [{ stored }] = await tx<{ stored: boolean }[]>`
    select exists (select 1 from resource r join unnest(${puts.map((e) => e.type)}::text[], ${puts.map((e) => e.id)}::text[]) as x(type, id)
      on r.type = x.type and r.id = x.id) as stored`;
  if (stored) throw new AlreadyStored('an id of this batch is already stored');
  const rids = await tx<{ rid: string }[]>`select nextval(pg_get_serial_sequence('resource', 'rid'))::text as rid from generate_series(1, ${puts.length})`;
  const lines = puts.map((e, i) =>
    `${rids[i].rid}\t${copyText(e.type)}\t${copyText(e.id)}\t1\t${copyText(e.lastUpdated)}\t${copyText(e.text)}\n`);
  await copyInto(tx, 'resource', 'rid, type, id, version_id, last_updated, content', lines);
  const indexRows = await insertIndexRows(tx, systems, puts.map((e, i) => ({ rid: rids[i].rid, index: e.index })));
  return { ...emptyCounts(), inserted: puts.length, indexRows };
}

export function systemsOf(entries: WriteEntry[]): string[] {
  const out = new Set<string>();
  for (const e of entries) if (e.op === 'put') for (const uri of e.index.systems) out.add(uri);
  return [...out];
}

/**
 * Writes one batch in one transaction (the caller's, when `tx` is given) and returns what changed.
 * `tx` must be a transaction; `sql` is used to intern token systems outside it.
 */
export async function writeBatch(
  sql: Sql,
  registry: Registry,
  systems: SystemIds,
  batch: WriteEntry[],
  tx?: Db,
  opts: { deferIndexDeletes?: Set<string> } = {},
): Promise<WriteCounts> {
  // Bulk loads run without the rid indexes: rewritten resources are only noted, and their index
  // rows rebuilt once the indexes are back (src/load/bulk.ts).
  const defer = opts.deferIndexDeletes;
  const entries = lastWins(batch);
  await systems.resolve(sql, systemsOf(entries));
  const run = async (db: Db): Promise<WriteCounts> => {
    const counts = emptyCounts();
    const puts = entries.filter((e): e is Extract<WriteEntry, { op: 'put' }> => e.op === 'put');
    const dels = entries.filter((e) => e.op === 'delete');
    if (dels.length) {
      const gone = await db<{ rid: string; type: string }[]>`
        delete from resource r using unnest(${dels.map((e) => e.type)}::text[], ${dels.map((e) => e.id)}::text[]) as x(type, id)
        where r.type = x.type and r.id = x.id returning r.rid, r.type`;
      if (defer) for (const g of gone) defer.add(g.rid);
      else await deleteIndexRows(db, registry, gone);
      counts.deleted = gone.length;
    }
    if (puts.length) {
      // The JSON of each resource is already there: the payload is spliced, not serialised again.
      const payload = `[${puts.map((e) => `{"type":${JSON.stringify(e.type)},"id":${JSON.stringify(e.id)},"last_updated":${JSON.stringify(e.lastUpdated)},"content":${e.text}}`).join(',')}]`;
      const written = await db<{ rid: string; type: string; id: string; inserted: boolean }[]>`
        insert into resource as r (type, id, version_id, last_updated, content)
        select x.type, x.id, 1, x.last_updated, x.content
        from jsonb_to_recordset(${payload}::text::jsonb) as x(type text, id text, last_updated timestamptz, content jsonb)
        on conflict (type, id) do update
          set version_id = r.version_id + 1,
              last_updated = excluded.last_updated,
              content = jsonb_set(excluded.content, '{meta,versionId}', to_jsonb((r.version_id + 1)::text))
          where (r.content #- '{meta,versionId}' #- '{meta,lastUpdated}') <> (excluded.content #- '{meta,versionId}' #- '{meta,lastUpdated}')
        returning r.rid, r.type, r.id, (r.xmax = 0) as inserted`;
      const byKey = new Map(puts.map((e) => [`${e.type}/${e.id}`, e]));
      const updated = written.filter((w) => !w.inserted);
      if (defer) for (const w of updated) defer.add(w.rid);
      else await deleteIndexRows(db, registry, updated);
      counts.indexRows = await insertIndexRows(
        db,
        systems,
        written.filter((w) => !defer || w.inserted).map((w) => ({ rid: w.rid, index: (byKey.get(`${w.type}/${w.id}`) as Extract<WriteEntry, { op: 'put' }>).index })),
      );
      counts.inserted = written.length - updated.length;
      counts.updated = updated.length;
      counts.unchanged = puts.length - written.length;
    }
    return counts;
  };
  return tx ? run(tx) : sql.begin(run);
}
