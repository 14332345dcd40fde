import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip, gunzipSync } from 'node:zlib';

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

/** Files named on the command line, directories expanded recursively (sorted, loadable only). */
export async function expandPaths(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const st = await stat(p);
    if (st.isDirectory()) {
      const names = (await readdir(p, { recursive: true })).map(String).sort();
      for (const n of names) {
        const full = path.join(p, n);
        if (isLoadable(n) && (await stat(full)).isFile()) out.push(full);
      }
    } else {
      out.push(p);
    }
  }
  return out;
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

function parse(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
}

/** Entries of one file. `onBytes` reports progress in bytes of the file as stored on disk. */
export async function* readEntries(file: string, onBytes: (n: number) => void = () => {}): AsyncGenerator<RawEntry> {
  const gz = file.toLowerCase().endsWith('.gz');
  const ndjson = /\.ndjson(\.gz)?$/i.test(file);
  if (!ndjson) {
    const raw = await readFile(file);
    onBytes(raw.length);
    let text: string;
    try {
      text = (gz ? gunzipSync(raw) : raw).toString('utf8');
    } catch (err) {
      yield { kind: 'invalid', where: file, reason: `cannot decompress (${(err as Error).message})` };
      return;
    }
    const r = parse(text.replace(/^\uFEFF/, ''));
    if (!r.ok) yield { kind: 'invalid', where: file, reason: r.reason };
    else yield* bundleEntries(file, r.value);
    return;
  }
  for await (const chunk of ndjsonChunks(file, onBytes)) {
    for (let i = 0; i < chunk.lines.length; i++) yield* lineEntries(file, chunk.first + i, chunk.lines[i]);
  }
}

/** A line of a chunk of NDJSON bytes: its number in the file, its byte range and its text. */
export interface ByteLine {
  n: number;
  start: number;
  end: number;
  line: string;
}

/**
 * The `lines` lines of a chunk of whole NDJSON lines (ByteChunk: the last may lack its newline),
 * `first` the number of the first: the one way the loader's worker threads cut a chunk, for the
 * bulk and the incremental loads alike. A line's bytes that are not UTF-8 decode as U+FFFD.
 */
export function* byteLines(bytes: Buffer, first: number, lines: number): Generator<ByteLine> {
  let start = 0;
  for (let i = 0; i < lines; i++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    yield { n: first + i, start, end, line: bytes.toString('utf8', start, end) };
    start = end + 1;
  }
}

/** The entries of line `n` (1-based) of an NDJSON file: a resource, a Bundle's entries, or why not. */
export function* lineEntries(file: string, n: number, line: string): Generator<RawEntry> {
  if (line.trim() === '') return;
  const where = `${file}:${n}`;
  const text = n === 1 ? line.replace(/^\uFEFF/, '') : line;
  const r = parse(text);
  if (!r.ok) yield { kind: 'invalid', where, reason: r.reason };
  else if ((r.value as { resourceType?: unknown })?.resourceType === 'Bundle') yield* bundleEntries(where, r.value);
  else yield { kind: 'resource', where, value: r.value, text };
}

export interface LineChunk {
  /** number of the first line (1-based). */
  first: number;
  lines: string[];
}

/**
 * The lines of an NDJSON file (.gz too), streamed in chunks of up to `size` lines. Lines are cut by
 * hand from 1 MiB reads (readline costs more than the JSON parsing).
 */
export async function* ndjsonChunks(file: string, onBytes: (n: number) => void = () => {}, size = 1000): AsyncGenerator<LineChunk> {
  const gz = file.toLowerCase().endsWith('.gz');
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  input.on('data', (chunk) => onBytes(chunk.length));
  const text = gz ? input.pipe(createGunzip()) : input;
  const errors: Error[] = [];
  text.on('error', (e: Error) => errors.push(e));
  const decoder = new StringDecoder('utf8');
  let n = 0;
  let rest = '';
  let lines: string[] = [];
  try {
    for await (const chunk of text) {
      const str = rest + decoder.write(chunk as Buffer);
      let start = 0;
      for (let nl = str.indexOf('\n'); nl >= 0; nl = str.indexOf('\n', start)) {
        lines.push(str.slice(start, nl));
        start = nl + 1;
        if (lines.length === size) {
          yield { first: n + 1, lines };
          n += lines.length;
          lines = [];
        }
      }
      rest = str.slice(start);
    }
    rest += decoder.end();
    if (rest !== '') lines.push(rest);
  } catch (err) {
    errors.push(err as Error);
  }
  // The lines read before a failure are still given, then the failure.
  if (lines.length) {
    yield { first: n + 1, lines };
    n += lines.length;
  }
  if (errors.length) throw new Error(`${file}: read failed after line ${n}: ${errors[0].message}`);
}

export interface ByteChunk {
  /** number of the first line (1-based). */
  first: number;
  /** lines in `bytes` (the last one may lack its newline at the end of the file). */
  lines: number;
  /** whole lines, UTF-8 (a chunk never cuts a line, so never a character). */
  bytes: Buffer;
  /**
   * `bytes` is the only view of its ArrayBuffer that anything holds: it can be handed to a worker
   * thread as it is (transferred) instead of copied.
   */
  owned: boolean;
}

const countLines = (b: Buffer) => {
  let n = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  return n;
};

/**
 * The lines of an NDJSON file (.gz too) as raw bytes in chunks of about `size` bytes, cut after a
 * newline: the bulk loader's worker threads decode and split them, the main thread only counts
 * newlines. A plain file is read into memory of each chunk's own (the carried partial line copied
 * in front), so that the chunk's bytes go to a worker without a copy: at national scale the copies
 * were 7 GB of memmove on the main thread, and their garbage a full collection every few chunks.
 */
export async function* ndjsonByteChunks(file: string, onBytes: (n: number) => void = () => {}, size = 1 << 20): AsyncGenerator<ByteChunk> {
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
