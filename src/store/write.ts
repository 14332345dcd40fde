import type { Db, Sql } from '../db.ts';
import { extractorFor, type IndexRows } from '../fhir/extract.ts';
import { checkResource, InvalidResource } from '../fhir/resource.ts';
import type { Registry, ResourceType } from '../registry/index.ts';
import { COPY_COLUMNS, COPY_TABLES, indexLines, SYSTEM_MARK, systemMark, type CopyTable } from './copy-encode.ts';
import type { TokenSystems } from './token-systems.ts';

/**
 * The write path: upsert by (type, id) with change detection, index rows written in the same
 * transaction as the resource. Content equal to the stored one apart from meta.versionId and
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

/** A validated resource, the JSON text to store and its index rows (before COPY encoding). */
export interface PreparedPut {
  type: ResourceType;
  id: string;
  lastUpdated: string;
  text: string;
  /** `text` is the entry's own JSON text (its NDJSON line), unchanged. */
  asIs: boolean;
  rows: IndexRows;
}

/**
 * Longest token code, token system and folded string that is indexed (characters). A btree entry
 * holds at most 2,704 bytes: a longer value would fail the whole batch (a bulk load, at its index
 * build), so the entry is refused instead, with the parameter named.
 */
export const MAX_INDEXED_LENGTH = 512;

/**
 * Deepest nesting of JSON objects and arrays a resource may have: far above any FHIR resource, far
 * below what its recursive walks (JSON.stringify, PostgreSQL's jsonb input) survive.
 */
export const MAX_DEPTH = 64;
export const TOO_DEEP = `nested deeper than ${MAX_DEPTH}`;

/** A parsed value no deeper than MAX_DEPTH, checked without recursion (JSON.parse has no limit). */
function assertDepth(value: unknown): void {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d === MAX_DEPTH) throw new InvalidResource(TOO_DEEP);
    for (const x of Array.isArray(v) ? v : Object.values(v)) {
      values.push(x);
      depths.push(d + 1);
    }
  }
}

/** An exponent of 3 digits or more: the number may be beyond a double (JSON.parse gives ±Infinity). */
const LONG_EXPONENT = /\d[eE][+-]?\d{3}/;

function assertFinite(v: unknown): void {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidResource('contains a number too large to be stored exactly (beyond ±1.8e308)');
  } else if (Array.isArray(v)) {
    for (const x of v) assertFinite(x);
  } else if (typeof v === 'object' && v !== null) {
    for (const k in v) assertFinite((v as Record<string, unknown>)[k]);
  }
}

/** PostgreSQL's jsonb holds neither U+0000 nor an unpaired UTF-16 surrogate, in a value or a key. */
function assertStorableText(v: string): void {
  if (v.includes('\u0000')) throw new InvalidResource('contains a NUL character (\\u0000), which cannot be stored');
  if (!(v as string & { isWellFormed(): boolean }).isWellFormed()) throw new InvalidResource('contains an unpaired UTF-16 surrogate (\\uD800–\\uDFFF), which cannot be stored');
}

function assertStorable(v: unknown): void {
  if (typeof v === 'string') assertStorableText(v);
  else if (Array.isArray(v)) for (const x of v) assertStorable(x);
  else if (typeof v === 'object' && v !== null) {
    for (const k in v) {
      assertStorableText(k);
      assertStorable((v as Record<string, unknown>)[k]);
    }
  }
}

/**
 * The JSON text stored for a resource. An NDJSON line that is already what is stored (meta.versionId
 * "1" and a lastUpdated) is kept as it is — no second serialisation — when PostgreSQL's jsonb is
 * sure to take it: no \u escape (jsonb refuses NUL and unpaired surrogates) and no long exponent
 * (numeric's range). Anything else is serialised from the parsed value, after the checks that jsonb
 * would otherwise fail on (numbers beyond a double are refused rather than written as null).
 */
function storedText(content: Record<string, unknown>, raw: string | undefined, asIs: boolean): string {
  const longExponent = raw === undefined || LONG_EXPONENT.test(raw);
  if (asIs && !longExponent && raw!.indexOf('\\u') < 0) return raw!;
  if (longExponent) assertFinite(content);
  const text = JSON.stringify(content);
  // JSON.stringify writes U+0000 and unpaired surrogates as \u escapes: only then can there be one.
  if (text.indexOf('\\u') >= 0 && /\\u(0000|d[89a-f])/i.test(text)) assertStorable(content);
  return text;
}

function assertIndexable(rows: IndexRows, registry: Registry, type: ResourceType): void {
  const tooLong = (param: number, what: string, n: number) => {
    const code = registry.forType(type).find((p) => p.id === param)?.code ?? String(param);
    return new InvalidResource(`a ${what} of search parameter ${code} is too long to index (${n} characters, at most ${MAX_INDEXED_LENGTH})`);
  };
  for (const r of rows.token) {
    if (r.code.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'code', r.code.length);
    if (r.system !== null && r.system.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'system', r.system.length);
  }
  for (const r of rows.string) if (r.norm.length > MAX_INDEXED_LENGTH) throw tooLong(r.param, 'value', r.norm.length);
}

/**
 * Validates a resource and prepares what is stored: its JSON text and index rows (pure, throws
 * InvalidResource or ExtractError on bad input). `raw` is the entry's own JSON text when it has
 * one (a whole NDJSON line), already found no deeper than MAX_DEPTH (src/load/sources.ts
 * tooDeepAt); a value without it is checked here, before anything walks it.
 */
export function preparePutRows(registry: Registry, value: unknown, now = new Date(), raw?: string): PreparedPut {
  if (raw === undefined) assertDepth(value);
  const { type, id, resource } = checkResource(value);
  const meta = (resource.meta ?? {}) as Record<string, unknown>;
  const asIs = meta.versionId === '1' && typeof meta.lastUpdated === 'string';
  const lastUpdated = typeof meta.lastUpdated === 'string' ? meta.lastUpdated : now.toISOString();
  const content = asIs ? resource : { ...resource, meta: { ...meta, versionId: '1', lastUpdated } };
  // Extracted from what is stored (meta.lastUpdated included), exactly as a re-index would.
  const rows = extractorFor(registry, type)(content);
  assertIndexable(rows, registry, type);
  const text = storedText(content, raw, asIs);
  return { type, id, lastUpdated, text, asIs: text === raw, rows };
}

/** Validates a resource and prepares everything the database step needs (pure, throws on bad input). */
export function preparePut(registry: Registry, value: unknown, now = new Date(), raw?: string): WriteEntry {
  const p = preparePutRows(registry, value, now, raw);
  return { op: 'put', type: p.type, id: p.id, lastUpdated: p.lastUpdated, text: p.text, index: encodeRows(p.rows) };
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

/** The index tables, in IndexCopy's order. */
const INDEX_TABLES = COPY_TABLES.filter((t): t is Exclude<CopyTable, 'resource'> => t !== 'resource');
const copyLines = (c: IndexCopy) => [c.token, c.string, c.date, c.reference];

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
  const [token, string, date, reference] = indexLines('', rows, (uri) => systemMark(systems, uri));
  const count = rows.token.length + rows.string.length + rows.date.length + rows.reference.length;
  return { token, string, date, reference, count, systems };
}

/** Lines that start with a tab (IndexCopy), each given the rid in front. */
const withRid = (rid: string, lines: string) => (lines === '' ? '' : rid + lines.replaceAll('\n\t', `\n${rid}\t`));

async function copyInto(tx: Db, table: CopyTable, lines: string[]): Promise<void> {
  let any = false;
  for (const l of lines) if (l !== '') any = true;
  if (!any) return;
  const w = await tx.unsafe(`copy ${table} (${COPY_COLUMNS[table]}) from stdin`).writable();
  const done = new Promise<void>((resolve, reject) => w.once('finish', resolve).once('error', reject));
  w.end(lines.join(''));
  await done;
}

/**
 * Inserts the index rows of resources whose rid is known (COPY: the cheapest way into PostgreSQL);
 * returns the number of rows.
 */
export async function insertIndexRows(tx: Db, systems: TokenSystems, items: { rid: string; index: IndexCopy }[]): Promise<number> {
  const t: string[] = [];
  const s: string[] = [];
  const d: string[] = [];
  const r: string[] = [];
  let count = 0;
  for (const { rid, index } of items) {
    let token = index.token;
    if (index.systems.length) token = token.replace(SYSTEM_MARK, (_, i: string) => String(systems.id(index.systems[Number(i)])));
    t.push(withRid(rid, token));
    s.push(withRid(rid, index.string));
    d.push(withRid(rid, index.date));
    r.push(withRid(rid, index.reference));
    count += index.count;
  }
  await copyInto(tx, 'token_idx', t);
  await copyInto(tx, 'string_idx', s);
  await copyInto(tx, 'date_idx', d);
  await copyInto(tx, 'reference_idx', r);
  return count;
}

/**
 * The lines of one IndexCopy table text by parameter: as they are (`lines`) and as compared
 * (`keys`: token systems written as their URIs, which the marks of two encodings number apart).
 */
function linesByParam(text: string, systems: string[]): Map<string, { lines: string[]; keys: string[] }> {
  const out = new Map<string, { lines: string[]; keys: string[] }>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const param = line.slice(1, line.indexOf('\t', 1));
    const key = systems.length ? line.replace(SYSTEM_MARK, (_, i: string) => `\x02${systems[Number(i)]}\x02`) : line;
    const group = out.get(param);
    if (group) {
      group.lines.push(line);
      group.keys.push(key);
    } else out.set(param, { lines: [line], keys: [key] });
  }
  return out;
}

const sameKeys = (a: string[] | undefined, b: string[] | undefined) => {
  if (!a || !b || a.length !== b.length) return a === b;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((l, i) => l === y[i]);
};

/**
 * What an update changes in the index: per table, the parameters whose rows differ between the
 * stored content's rows (`before`) and the new ones, and the new rows of those parameters only.
 */
function indexChange(before: IndexCopy, after: IndexCopy): { params: number[][]; rows: IndexCopy } {
  const params: number[][] = [];
  const kept: string[] = [];
  let count = 0;
  const beforeTables = copyLines(before);
  copyLines(after).forEach((text, t) => {
    const was = linesByParam(beforeTables[t], before.systems);
    const now = linesByParam(text, after.systems);
    const changed: number[] = [];
    let out = '';
    for (const p of new Set([...was.keys(), ...now.keys()])) {
      if (sameKeys(was.get(p)?.keys, now.get(p)?.keys)) continue;
      changed.push(Number(p));
      for (const line of now.get(p)?.lines ?? []) {
        out += `${line}\n`;
        count++;
      }
    }
    params.push(changed);
    kept.push(out);
  });
  const [token, string, date, reference] = kept;
  return { params, rows: { token, string, date, reference, count, systems: after.systems } };
}

/** Deletes the index rows of the given (param, rid) pairs, per table (INDEX_TABLES order). */
async function deleteParamRows(tx: Db, pairs: { params: number[]; rids: string[] }[]): Promise<void> {
  for (const [t, { params, rids }] of pairs.entries()) {
    if (params.length === 0) continue;
    await tx`delete from ${tx(INDEX_TABLES[t])} x using unnest(${params}::int[], ${rids}::bigint[]) as d(param, rid)
             where x.param = d.param and x.rid = d.rid`;
  }
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
  systems: TokenSystems,
  batch: WriteEntry[],
  tx?: Db,
): Promise<WriteCounts> {
  const entries = lastWins(batch);
  await systems.intern(sql, systemsOf(entries));
  const run = async (db: Db): Promise<WriteCounts> => {
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
        const before = encodeRows(extractorFor(registry, w.type as ResourceType)(JSON.parse(w.before)));
        const change = indexChange(before, indexOf(w));
        change.params.forEach((ps, t) => {
          for (const p of ps) {
            pairs[t].params.push(p);
            pairs[t].rids.push(w.rid);
          }
        });
        rows.set(w.rid, change.rows);
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
  return tx ? run(tx) : sql.begin(run);
}

/**
 * Statistics for the tables a load (or a sync) changed much: the planner chooses every search's plan
 * from them, and autovacuum may take minutes to notice. A table never analyzed, analyzed empty, or
 * whose changes since its last analysis exceed a fifth of its rows, is analyzed now; so is every
 * table when `written`, the resources the caller wrote, exceeds a fifth of the resources (the
 * statistics views lag the last transactions by up to seconds).
 */
export async function analyzeChanged(sql: Sql, written = 0): Promise<void> {
  const stale = await sql<{ name: string }[]>`
    select s.relname as name from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.relname in ('resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx')
      and s.schemaname = current_schema()
      and ((s.last_analyze is null and s.last_autoanalyze is null) or c.reltuples <= 0 or s.n_mod_since_analyze > 1000 + 0.2 * c.reltuples
        or ${written} > 1000 + 0.2 * (select greatest(r.reltuples, 0) from pg_class r where r.oid = 'resource'::regclass))`;
  for (const { name } of stale) await sql.unsafe(`analyze ${name}`);
}
