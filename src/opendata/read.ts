import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { KINDS, recognise, whyUnrecognised, type FieldsOf, type FileKind, type Recognised } from './columns.ts';
import { linesOf } from './lines.ts';
import { isZip, openZip, verifyZip, type ZipArchive } from './zip.ts';

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
  const archives: ZipArchive[] = [];
  try {
    const sources = await sourcesOf(paths, archives);
    for (const a of archives) await verifyZip(a);
    events.total?.(sources.reduce((n, s) => n + s.size, 0));
    for (const source of sources) yield* recordsOf(source.name, counted(source.chunks(), events.bytes), events);
  } finally {
    for (const a of archives) a.close();
  }
}

/** The files named or found under folders (sorted), ZIP archives replaced by their entries. */
async function sourcesOf(paths: readonly string[], archives: ZipArchive[]): Promise<Source[]> {
  const files: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) {
      for (const n of (await readdir(p, { recursive: true })).map(String).sort()) {
        const full = path.join(p, n);
        if ((await stat(full)).isFile()) files.push(full);
      }
    } else files.push(p);
  }
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

/** The records of one file: the first non-empty line is its header, empty lines are skipped. */
export async function* recordsOf(name: string, chunks: AsyncIterable<Buffer>, events: ReadEvents): AsyncGenerator<OpenDataRecord> {
  let header: Recognised | undefined;
  let columns: [string, number | undefined][] = [];
  for await (const { n, text } of linesOf(chunks)) {
    if (text.trim() === '') continue;
    const parts = splitFields(text);
    if (header === undefined) {
      header = recognise(parts);
      if (header === undefined) {
        events.skip(name, `${NOT_AN_EXTRACT} (${whyUnrecognised(parts)})`);
        return;
      }
      const index = header.index as Partial<Record<string, number>>;
      columns = KINDS[header.kind].columns.map((key) => [key, index[key]]);
      continue;
    }
    const where = `${name}:${n}`;
    if (parts.length !== header.width) {
      events.reject(where, `${parts.length} fields, expected ${header.width}`);
      continue;
    }
    const fields: Record<string, string> = {};
    for (const [key, i] of columns) fields[key] = i === undefined ? '' : parts[i].trim();
    yield { kind: header.kind, where, fields } as OpenDataRecord;
  }
  if (header === undefined) events.skip(name, NO_HEADER);
}
