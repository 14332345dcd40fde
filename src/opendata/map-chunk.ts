import type { FileKind } from '../vocabulary/formats/rpps.ts';
import { organizationOf, practitionerOf, roleOf, type Person } from './map.ts';
import type { ActivityRecord, DiplomaRecord, OpenDataRecord, SavoirFaireRecord } from './read.ts';

/**
 * Staged lines (src/opendata/stage.ts) made into resources. A first import maps every staged line,
 * a chunk at a time: COPY text of staged rows in, NDJSON bytes out (mapChunk). Pure, so that chunks
 * are mapped by worker threads (src/opendata/pool.ts) or on the main thread alike.
 */

type Json = Record<string, unknown>;

/** A staged line as the writer reads it back. */
export interface StagedLine {
  kind: FileKind;
  at: string;
  role: string | null;
  fields: string;
}

/** meta.versionId "1" and meta.lastUpdated (the run's start) on a mapped resource; the write path numbers versions. */
export const stamp = (resource: Json, lastUpdated: string): Json => ({ ...resource, meta: { versionId: '1', lastUpdated, ...(resource.meta as Json) } });

export const recordOf = (line: { at: string; fields: string }, kind: FileKind): OpenDataRecord =>
  ({ kind, where: line.at, fields: JSON.parse(line.fields) }) as OpenDataRecord;

export interface PersonResources {
  practitioner: Json;
  roles: Json[];
}

/** A person's Practitioner and PractitionerRoles (one per distinct role id, from its first line), from its lines in input order. */
export function personResources(lines: readonly StagedLine[], lastUpdated: string): PersonResources {
  const person: { activities: ActivityRecord[]; savoirFaire: SavoirFaireRecord[]; diplomas: DiplomaRecord[] } = { activities: [], savoirFaire: [], diplomas: [] };
  const roles = new Map<string, Json>();
  for (const line of lines) {
    const record = recordOf(line, line.kind);
    if (record.kind === 'activity') {
      person.activities.push(record);
      if (!roles.has(line.role!)) roles.set(line.role!, stamp(roleOf(record), lastUpdated));
    } else if (record.kind === 'savoirFaire') person.savoirFaire.push(record);
    else person.diplomas.push(record);
  }
  return { practitioner: stamp(practitionerOf(person as Person), lastUpdated), roles: [...roles.values()] };
}

/** The Organization of a structure's activity line (publish.ts chooses which: the same whatever the lines' order). */
export const structureResource = (line: { at: string; fields: string }, lastUpdated: string): Json =>
  stamp(organizationOf(recordOf(line, 'activity') as ActivityRecord)!, lastUpdated);

/**
 * The rows of a chunk, COPY text (tab-separated, NULL as \N), sorted by their first column:
 * - persons: person, kind, role, at, fields — every line of each person of the chunk;
 * - structures: structure, at, fields — one line per structure (publish.ts changedStructures).
 */
export type ChunkKind = 'persons' | 'structures';

export interface MapRequest {
  kind: ChunkKind;
  bytes: Uint8Array;
  lastUpdated: string;
}

export interface MapResult {
  /** the chunk's resources, one JSON per line. */
  ndjson: Uint8Array;
  persons: number;
  roles: number;
  structures: number;
}

const UNESCAPE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
/** A field of COPY text output as it was stored (PostgreSQL escapes backslash and control characters). */
const fromCopy = (s: string): string => (s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c) : s);

export function mapChunk(req: MapRequest): MapResult {
  const text = Buffer.from(req.bytes.buffer, req.bytes.byteOffset, req.bytes.byteLength).toString('utf8');
  const out: string[] = [];
  const result = { persons: 0, roles: 0, structures: 0 };
  let person: string | undefined;
  let lines: StagedLine[] = [];
  const flush = () => {
    if (person === undefined) return;
    const r = personResources(lines, req.lastUpdated);
    out.push(JSON.stringify(r.practitioner));
    for (const role of r.roles) out.push(JSON.stringify(role));
    result.persons++;
    result.roles += r.roles.length;
    lines = [];
  };
  for (const row of text.split('\n')) {
    if (row === '') continue;
    const f = row.split('\t');
    if (req.kind === 'structures') {
      out.push(JSON.stringify(structureResource({ at: fromCopy(f[1]), fields: fromCopy(f[2]) }, req.lastUpdated)));
      result.structures++;
      continue;
    }
    if (f[0] !== person) {
      flush();
      person = f[0];
    }
    lines.push({ kind: f[1] as FileKind, role: f[2] === '\\N' ? null : fromCopy(f[2]), at: fromCopy(f[3]), fields: fromCopy(f[4]) });
  }
  flush();
  return { ndjson: Buffer.from(out.length ? `${out.join('\n')}\n` : ''), ...result };
}

const NEWLINE = 0x0a;
const TAB = 0x09;

/**
 * Cuts a stream of COPY text rows sorted by their first column into chunks of about `size` bytes
 * that each hold every row of their first-column values: a person's lines are never split. Each
 * chunk owns its memory (it can be transferred to a worker).
 */
export async function* rowChunks(rows: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const piece of rows) {
    pending.push(piece);
    pendingBytes += piece.byteLength;
    if (pendingBytes < size) continue;
    const buf = joined(pending, pendingBytes);
    const cut = lastGroupStart(buf);
    if (cut === 0) {
      pending = [buf];
      continue;
    }
    const rest = buf.subarray(cut);
    pending = rest.byteLength ? [rest.slice()] : [];
    pendingBytes = rest.byteLength;
    yield buf.subarray(0, cut);
  }
  if (pendingBytes) yield joined(pending, pendingBytes);
}

/** The bytes of `parts` in memory of their own. */
function joined(parts: Uint8Array[], bytes: number): Uint8Array {
  const buf = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.byteLength;
  }
  return buf;
}

/**
 * Where the rows of the last complete row's first-column value start in `buf` (the rows after it,
 * that value's and an incomplete last row, may continue in the next bytes): 0 when there is no
 * earlier value to cut after.
 */
export function lastGroupStart(buf: Uint8Array): number {
  const end = buf.lastIndexOf(NEWLINE);
  if (end < 0) return 0;
  let start = lineStart(buf, end);
  const tab = buf.indexOf(TAB, start);
  // The value and its tab, or (a row without one) the whole row and its newline.
  const key = buf.subarray(start, (tab < 0 || tab > end ? end : tab) + 1);
  const sameKey = (at: number) => key.every((b, i) => buf[at + i] === b);
  while (start > 0) {
    const prev = lineStart(buf, start - 1);
    if (!sameKey(prev)) break;
    start = prev;
  }
  return start;
}

/** The start of the row that holds position `at`. */
const lineStart = (buf: Uint8Array, at: number): number => (at === 0 ? 0 : buf.lastIndexOf(NEWLINE, at - 1) + 1);
