import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { KINDS, recognise, whyUnrecognised, type FieldsOf, type FileKind, type Recognised } from '../vocabulary/formats/rpps.ts';
import { isUtf8 } from 'node:buffer';
import { sniffFiness } from './finess-read.ts';
import { decodeLine } from './lines.ts';
import { isZip, OpenDataError, openZip, verifyZip, type ZipArchive } from './zip.ts';

export { OpenDataError } from './zip.ts';

/**
 * Reads the open-data extracts as typed records: `PATH…` are the downloaded ZIP, folders (read
 * recursively) or the files themselves. Each file (or ZIP entry) is recognised by its header line;
 * one that is not an extract is reported once and skipped. Everything is streamed: memory does not
 * grow with the files, and the consumer's pace is the reading's.
 */

/** One data line: `where` is `file:line` (`archive.zip!entry.txt:line` inside an archive). */
export type OpenDataRecord = { [K in FileKind]: { kind: K; where: string; fields: FieldsOf<K> } }[FileKind];
export type ActivityRecord = Extract<OpenDataRecord, { kind: 'activity' }>;
export type SavoirFaireRecord = Extract<OpenDataRecord, { kind: 'savoirFaire' }>;
export type DiplomaRecord = Extract<OpenDataRecord, { kind: 'diploma' }>;
export type MailboxRecord = Extract<OpenDataRecord, { kind: 'mailbox' }>;

/**
 * A record's fields as staged (import_line.fields, and import_structure.fields for a structure's
 * line): a JSON array of its values in its kind's column order (KINDS), whatever the file's order.
 * Values alone, not an object: the keys would make each line three times longer.
 */
export const fieldsJson = (record: OpenDataRecord): string =>
  JSON.stringify(KINDS[record.kind].columns.map((key) => (record.fields as Record<string, string>)[key]));

/** Staged fields read back (fieldsJson); an object is a structure's line in the state of an import made before they were arrays. */
export function fieldsOf(kind: FileKind, json: string): Record<string, string> {
  const parsed = JSON.parse(json) as string[] | Record<string, string>;
  if (!Array.isArray(parsed)) return parsed;
  const fields: Record<string, string> = {};
  KINDS[kind].columns.forEach((key, i) => (fields[key] = parsed[i]));
  return fields;
}

export interface ReadEvents {
  /** A line that is not imported: where it is and why (`file:line: reason` once formatted). */
  reject(where: string, reason: string): void;
  /** A file that is not one of the extracts, said once for the file. */
  skip(file: string, reason: string): void;
  /** The bytes there are to read (files, ZIP entries decompressed), said once before the first record. */
  total?(bytes: number): void;
  /** Bytes read, said as each chunk is taken. */
  bytes?(n: number): void;
}

export const NOT_AN_EXTRACT = 'not a PS_LibreAcces extract';
export const NO_HEADER = `${NOT_AN_EXTRACT} (no header line)`;

interface Source {
  name: string;
  size: number;
  chunks(): AsyncIterable<Buffer>;
}

/**
 * The records of every file under `paths`. ZIP archives are opened and read through once before the
 * first record, so that a truncated or damaged archive fails (OpenDataError) before anything of the
 * input is used.
 */
export async function* readOpenData(paths: readonly string[], events: ReadEvents): AsyncGenerator<OpenDataRecord> {
  for await (const c of readChunks(paths, events)) {
    for (const item of chunkRecords(c)) {
      if ('record' in item) yield item.record;
      else events.reject(item.where, item.reason);
    }
  }
}

/**
 * The data lines of every file under `paths` in chunks of whole lines (of about `size` bytes; 0:
 * as the bytes come), each with its file's header: what chunkRecords reads, here or in a worker
 * thread. Files that are not extracts are reported (`skip`) and left out; archives fail as in
 * readOpenData.
 */
export async function* readChunks(paths: readonly string[], events: ReadEvents, size = 0): AsyncGenerator<LineChunk> {
  const archives: ZipArchive[] = [];
  try {
    const sources = await sourcesOf(paths, archives);
    for (const a of archives) await verifyZip(a);
    events.total?.(sources.reduce((n, s) => n + s.size, 0));
    for (const source of sources) yield* fileChunks(source.name, counted(source.chunks(), events.bytes), events, size);
  } finally {
    for (const a of archives) a.close();
  }
}

/** The bytes of the files under `paths`, as they are on disk (ZIP archives compressed). */
export async function inputBytes(paths: readonly string[]): Promise<number> {
  let bytes = 0;
  for (const file of await filesOf(paths)) bytes += (await stat(file)).size;
  return bytes;
}

/**
 * The input files sorted by source, by content: the FINESS feeds (JSON, gzipped or not) apart, the
 * line-based extracts (and anything else, reported when read) together. A download that is clearly
 * no extract — a web page, JSON or gzip of another shape — is refused (OpenDataError) before
 * anything is read.
 */
export async function classifyInputs(paths: readonly string[]): Promise<{ finess: string[]; lines: string[] }> {
  const out = { finess: [] as string[], lines: [] as string[] };
  for (const file of await filesOf(paths)) {
    const kind = await sniffFiness(file);
    if (kind === 'finess') out.finess.push(file);
    else if (kind === undefined) out.lines.push(file);
    else throw new OpenDataError(`${file}: ${kind.notFeed}: nothing was imported`);
  }
  return out;
}

/** The files named, and those found under folders (sorted). */
async function filesOf(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) {
      for (const n of (await readdir(p, { recursive: true })).map(String).sort()) {
        const full = path.join(p, n);
        if ((await stat(full)).isFile()) files.push(full);
      }
    } else files.push(p);
  }
  return files;
}

/** The files named or found under folders (sorted), ZIP archives replaced by their entries. */
async function sourcesOf(paths: readonly string[], archives: ZipArchive[]): Promise<Source[]> {
  const files = await filesOf(paths);
  const sources: Source[] = [];
  for (const file of files) {
    if (await isZip(file)) {
      const archive = await openZip(file);
      archives.push(archive);
      for (const e of archive.entries) sources.push({ name: `${file}!${e.name}`, size: e.size, chunks: () => e.chunks() });
    } else {
      sources.push({ name: file, size: (await stat(file)).size, chunks: () => createReadStream(file, { highWaterMark: 1 << 20 }) });
    }
  }
  return sources;
}

async function* counted(chunks: AsyncIterable<Buffer>, bytes: ((n: number) => void) | undefined): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    bytes?.(chunk.length);
    yield chunk;
  }
}

/** The fields of a line: `|`-separated, the empty field after a final `|` dropped. */
export function splitFields(text: string): string[] {
  const parts = text.split('|');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Whole data lines of a file: `first` is the number of the first, `lines` how many there are (blank ones included). */
export interface LineChunk {
  name: string;
  header: Recognised;
  first: number;
  lines: number;
  /** the lines' bytes, in memory of their own; the last line may lack its `\n` at the end of the file. */
  bytes: Uint8Array;
}

/**
 * A data line of a chunk (`n` its number in the file): its record, or why it is not one. A line of
 * the wrong width still has `fields`, read by position as far as it goes (what names its person may
 * be readable); `cut` when it is also the file's last and has no line end: a truncated download.
 */
export type ChunkItem =
  | { n: number; record: OpenDataRecord }
  | { n: number; where: string; reason: string; fields: Record<string, string>; cut: boolean };

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const NEWLINE = 0x0a;

/** The newlines in `bytes`. */
function newlines(bytes: Uint8Array): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

/**
 * One file: its first non-empty line is its header (a UTF-8 BOM before it dropped); the lines after
 * it in chunks of whole lines cut after a newline once `size` bytes are read.
 */
async function* fileChunks(name: string, chunks: AsyncIterable<Buffer>, events: ReadEvents, size: number): AsyncGenerator<LineChunk> {
  let header: Recognised | undefined;
  let line = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let start = true;
  const take = (bytes: Buffer): LineChunk => {
    const lines = newlines(bytes) + (bytes[bytes.length - 1] === NEWLINE ? 0 : 1);
    const c = { name, header: header!, first: line + 1, lines, bytes: new Uint8Array(bytes) };
    line += lines;
    return c;
  };
  for await (const piece of chunks) {
    pending.push(piece);
    pendingBytes += piece.length;
    if (header !== undefined && pendingBytes < size) continue;
    let buf = Buffer.concat(pending, pendingBytes);
    if (start) {
      if (buf.length < BOM.length && buf.indexOf(NEWLINE) < 0) continue;
      if (buf.subarray(0, BOM.length).equals(BOM)) buf = buf.subarray(BOM.length);
      start = false;
    }
    // Before the header: blank lines, then the header line itself.
    while (header === undefined) {
      const end = buf.indexOf(NEWLINE);
      if (end < 0) break;
      line++;
      const text = decodeLine(withoutCr(buf.subarray(0, end)));
      buf = buf.subarray(end + 1);
      if (text.trim() === '') continue;
      const parts = splitFields(text);
      const known = recognise(parts);
      if (known === undefined) return events.skip(name, `${NOT_AN_EXTRACT} (${whyUnrecognised(parts)})`);
      header = { ...known, bar: text.trimEnd().endsWith('|') };
    }
    pending = [buf];
    pendingBytes = buf.length;
    if (header === undefined) continue;
    const last = buf.lastIndexOf(NEWLINE);
    if (last < 0) continue;
    yield take(buf.subarray(0, last + 1));
    pending = last + 1 < buf.length ? [buf.subarray(last + 1)] : [];
    pendingBytes = buf.length - last - 1;
  }
  const rest = Buffer.concat(pending, pendingBytes);
  if (header === undefined) {
    const text = decodeLine(withoutCr(start && rest.subarray(0, BOM.length).equals(BOM) ? rest.subarray(BOM.length) : rest));
    if (text.trim() === '') return events.skip(name, NO_HEADER);
    // A header as the last line, without its newline: a file without data lines.
    const parts = splitFields(text);
    if (recognise(parts) === undefined) events.skip(name, `${NOT_AN_EXTRACT} (${whyUnrecognised(parts)})`);
    return;
  }
  if (rest.length) yield take(rest);
}

function withoutCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, -1) : bytes;
}

/**
 * The records of a chunk, and its lines that are not (`file:line: reason`), in line order; blank
 * lines are skipped. Each line is UTF-8 if valid, else Windows-1252 (decodeLine). Pure: it runs in a
 * worker thread or on the main thread.
 */
export function* chunkRecords(c: LineChunk): Generator<ChunkItem> {
  const bytes = Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength);
  const columns = KINDS[c.header.kind].columns.map((key) => [key, (c.header.index as Partial<Record<string, number>>)[key]] as const);
  // Whole lines are valid UTF-8 together iff each is (0x0A never occurs inside a UTF-8 sequence).
  const utf8 = isUtf8(bytes);
  let start = 0;
  for (let n = c.first; start < bytes.length; n++) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end < 0) end = bytes.length;
    const raw = withoutCr(bytes.subarray(start, end));
    start = end + 1;
    const text = utf8 ? raw.toString('utf8') : decodeLine(raw);
    if (text.trim() === '') continue;
    const parts = splitFields(text);
    // A file whose lines do not end with `|` (the MSSanté one): a final `|` is an empty last field.
    if (c.header.bar === false && parts.length === c.header.width - 1 && text.endsWith('|')) parts.push('');
    const where = `${c.name}:${n}`;
    const fields: Record<string, string> = {};
    for (const [key, i] of columns) fields[key] = i === undefined ? '' : (parts[i] ?? '').trim();
    if (parts.length !== c.header.width) {
      const cut = end === bytes.length;
      const reason = `${parts.length} fields, expected ${c.header.width}${cut ? ', and no line end: the file is cut (a truncated download?)' : ''}`;
      yield { n, where, reason, fields, cut };
      continue;
    }
    yield { n, record: { kind: c.header.kind, where, fields } as OpenDataRecord };
  }
}

/** The records of one file (lines of the wrong width reported through `events.reject`), as the bytes come. */
export async function* recordsOf(name: string, chunks: AsyncIterable<Buffer>, events: ReadEvents): AsyncGenerator<OpenDataRecord> {
  for await (const c of fileChunks(name, chunks, events, 0)) {
    for (const item of chunkRecords(c)) {
      if ('record' in item) yield item.record;
      else events.reject(item.where, item.reason);
    }
  }
}
