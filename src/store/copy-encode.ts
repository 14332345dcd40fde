import type { IndexRows } from '../fhir/extract.ts';
import type { PreparedResource } from '../fhir/resource.ts';
import { copyText } from '../fhir/types/copy.ts';
import { countedKind, INDEX_KINDS, INDEXED, type IndexKind } from '../fhir/types/index.ts';
import { registry } from '../registry/index.ts';
import { pgMicrosOfInstant, pgMicrosOfMs } from './pg-binary.ts';

/**
 * The encoding step of the write path: index rows (src/fhir/resource.ts prepareResource) as COPY
 * data — the text format of the index tables (each search type writes its own columns,
 * src/fhir/types) and the binary format of the bulk load's resource and date_idx tables.
 *
 * A token system's id is interned by the writing thread; rows encoded before it is known (in a
 * worker thread) write the system as a mark, `systemMark`, which `resolveSystemMarks` alone turns
 * into the id.
 */

/** The tables a load writes, in this order everywhere (COPY streams, encoder output): resource, then the index tables. */
export const INDEX_TABLES = INDEX_KINDS.map((k) => INDEXED[k].table.name);
export const COPY_TABLES = ['resource', ...INDEX_TABLES] as const;
export type CopyTable = (typeof COPY_TABLES)[number];
export const COPY_COLUMNS: Readonly<Record<string, string>> = {
  resource: 'rid, type, id, version_id, last_updated, content',
  value_count: 'param, key, n',
  ...Object.fromEntries(INDEX_KINDS.map((k) => [INDEXED[k].table.name, `rid, param, ${INDEXED[k].table.columns}`])),
};

/**
 * The tables a bulk load writes in COPY's binary format (src/store/pg-binary.ts) rather than text:
 * PostgreSQL then reads each field by its length instead of scanning it byte by byte for escapes,
 * and takes timestamps as integers instead of parsing them — much faster for the resource and
 * date_idx tables. token_idx and string_idx stay text: no gain worth it, and token_idx's text
 * carries the marks of systems not interned yet.
 */
export const COPY_BINARY: Readonly<Record<string, boolean>> = { resource: true, date_idx: true };

/** A token system written before its interned id is known: \x02<i>\x02, i indexing `unknown`. */
export const SYSTEM_MARK = /\x02(\d+)\x02/g;

/**
 * The COPY text of one resource's rows of an index table, every line starting with `rid` and a tab
 * ('' for lines whose key is put in front later). `system` gives the column text of a token system.
 */
function tableLines(kind: IndexKind, rid: string, rows: IndexRows, system: (uri: string) => string): string {
  const copy = INDEXED[kind].rowsOf!.copyText as (row: unknown, system: (uri: string) => string) => string;
  let out = '';
  for (const row of rows[kind] as { param: number }[]) out += `${rid}\t${row.param}\t${copy(row, system)}\n`;
  return out;
}

/** A token system not interned yet, written as SYSTEM_MARK: its index in `pending` (added if new). */
export function systemMark(pending: string[], uri: string): string {
  let i = pending.indexOf(uri);
  if (i < 0) i = pending.push(uri) - 1;
  return `\x02${i}\x02`;
}

/**
 * The values a resource counts under (value_count, sql/012), each once: `param\tkey` for each
 * distinct key of each counted parameter's rows, and its type under param 0. `system` gives a token
 * system's key (its id, or a mark).
 */
export function countKeys(type: string, rows: IndexRows, system: (uri: string) => string): Set<string> {
  const out = new Set<string>();
  eachCountKey(type, rows, system, (param, key) => out.add(`${param}\t${key}`));
  return out;
}

/** Every (param, key) of countKeys, some of them more than once. */
function eachCountKey(type: string, rows: IndexRows, system: (uri: string) => string, visit: (param: number, key: string) => void): void {
  visit(0, `t:${type}`);
  for (const kind of INDEX_KINDS) {
    const counts = INDEXED[kind].counts as { keys(row: unknown, system: (uri: string) => string): string[] } | undefined;
    if (!counts) continue;
    for (const row of rows[kind] as { param: number }[]) {
      if (!countedParams.has(row.param)) continue;
      for (const key of counts.keys(row, system)) visit(row.param, key);
    }
  }
}

/** The parameters whose values are counted (sql/012 counted_param, stored from the same registry). */
const countedParams = new Set(registry.all.filter((p) => countedKind(p) !== undefined).map((p) => p.id));

/** Counts by `param\tkey` as value_count's COPY text. */
export function countLines(counts: ReadonlyMap<string, number>): string {
  let out = '';
  for (const [k, n] of counts) {
    if (n === 0) continue;
    const tab = k.indexOf('\t');
    out += `${k.slice(0, tab)}\t${copyText(k.slice(tab + 1))}\t${n}\n`;
  }
  return out;
}

/** COPY text with the marks of `pending` systems replaced by their interned ids. */
export function resolveSystemMarks(text: string, pending: readonly string[], id: (uri: string) => number): string {
  return pending.length === 0 ? text : text.replace(SYSTEM_MARK, (_, i: string) => String(id(pending[Number(i)])));
}

/**
 * The index rows of one resource as COPY text, prepared before its rid is known (in a loader
 * worker thread, src/load/parallel.ts, where strings cross threads far cheaper than thousands of
 * small objects): every line starts with a tab, the rid goes in front of it at write time, and
 * token systems are marks (`systemMark`) indexing `systems`.
 */
export interface IndexCopy {
  /** per index table, in INDEX_KINDS order. */
  lines: string[];
  count: number;
  systems: string[];
  /** the codes' labels (code_label), as (system or '', code, label) triples, flat. */
  labels: string[];
}

export function encodeIndexRows(rows: IndexRows): IndexCopy {
  const systems: string[] = [];
  const mark = (uri: string) => systemMark(systems, uri);
  return { lines: INDEX_KINDS.map((k) => tableLines(k, '', rows, mark)), count: rowCount(rows), systems, labels: labelsOf(rows) };
}

/** The labels of a resource's token rows, as (system or '', code, label) triples, flat. */
export function labelsOf(rows: IndexRows): string[] {
  const out: string[] = [];
  for (const r of rows.token) if (r.label !== undefined) out.push(r.system ?? '', r.code, r.label);
  return out;
}

export const rowCount = (rows: IndexRows): number => INDEX_KINDS.reduce((n, k) => n + rows[k].length, 0);

/**
 * A growing byte buffer for COPY data: ASCII and UTF-8 written in place (no string concatenation to
 * flatten and encode afterwards) and byte ranges copied as they are.
 */
export class ByteBuilder {
  private buf: Buffer;
  length = 0;

  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  text(s: string): void {
    this.room(s.length * 3);
    this.length += this.buf.write(s, this.length, 'utf8');
  }

  bytes(src: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    this.buf.set(src.subarray(start, end), this.length);
    this.length += end - start;
  }

  int16(v: number): void {
    this.room(2);
    this.length = this.buf.writeInt16BE(v, this.length);
  }

  int32(v: number): void {
    this.room(4);
    this.length = this.buf.writeInt32BE(v, this.length);
  }

  /** A non-negative integer below 2^53 as a big-endian 64-bit integer. */
  uint64(v: number): void {
    this.room(8);
    this.buf.writeUInt32BE(Math.floor(v / 2 ** 32), this.length);
    this.length = this.buf.writeUInt32BE(v >>> 0, this.length + 4);
  }

  int64(v: bigint): void {
    this.room(8);
    this.length = this.buf.writeBigInt64BE(v, this.length);
  }

  /** A binary COPY field of text: its UTF-8 byte length, then the bytes. `prefix` goes first (jsonb's version byte). */
  textField(s: string, prefix?: number): void {
    this.room(5 + s.length * 3);
    const at = this.length;
    this.length += 4;
    if (prefix !== undefined) this.buf[this.length++] = prefix;
    this.length += this.buf.write(s, this.length, 'utf8');
    this.buf.writeInt32BE(this.length - at - 4, at);
  }

  /** The bytes written, in memory of their own (transferable to another thread); the builder is spent. */
  take(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length);
  }
}

const JSONB_VERSION = Uint8Array.of(1);

/**
 * The COPY data of resources whose keys are known (a bulk load's rows), one buffer per table in
 * COPY_TABLES order, binary or text as COPY_BINARY says (binary: tuples only, the COPY's header and
 * trailer are the sink's, src/load/bulk.ts). Token systems come as interned ids from `systems`; a
 * system not in it is written as a SYSTEM_MARK and listed in `unknown`, for the thread that interns
 * systems to resolve. lastUpdated is a validated instant (checkResource).
 */
export class CopyEncoder {
  private readonly out = COPY_TABLES.map(() => new ByteBuilder());
  resources = 0;
  indexRows = 0;
  readonly unknown: string[] = [];
  /** per param, per key (token systems as marks or ids): the resources counted under it, and the last one. */
  private readonly tally = new Map<number, Map<string, { n: number; rid: number }>>();
  /** the distinct labels of the resources' codes, as (system or '', code, label) triples, flat. */
  readonly labels: string[] = [];
  private readonly labelled = new Set<string>();

  constructor(private readonly systems: ReadonlyMap<string, number>) {}

  /**
   * One resource. `raw` holds the UTF-8 bytes of its input line: when the stored text is that line
   * (PreparedResource.asIs), they are copied as they are instead of the text being encoded again (binary
   * COPY needs no escapes).
   */
  add(rid: number, p: PreparedResource, raw?: { bytes: Uint8Array; start: number; end: number }): void {
    // resource, binary (COPY_BINARY): rid, type, id, version_id, last_updated, content (jsonb: version 1, then the text).
    const res = this.out[0];
    res.int16(6);
    res.int32(8);
    res.uint64(rid);
    res.textField(p.type);
    res.textField(p.id);
    res.int32(4);
    res.int32(1);
    res.int32(8);
    res.int64(pgMicrosOfInstant(p.lastUpdated));
    if (raw && p.asIs) {
      res.int32(1 + raw.end - raw.start);
      res.bytes(JSONB_VERSION, 0, 1);
      res.bytes(raw.bytes, raw.start, raw.end);
    } else res.textField(p.text, 1);
    this.addRows(rid, p.rows);
    // A resource counts once per key: the tally remembers the last resource it counted.
    eachCountKey(p.type, p.rows, this.system, (param, key) => {
      let keys = this.tally.get(param);
      if (keys === undefined) this.tally.set(param, (keys = new Map()));
      const t = keys.get(key);
      if (t === undefined) keys.set(key, { n: 1, rid });
      else if (t.rid !== rid) {
        t.n++;
        t.rid = rid;
      }
    });
    this.resources++;
  }

  /** The resources counted per value (value_count, sql/012), by `param\tkey` (token systems as marks or ids). */
  get counts(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [param, keys] of this.tally) for (const [key, t] of keys) out.set(`${param}\t${key}`, t.n);
    return out;
  }

  private readonly system = (uri: string): string => {
    const known = this.systems.get(uri);
    return known !== undefined ? String(known) : systemMark(this.unknown, uri);
  };

  private addRows(rid: number, rows: IndexRows): void {
    const r = String(rid);
    for (const [i, kind] of INDEX_KINDS.entries()) {
      if (COPY_BINARY[INDEX_TABLES[i]]) continue;
      const lines = tableLines(kind, r, rows, this.system);
      if (lines !== '') this.out[i + 1].text(lines);
    }
    // date_idx, binary (COPY_BINARY): rid, param, low, high.
    const date = this.out[1 + INDEX_KINDS.indexOf('date')];
    for (const x of rows.date) {
      date.int16(4);
      date.int32(8);
      date.uint64(rid);
      date.int32(4);
      date.int32(x.param);
      date.int32(8);
      date.int64(pgMicrosOfMs(x.low));
      date.int32(8);
      date.int64(pgMicrosOfMs(x.high));
    }
    this.indexRows += rowCount(rows);
    for (const r of rows.token) {
      if (r.label === undefined) continue;
      const key = `${r.system ?? ''}\u0000${r.code}\u0000${r.label}`;
      if (this.labelled.has(key)) continue;
      this.labelled.add(key);
      this.labels.push(r.system ?? '', r.code, r.label);
    }
  }

  /** The five tables' COPY data (COPY_TABLES order), each in memory of its own; the encoder is spent. */
  take(): Uint8Array[] {
    return this.out.map((b) => b.take());
  }
}
