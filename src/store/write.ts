import type { Db, Sql } from '../db.ts';
import { emptyIndexRows, extractorFor, type IndexRows } from '../fhir/extract.ts';
import { INDEX_KINDS, INDEXED } from '../fhir/types/index.ts';
import { normalize } from '../fhir/normalize.ts';
import type { Registry, ResourceType } from '../registry/index.ts';
import { COPY_COLUMNS, COPY_TABLES, encodeIndexRows, INDEX_TABLES, resolveSystemMarks, type IndexCopy } from './copy-encode.ts';
import { CopyIn } from './copy-in.ts';
import type { TokenSystems } from './token-systems.ts';

/**
 * The write step of the incremental path: upsert by (type, id) with change detection, index rows
 * written in the same transaction as the resource (what to write comes prepared and encoded:
 * src/load/prepare.ts). Content equal to the stored one apart from meta.versionId and
 * meta.lastUpdated is a no-op; a real change increments the server's versionId and rewrites the
 * index rows of the parameters whose rows changed, no others.
 *
 * Invariant: a resource's index rows are those the registry extracts from its stored content.
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

/**
 * A loader transaction commits without waiting for its WAL flush (synchronous_commit = off, for
 * this transaction only): a crash of PostgreSQL may forget the last fraction of a second of
 * batches, never half a batch, and a rerun of the load writes them again (loads are idempotent).
 */
export function loaderTx<T>(sql: Sql, fn: (tx: Db) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    await tx`set local synchronous_commit = off`;
    return fn(tx);
  }) as Promise<T>;
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
 * Deletes the index rows of deleted resources (or rewritten ones whose earlier rows are not known).
 * The rid-side indexes lead with the parameter, so the rows are addressed as (param, rid) for every
 * parameter of the resource's type.
 */
export async function deleteIndexRows(tx: Db, registry: Registry, items: { rid: string; type: string }[]): Promise<void> {
  if (items.length === 0) return;
  const rids = items.map((i) => i.rid);
  const params = [...new Set(items.flatMap((i) => registry.forType(i.type as ResourceType).map((p) => p.id)))];
  for (const table of INDEX_TABLES) {
    await tx`delete from ${tx(table)} where param = any(${params}::int[]) and rid = any(${rids}::bigint[])`;
  }
}

/** Lines that start with a tab (IndexCopy), each given the rid in front. */
const withRid = (rid: string, lines: string) => (lines === '' ? '' : rid + lines.replaceAll('\n\t', `\n${rid}\t`));

async function copyInto(tx: Db, table: string, lines: string[]): Promise<void> {
  let any = false;
  for (const l of lines) if (l !== '') any = true;
  if (!any) return;
  const copy = await CopyIn.open(tx.unsafe(`copy ${table} (${COPY_COLUMNS[table]}) from stdin`));
  await copy.end(lines.join(''));
}

/**
 * Inserts the index rows of resources whose rid is known (COPY: the cheapest way into PostgreSQL);
 * returns the number of rows. Their token systems must have been interned in `systems`.
 */
export async function insertIndexRows(tx: Db, systems: TokenSystems, items: { rid: string; index: IndexCopy }[]): Promise<number> {
  const lines: string[][] = INDEX_TABLES.map(() => []);
  const token = INDEX_KINDS.indexOf('token');
  let count = 0;
  for (const { rid, index } of items) {
    index.lines.forEach((text, t) => lines[t].push(withRid(rid, t === token ? resolveSystemMarks(text, index.systems, (uri) => systems.id(uri)) : text)));
    count += index.count;
  }
  for (const [t, table] of INDEX_TABLES.entries()) await copyInto(tx, table, lines[t]);
  return count;
}

function byParam<R extends { param: number }>(list: R[]): Map<number, R[]> {
  const out = new Map<number, R[]>();
  for (const r of list) (out.get(r.param) ?? out.set(r.param, []).get(r.param)!).push(r);
  return out;
}

/** Two sets of rows of one parameter are the same, as the parameter's type compares rows. */
function sameRows<R>(a: R[], b: R[], same: (x: R, y: R) => boolean): boolean {
  return a.length === b.length && a.every((x) => b.some((y) => same(x, y))) && b.every((y) => a.some((x) => same(x, y)));
}

/**
 * What an update changes in the index: per table (INDEX_TABLES order), the parameters whose rows
 * differ between the content replaced (`before`) and the new one, and the new rows of those
 * parameters only.
 */
function indexChange(before: IndexRows, after: IndexRows): { params: number[][]; rows: IndexRows } {
  const rows = emptyIndexRows();
  const params = INDEX_KINDS.map((kind) => {
    const same = INDEXED[kind].rowsOf!.same as (x: unknown, y: unknown) => boolean;
    const was = byParam<{ param: number }>(before[kind]);
    const now = byParam<{ param: number }>(after[kind]);
    const changed: number[] = [];
    for (const p of new Set([...was.keys(), ...now.keys()])) {
      if (sameRows(was.get(p) ?? [], now.get(p) ?? [], same)) continue;
      changed.push(p);
      (rows[kind] as unknown[]).push(...(now.get(p) ?? []));
    }
    return changed;
  });
  return { params, rows };
}

/** Deletes the index rows of the given (param, rid) pairs, per table (INDEX_TABLES order). */
async function deleteParamRows(tx: Db, pairs: { params: number[]; rids: string[] }[]): Promise<void> {
  for (const [t, { params, rids }] of pairs.entries()) {
    if (params.length === 0) continue;
    await tx`delete from ${tx(INDEX_TABLES[t])} x using unnest(${params}::int[], ${rids}::bigint[]) as d(param, rid)
             where x.param = d.param and x.rid = d.rid`;
  }
}

/** Labels stored by this process (code_label), so that a batch writes only those it is the first to meet. */
const storedLabels = new Set<string>();
const STORED_LABELS_KEPT = 100_000;

/**
 * Stores the labels of codes (flat (system or '', code, label) triples) not stored yet; their
 * systems must have been interned in `systems`. Not in a write's transaction: a label is true of
 * its code whether or not the resource that carried it is written.
 */
export async function storeLabels(db: Db, systems: TokenSystems, labels: readonly string[]): Promise<void> {
  const rows: [number, string, string][] = [];
  const fresh = new Set<string>();
  for (let i = 0; i < labels.length; i += 3) {
    const key = `${labels[i]}\u0000${labels[i + 1]}\u0000${labels[i + 2]}`;
    if (storedLabels.has(key) || fresh.has(key)) continue;
    fresh.add(key);
    rows.push([labels[i] === '' ? 0 : systems.id(labels[i]), labels[i + 1], labels[i + 2]]);
  }
  if (fresh.size === 0) return;
  // Inserted in one order by every writer: two writers meeting the same new labels in other orders
  // would each wait for a row the other holds (a deadlock).
  rows.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  const sys = rows.map((r) => r[0]);
  const code = rows.map((r) => r[1]);
  const label = rows.map((r) => r[2]);
  await db`
    insert into code_label (sys, code, label, norm)
    select * from unnest(${sys}::int[], ${code}::text[], ${label}::text[], ${label.map(normalize)}::text[])
    on conflict do nothing`;
  if (storedLabels.size + fresh.size > STORED_LABELS_KEPT) storedLabels.clear();
  for (const k of fresh) storedLabels.add(k);
}

/** The token systems a batch's rows name. */
function systemsOf(entries: WriteEntry[]): string[] {
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
  systems: TokenSystems,
  batch: WriteEntry[],
  tx?: Db,
): Promise<WriteCounts> {
  const entries = lastWins(batch);
  // Token systems and labels outside the transaction: both are true of their codes whatever becomes of the batch.
  await systems.intern(sql, systemsOf(entries));
  await storeLabels(sql, systems, entries.flatMap((e) => (e.op === 'put' ? e.index.labels : [])));
  const write = async (db: Db): Promise<WriteCounts> => {
    const counts = emptyCounts();
    const puts = entries.filter((e): e is Extract<WriteEntry, { op: 'put' }> => e.op === 'put');
    const dels = entries.filter((e) => e.op === 'delete');
    if (dels.length) {
      const gone = await db<{ rid: string; type: string }[]>`
        delete from resource r using unnest(${dels.map((e) => e.type)}::text[], ${dels.map((e) => e.id)}::text[]) as x(type, id)
        where r.type = x.type and r.id = x.id returning r.rid, r.type`;
      await deleteIndexRows(db, registry, gone);
      counts.deleted = gone.length;
    }
    if (puts.length) {
      // The JSON of each resource is already there: the payload is spliced, not serialised again.
      const payload = `[${puts.map((e) => `{"type":${JSON.stringify(e.type)},"id":${JSON.stringify(e.id)},"last_updated":${JSON.stringify(e.lastUpdated)},"content":${e.text}}`).join(',')}]`;
      const written = await db<{ rid: string; type: string; id: string; inserted: boolean; before: string | null }[]>`
        insert into resource as r (type, id, version_id, last_updated, content)
        select x.type, x.id, 1, x.last_updated, x.content
        from jsonb_to_recordset(${payload}::text::jsonb) as x(type text, id text, last_updated timestamptz, content jsonb)
        on conflict (type, id) do update
          set version_id = r.version_id + 1,
              last_updated = excluded.last_updated,
              content = jsonb_set(excluded.content, '{meta,versionId}', to_jsonb((r.version_id + 1)::text))
          where (r.content #- '{meta,versionId}' #- '{meta,lastUpdated}') <> (excluded.content #- '{meta,versionId}' #- '{meta,lastUpdated}')
        returning r.rid, r.type, r.id, (r.xmax = 0) as inserted,
          -- The version replaced: a subquery of RETURNING sees the rows as they were before this
          -- statement. None when another transaction changed the row since this one's snapshot.
          case when r.xmax <> 0 then (select o.content::text from resource o where o.rid = r.rid and o.version_id = r.version_id - 1) end as before`;
      const byKey = new Map(puts.map((e) => [`${e.type}/${e.id}`, e]));
      const indexOf = (w: { type: string; id: string }) => (byKey.get(`${w.type}/${w.id}`) as Extract<WriteEntry, { op: 'put' }>).index;
      const updated = written.filter((w) => !w.inserted);
      const rewritten = updated.filter((w) => w.before === null);
      const pairs = INDEX_TABLES.map(() => ({ params: [] as number[], rids: [] as string[] }));
      const rows = new Map<string, IndexCopy>();
      for (const w of updated) {
        if (w.before === null) continue;
        const extract = extractorFor(registry, w.type as ResourceType);
        const put = byKey.get(`${w.type}/${w.id}`) as Extract<WriteEntry, { op: 'put' }>;
        const change = indexChange(extract(JSON.parse(w.before)), extract(JSON.parse(put.text)));
        change.params.forEach((ps, t) => {
          for (const p of ps) {
            pairs[t].params.push(p);
            pairs[t].rids.push(w.rid);
          }
        });
        rows.set(w.rid, encodeIndexRows(change.rows));
      }
      await deleteIndexRows(db, registry, rewritten);
      await deleteParamRows(db, pairs);
      counts.indexRows = await insertIndexRows(
        db,
        systems,
        written.map((w) => ({ rid: w.rid, index: rows.get(w.rid) ?? indexOf(w) })),
      );
      counts.inserted = written.length - updated.length;
      counts.updated = updated.length;
      counts.unchanged = puts.length - written.length;
    }
    return counts;
  };
  return tx ? write(tx) : sql.begin(write);
}

/**
 * What a writer does once it is done (a load, a sync, an import): the rows of each counted value
 * folded into one (value_count, sql/012), and statistics for the tables it changed much.
 */
export async function finishWrites(sql: Sql, written = 0): Promise<void> {
  await sql`select compact_value_counts()`;
  await analyzeChanged(sql, written);
}

/**
 * Statistics for the tables a load (or a sync) changed much: the planner chooses every search's plan
 * from them, and autovacuum may take minutes to notice. A table never analyzed, analyzed empty, or
 * whose changes since its last analysis exceed a fifth of its rows, is analyzed now; so is every
 * table when `written`, the resources the caller wrote, exceeds a fifth of the resources (the
 * statistics views lag the last transactions by up to seconds).
 */
async function analyzeChanged(sql: Sql, written: number): Promise<void> {
  const stale = await sql<{ name: string }[]>`
    select s.relname as name from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.relname = any(${COPY_TABLES as readonly string[]}::text[])
      and s.schemaname = current_schema()
      and ((s.last_analyze is null and s.last_autoanalyze is null) or c.reltuples <= 0 or s.n_mod_since_analyze > 1000 + 0.2 * c.reltuples
        or ${written} > 1000 + 0.2 * (select greatest(r.reltuples, 0) from pg_class r where r.oid = 'resource'::regclass))`;
  for (const { name } of stale) await sql.unsafe(`analyze ${name}`);
}
