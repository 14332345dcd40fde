import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createGunzip, gunzipSync } from 'node:zlib';
import { MAX_DEPTH, TOO_DEEP } from '../fhir/resource.ts';
import { CHUNK_BYTES } from './limits.ts';

/**
 * Input files as a stream of raw entries, each with the place it came from: one resource per
 * NDJSON line (streamed, never read whole), or the resource(s) of a .json file (one resource or a
 * Bundle of any type; DELETE requests of batch/transaction Bundles become deletions).
 */
export type RawEntry =
  /** `text`: the entry's own JSON text, when it is a whole NDJSON line (it may be stored as it is). */
  | { kind: 'resource'; where: string; value: unknown; text?: string }
  | { kind: 'delete'; where: string; url: unknown }
  | { kind: 'invalid'; where: string; reason: string };

const EXTENSIONS = ['.json', '.ndjson', '.json.gz', '.ndjson.gz'];
export const isLoadable = (f: string) => EXTENSIONS.some((e) => f.toLowerCase().endsWith(e));
/** NDJSON (one resource per line, streamed), or gzip-compressed NDJSON. */
export const isNdjson = (f: string) => /\.ndjson(\.gz)?$/i.test(f);

/** Why a file is not loaded, as the loader says it once per file. */
export const NOT_LOADABLE = `skipped: not ${EXTENSIONS.slice(0, -1).join(', ')} or ${EXTENSIONS.at(-1)}`;

/**
 * Files named on the command line, directories expanded recursively (sorted): the loadable ones.
 * Every other file, named or found, is given to `onSkip` once and not read.
 */
export async function expandPaths(paths: string[], onSkip: (file: string) => void = () => {}): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const st = await stat(p);
    if (st.isDirectory()) {
      const names = (await readdir(p, { recursive: true })).map(String).sort();
      for (const n of names) {
        const full = path.join(p, n);
        if (!(await stat(full)).isFile()) continue;
        if (isLoadable(n)) out.push(full);
        else onSkip(full);
      }
    } else if (isLoadable(p)) {
      out.push(p);
    } else {
      onSkip(p);
    }
  }
  return out;
}

export const NOT_UTF8 = 'not valid UTF-8';

/**
 * Where JSON text first nests deeper than MAX_DEPTH (the index of the bracket), or -1: iterative,
 * before the text is parsed. Text that is not JSON may give either answer (JSON.parse rejects it).
 */
export function tooDeepAt(text: string): number {
  // No more openers in all than the limit (nearly every resource): no deeper, whatever the strings hold.
  let openers = 0;
  for (let i = text.indexOf('{'); i >= 0 && openers <= MAX_DEPTH; i = text.indexOf('{', i + 1)) openers++;
  for (let i = text.indexOf('['); i >= 0 && openers <= MAX_DEPTH; i = text.indexOf('[', i + 1)) openers++;
  if (openers <= MAX_DEPTH) return -1;
  // One pass, strings skipped by indexOf.
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the next one after an even number of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return -1;
        let b = i - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((i - b) % 2 === 1) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_DEPTH) return i;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return -1;
}

/** Line (1-based) of character `at` of `text`. */
function lineAt(text: string, at: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Line (1-based) of the first line of `bytes` that is not UTF-8 (`bytes` as a whole is not). */
function badUtf8Line(bytes: Buffer): number {
  let n = 1;
  for (let start = 0; ; n++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    if (!isUtf8(bytes.subarray(start, end)) || end === bytes.length) return n;
    start = end + 1;
  }
}

export function* bundleEntries(file: string, value: unknown): Generator<RawEntry> {
  const b = value as { resourceType?: unknown; entry?: unknown };
  if (b?.resourceType !== 'Bundle') {
    yield { kind: 'resource', where: file, value };
    return;
  }
  if (b.entry === undefined) return;
  if (!Array.isArray(b.entry)) {
    yield { kind: 'invalid', where: file, reason: 'Bundle.entry must be an array' };
    return;
  }
  for (const [i, e] of b.entry.entries()) {
    const where = `${file}#entry[${i}]`;
    const entry = e as { resource?: unknown; request?: { method?: unknown; url?: unknown } };
    if (typeof entry !== 'object' || entry === null) yield { kind: 'invalid', where, reason: 'entry is not an object' };
    else if (entry.request?.method === 'DELETE') yield { kind: 'delete', where, url: entry.request.url };
    else if (entry.resource === undefined) yield { kind: 'invalid', where, reason: 'entry has no resource' };
    else yield* bundleEntries(where, entry.resource);
  }
}

/** JSON text parsed, or why not (`deepAt`: where it nests too deep, checked first). */
function parse(text: string): { ok: true; value: unknown } | { ok: false; reason: string; deepAt?: number } {
  const deepAt = tooDeepAt(text);
  if (deepAt >= 0) return { ok: false, reason: TOO_DEEP, deepAt };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
}

/** Entries of one file. `onBytes` reports progress in bytes of the file as stored on disk. */
export async function* readEntries(file: string, onBytes: (n: number) => void = () => {}): AsyncGenerator<RawEntry> {
  const gz = file.toLowerCase().endsWith('.gz');
  const ndjson = isNdjson(file);
  if (!ndjson) {
    const raw = await readFile(file);
    onBytes(raw.length);
    let bytes: Buffer;
    try {
      bytes = gz ? gunzipSync(raw) : raw;
    } catch (err) {
      yield { kind: 'invalid', where: file, reason: `cannot decompress (${(err as Error).message})` };
      return;
    }
    if (!isUtf8(bytes)) {
      yield { kind: 'invalid', where: `${file}:${badUtf8Line(bytes)}`, reason: NOT_UTF8 };
      return;
    }
    const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
    const r = parse(text);
    if (!r.ok) yield { kind: 'invalid', where: r.deepAt === undefined ? file : `${file}:${lineAt(text, r.deepAt)}`, reason: r.reason };
    else yield* bundleEntries(file, r.value);
    return;
  }
  for await (const chunk of ndjsonByteChunks(file, onBytes)) {
    for (const { n, line, utf8 } of byteLines(chunk.bytes, chunk.first, chunk.lines)) yield* lineEntries(file, n, line, utf8);
  }
}

/**
 * A line of a chunk of NDJSON bytes: its number in the file, its byte range and its text (empty
 * when its bytes are not UTF-8: `utf8` false).
 */
export interface ByteLine {
  n: number;
  start: number;
  end: number;
  line: string;
  utf8: boolean;
}

/**
 * The `lines` lines of a chunk of whole NDJSON lines (ByteChunk: the last may lack its newline),
 * `first` the number of the first: the one way every load cuts NDJSON into lines. UTF-8 is checked
 * on the whole chunk at once, line by line only in a chunk that fails.
 */
export function* byteLines(bytes: Buffer, first: number, lines: number): Generator<ByteLine> {
  const valid = isUtf8(bytes);
  let start = 0;
  for (let i = 0; i < lines; i++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const utf8 = valid || isUtf8(bytes.subarray(start, end));
    yield { n: first + i, start, end, line: utf8 ? bytes.toString('utf8', start, end) : '', utf8 };
    start = end + 1;
  }
}

/** A line's text, as byteLines gives it. */
export type LineText = Pick<ByteLine, 'line' | 'utf8'>;

/** The text of the given lines (1-based) of an NDJSON file, read again. */
export async function ndjsonLines(file: string, wanted: ReadonlySet<number>): Promise<Map<number, LineText>> {
  const texts = new Map<number, LineText>();
  for await (const chunk of ndjsonByteChunks(file)) {
    for (const { n, line, utf8 } of byteLines(chunk.bytes, chunk.first, chunk.lines)) if (wanted.has(n)) texts.set(n, { line, utf8 });
  }
  return texts;
}

/**
 * The entries of line `n` (1-based) of an NDJSON file: a resource, a Bundle's entries, or why not
 * (`utf8` false: the line's bytes are not UTF-8).
 */
export function* lineEntries(file: string, n: number, line: string, utf8 = true): Generator<RawEntry> {
  const where = `${file}:${n}`;
  if (!utf8) {
    yield { kind: 'invalid', where, reason: NOT_UTF8 };
    return;
  }
  if (line.trim() === '') return;
  const text = n === 1 ? line.replace(/^\uFEFF/, '') : line;
  const r = parse(text);
  if (!r.ok) yield { kind: 'invalid', where, reason: r.reason };
  else if ((r.value as { resourceType?: unknown })?.resourceType === 'Bundle') yield* bundleEntries(where, r.value);
  else yield { kind: 'resource', where, value: r.value, text };
}

export interface ByteChunk {
  /** number of the first line (1-based). */
  first: number;
  /** lines in `bytes` (the last one may lack its newline at the end of the file). */
  lines: number;
  /** whole lines (a chunk never cuts a line, so never a UTF-8 character). */
  bytes: Buffer;
  /**
   * `bytes` is the only view of its ArrayBuffer that anything holds: it can be handed to a worker
   * thread as it is (transferred) instead of copied.
   */
  owned: boolean;
}

/** Whether `bytes` spans the whole of its ArrayBuffer (no view of another part of it, as a Buffer of Node's shared pool is). */
export const spansBuffer = (bytes: Uint8Array): boolean => bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

const countLines = (b: Buffer) => {
  let n = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  return n;
};

/**
 * The lines of an NDJSON file (.gz too) as raw bytes in chunks of about `size` bytes, cut after a
 * newline: the bulk loader's worker threads decode and split them, the main thread only counts
 * newlines. A plain file is read into memory of each chunk's own (the carried partial line copied
 * in front), so that the chunk's bytes go to a worker without a copy (the copies, and their garbage,
 * would be the main thread's biggest cost).
 */
export async function* ndjsonByteChunks(file: string, onBytes: (n: number) => void = () => {}, size = CHUNK_BYTES): AsyncGenerator<ByteChunk> {
  if (!file.toLowerCase().endsWith('.gz')) {
    yield* plainByteChunks(file, onBytes, size);
    return;
  }
  const input = createReadStream(file, { highWaterMark: size });
  input.on('data', (chunk) => onBytes(chunk.length));
  const stream = input.pipe(createGunzip({ chunkSize: size }));
  const errors: Error[] = [];
  stream.on('error', (e: Error) => errors.push(e));
  let first = 1;
  let rest: Buffer | undefined;
  try {
    for await (const data of stream) {
      const buf: Buffer = rest ? Buffer.concat([rest, data as Buffer]) : (data as Buffer);
      const cut = buf.lastIndexOf(10);
      if (cut < 0) {
        rest = buf;
        continue;
      }
      const bytes = buf.subarray(0, cut + 1);
      rest = cut + 1 < buf.length ? buf.subarray(cut + 1) : undefined;
      const lines = countLines(bytes);
      yield { first, lines, bytes, owned: false };
      first += lines;
    }
  } catch (err) {
    errors.push(err as Error);
  }
  if (rest && rest.length) {
    yield { first, lines: 1, bytes: rest, owned: false };
    first += 1;
  }
  if (errors.length) throw new Error(`${file}: read failed after line ${first - 1}: ${errors[0].message}`);
}

async function* plainByteChunks(file: string, onBytes: (n: number) => void, size: number): AsyncGenerator<ByteChunk> {
  let first = 1;
  let fh: FileHandle | undefined;
  try {
    fh = await open(file, 'r');
    let rest: Buffer = Buffer.alloc(0);
    for (;;) {
      // A line longer than a chunk: the buffer grows until it holds a newline.
      const buf = Buffer.allocUnsafeSlow(Math.max(size, rest.length * 2));
      rest.copy(buf);
      const { bytesRead } = await fh.read(buf, rest.length, buf.length - rest.length, null);
      onBytes(bytesRead);
      const filled = rest.length + bytesRead;
      if (bytesRead === 0) {
        if (filled) yield { first, lines: 1, bytes: buf.subarray(0, filled), owned: true };
        return;
      }
      const cut = buf.lastIndexOf(10, filled - 1);
      if (cut < 0) {
        rest = buf.subarray(0, filled);
        continue;
      }
      rest = Buffer.from(buf.subarray(cut + 1, filled)); // a copy: buf goes to a worker
      const bytes = buf.subarray(0, cut + 1);
      const lines = countLines(bytes);
      yield { first, lines, bytes, owned: true };
      first += lines;
    }
  } catch (err) {
    throw new Error(`${file}: read failed after line ${first - 1}: ${(err as Error).message}`);
  } finally {
    await fh?.close();
  }
}
