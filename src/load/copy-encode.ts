import type { IndexRows } from '../fhir/extract.ts';
import type { PreparedPut } from '../store/write.ts';

/**
 * COPY text format (the default of COPY … FROM STDIN): backslash, tab, newline and carriage return
 * escaped; also U+0002, written as the escape \x02, because the raw character marks a token system
 * whose interned id is not known yet (see CopyEncoder).
 */
const NEEDS_ESCAPE = /[\\\t\n\r\x02]/;
export const copyText = (s: string) => (NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r\x02]/g, (c) => COPY_ESCAPES[c]) : s);
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x02': '\\x02' };

/** The tables a load writes, in this order everywhere (COPY streams, encoder output). */
export const COPY_TABLES = ['resource', 'token_idx', 'string_idx', 'date_idx', 'reference_idx'] as const;
export type CopyTable = (typeof COPY_TABLES)[number];
export const COPY_COLUMNS: Record<CopyTable, string> = {
  resource: 'rid, type, id, version_id, last_updated, content',
  token_idx: 'rid, param, sys, code',
  string_idx: 'rid, param, norm, exact',
  date_idx: 'rid, param, low, high',
  reference_idx: 'rid, param, target_type, target_id',
};

/** A token system written before its interned id is known: \x02<i>\x02, i indexing `unknown`. */
export const SYSTEM_MARK = /\x02(\d+)\x02/g;

/**
 * The COPY lines of one resource's index rows, for token_idx, string_idx, date_idx and
 * reference_idx (COPY_TABLES order, resource left out), every line starting with `rid` and a tab
 * ('' for lines whose key is put in front later). `system` gives the column text of a token system.
 */
export function indexLines(rid: string, rows: IndexRows, system: (uri: string) => string): [string, string, string, string] {
  let token = '';
  for (const x of rows.token) token += `${rid}\t${x.param}\t${x.system === null ? '0' : system(x.system)}\t${copyText(x.code)}\n`;
  let string = '';
  for (const x of rows.string) string += `${rid}\t${x.param}\t${copyText(x.norm)}\t${copyText(x.exact)}\n`;
  let date = '';
  for (const x of rows.date) date += `${rid}\t${x.param}\t${new Date(x.low).toISOString()}\t${new Date(x.high).toISOString()}\n`;
  let reference = '';
  for (const x of rows.reference) reference += `${rid}\t${x.param}\t${copyText(x.targetType)}\t${copyText(x.targetId)}\n`;
  return [token, string, date, reference];
}

/** A token system not interned yet, written as SYSTEM_MARK: its index in `pending` (added if new). */
export function systemMark(pending: string[], uri: string): string {
  let i = pending.indexOf(uri);
  if (i < 0) i = pending.push(uri) - 1;
  return `\x02${i}\x02`;
}

/**
 * A growing byte buffer for COPY text: ASCII and UTF-8 written in place (no string concatenation to
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

  /** The bytes written, in memory of their own (transferable to another thread); the builder is spent. */
  take(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length);
  }
}

/**
 * The COPY text of resources whose keys are known (a bulk load's rows), one string per table in
 * COPY_TABLES order. Token systems come as interned ids from `systems`; a system not in it is
 * written as a SYSTEM_MARK and listed in `unknown`, for the thread that interns systems to resolve.
 * type, id and lastUpdated are validated (checkResource): they need no escaping.
 */
export class CopyEncoder {
  private readonly out = COPY_TABLES.map(() => new ByteBuilder());
  resources = 0;
  indexRows = 0;
  readonly unknown: string[] = [];

  constructor(private readonly systems: ReadonlyMap<string, number>) {}

  /**
   * One resource. `raw` holds the UTF-8 bytes of its input line: when the stored text is that line
   * (PreparedPut.asIs) and needs no COPY escape, they are copied as they are instead of the text
   * being encoded again.
   */
  add(rid: number, p: PreparedPut, raw?: { bytes: Uint8Array; start: number; end: number }): void {
    const r = String(rid);
    const res = this.out[0];
    res.text(`${r}\t${p.type}\t${p.id}\t1\t${p.lastUpdated}\t`);
    if (raw && p.asIs && !NEEDS_ESCAPE.test(p.text)) res.bytes(raw.bytes, raw.start, raw.end);
    else res.text(copyText(p.text));
    res.text('\n');
    this.addRows(r, p.rows);
    this.resources++;
  }

  private readonly system = (uri: string): string => {
    const known = this.systems.get(uri);
    return known !== undefined ? String(known) : systemMark(this.unknown, uri);
  };

  private addRows(r: string, rows: IndexRows): void {
    const lines = indexLines(r, rows, this.system);
    for (let t = 0; t < lines.length; t++) if (lines[t] !== '') this.out[t + 1].text(lines[t]);
    this.indexRows += rows.token.length + rows.string.length + rows.date.length + rows.reference.length;
  }

  /** The five tables' COPY text (COPY_TABLES order), each in memory of its own; the encoder is spent. */
  take(): Uint8Array[] {
    return this.out.map((b) => b.take());
  }
}

/**
 * Two independent 32-bit hashes (FNV-1a and a multiplicative one) of a resource key `Type/id`: the
 * bulk loader keeps them for every resource it streams, to find an id that comes again.
 */
export function keyHashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b + c, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

/**
 * A set of 64-bit keys (two 32-bit halves) in one typed array, open addressing: 4.5 M resources take
 * 72 MB instead of the ~300 MB of a Set of strings. Two different keys with the same 64 bits (about
 * one chance in a million at national scale) only make the second one take the slower, exact path.
 */
export class KeySet {
  private table = new Uint32Array(2 * 1024);
  private size = 0;

  /** Adds a key; false when it was there already. */
  add(h1: number, h2: number): boolean {
    if (h2 === 0) h2 = 1; // 0 marks an empty slot
    if (2 * (this.size + 1) > this.table.length / 2) this.grow();
    const t = this.table;
    const mask = t.length / 2 - 1;
    for (let i = h1 & mask; ; i = (i + 1) & mask) {
      if (t[2 * i + 1] === 0) {
        t[2 * i] = h1;
        t[2 * i + 1] = h2;
        this.size++;
        return true;
      }
      if (t[2 * i] === h1 && t[2 * i + 1] === h2) return false;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    this.size = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.add(old[i], old[i + 1]);
  }
}
