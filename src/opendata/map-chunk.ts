import type { FileKind } from '../vocabulary/formats/rpps.ts';
import { withMailboxes } from './mailbox.ts';
import { organizationOf, practitionerOf, roleOf, type Person } from './map.ts';
import { organizationFromParts } from './merge.ts';
import { fieldsOf, type ActivityRecord, type DiplomaRecord, type OpenDataRecord, type SavoirFaireRecord } from './read.ts';

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
  /** its structure has an active Location (snapshot.ts import_located). */
  located: boolean;
}

/** meta.versionId "1" and meta.lastUpdated (the run's start) on a mapped resource; the write path numbers versions. */
export const stamp = (resource: Json, lastUpdated: string): Json => ({ ...resource, meta: { versionId: '1', lastUpdated, ...(resource.meta as Json) } });

export const recordOf = (line: { at: string; fields: string }, kind: FileKind): OpenDataRecord =>
  ({ kind, where: line.at, fields: fieldsOf(kind, line.fields) }) as OpenDataRecord;

export interface PersonResources {
  practitioner: Json;
  roles: Json[];
}

/** A person's MSSanté mailbox, with the Organizations its structure identifier names. */
export interface PersonMailbox {
  telecom: Json;
  orgs: string[];
}

/**
 * A person's Practitioner and PractitionerRoles (one per distinct role id, from its first line), from
 * its lines in input order; its mailboxes on the Practitioner, and on each role at a structure the
 * mailbox names; a role at a structure with an active Location refers to it.
 */
export function personResources(lines: readonly StagedLine[], lastUpdated: string, mailboxes: readonly PersonMailbox[] = []): PersonResources {
  const person: { activities: ActivityRecord[]; savoirFaire: SavoirFaireRecord[]; diplomas: DiplomaRecord[] } = { activities: [], savoirFaire: [], diplomas: [] };
  const roles = new Map<string, Json>();
  for (const line of lines) {
    const record = recordOf(line, line.kind);
    if (record.kind === 'activity') {
      person.activities.push(record);
      if (!roles.has(line.role!)) roles.set(line.role!, stamp(withLocation(roleMailboxes(roleOf(record), mailboxes), line.located), lastUpdated));
    } else if (record.kind === 'savoirFaire') person.savoirFaire.push(record);
    else if (record.kind === 'diploma') person.diplomas.push(record);
  }
  const practitioner = withMailboxes(practitionerOf(person as Person), mailboxes.map((m) => m.telecom));
  return { practitioner: stamp(practitioner, lastUpdated), roles: [...roles.values()] };
}

/** A PractitionerRole with the mailboxes of its person that name its Organization. */
export function roleMailboxes(role: Json, mailboxes: readonly PersonMailbox[]): Json {
  const ref = (role.organization as { reference?: string } | undefined)?.reference;
  const org = ref?.slice('Organization/'.length);
  return withMailboxes(role, org === undefined ? [] : mailboxes.filter((m) => m.orgs.includes(org)).map((m) => m.telecom));
}

/**
 * A PractitionerRole with `location` referring to its Organization's Location when `located` (the
 * establishment has an active Location: same id), without it otherwise.
 */
export function withLocation(role: Json, located: boolean): Json {
  const { location: _, ...out } = role;
  const ref = (role.organization as { reference?: string } | undefined)?.reference;
  if (!located || ref === undefined) return out;
  return { ...out, location: [{ reference: `Location/${ref.slice('Organization/'.length)}` }] };
}

/** What publish.ts reads of a structure to build: its parts as the sources left them (src/opendata/merge.ts). */
export interface StructureRow {
  org: string;
  /** the RPPS activity line its RPPS part is built from (this run's choice, or the state's). */
  rppsFields: string | null;
  rppsAt: string | null;
  /** a structure imported before the state kept its line: its stored Organization stands for its RPPS part. */
  rppsLegacy: string | null;
  finess: string | null;
  /** its ORG mailboxes' telecoms, a JSON array. */
  mailboxes: string | null;
  /** the Location the feed gives it now, when the feed changed it (src/opendata/finess-map.ts locationOf). */
  location: string | null;
}

/** The Organization of a structure's parts, stamped; undefined when no source describes it any more. */
export function structureResource(row: StructureRow, lastUpdated: string): Json | undefined {
  const rpps = row.rppsFields !== null
    ? organizationOf(recordOf({ at: row.rppsAt ?? '', fields: row.rppsFields }, 'activity') as ActivityRecord)
    : row.rppsLegacy !== null ? (JSON.parse(row.rppsLegacy) as Json) : undefined;
  const finess = row.finess !== null ? (JSON.parse(row.finess) as Json) : undefined;
  const org = organizationFromParts({ rpps, finess, mailboxes: row.mailboxes === null ? [] : JSON.parse(row.mailboxes) });
  return org && stamp(org, lastUpdated);
}

/**
 * The rows of a chunk, COPY text (tab-separated, NULL as \N), sorted by their first column:
 * - persons: person, kind, role, at, fields, mailboxes, located — every line of each person of the
 *   chunk, its mailboxes (PersonMailbox[] JSON) repeated on each, `t` when its structure has an
 *   active Location;
 * - structures: the columns of StructureRow, one row per structure (publish.ts structureRows).
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
  locations: number;
}

const UNESCAPE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
/** A field of COPY text output as it was stored (PostgreSQL escapes backslash and control characters). */
const fromCopy = (s: string): string => (s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c) : s);

export function mapChunk(req: MapRequest): MapResult {
  const text = Buffer.from(req.bytes.buffer, req.bytes.byteOffset, req.bytes.byteLength).toString('utf8');
  const out: string[] = [];
  const result = { persons: 0, roles: 0, structures: 0, locations: 0 };
  let person: string | undefined;
  let lines: StagedLine[] = [];
  let mailboxes: PersonMailbox[] = [];
  const flush = () => {
    if (person === undefined) return;
    const r = personResources(lines, req.lastUpdated, mailboxes);
    out.push(JSON.stringify(r.practitioner));
    for (const role of r.roles) out.push(JSON.stringify(role));
    result.persons++;
    result.roles += r.roles.length;
    lines = [];
  };
  const field = (v: string) => (v === '\\N' ? null : fromCopy(v));
  for (const row of text.split('\n')) {
    if (row === '') continue;
    const f = row.split('\t');
    if (req.kind === 'structures') {
      const row = { org: f[0], rppsFields: field(f[1]), rppsAt: field(f[2]), rppsLegacy: field(f[3]), finess: field(f[4]), mailboxes: field(f[5]), location: field(f[6]) };
      const org = structureResource(row, req.lastUpdated);
      if (org) {
        out.push(JSON.stringify(org));
        result.structures++;
      }
      if (row.location !== null) {
        out.push(JSON.stringify(stamp(JSON.parse(row.location), req.lastUpdated)));
        result.locations++;
      }
      continue;
    }
    if (f[0] !== person) {
      flush();
      person = f[0];
      mailboxes = JSON.parse(field(f[5]) ?? '[]');
    }
    lines.push({ kind: f[1] as FileKind, role: field(f[2]), at: fromCopy(f[3]), fields: fromCopy(f[4]), located: f[6] === 't' });
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
