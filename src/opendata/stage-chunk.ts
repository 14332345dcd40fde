import { hash } from 'node:crypto';
import { copyText, copyTextArray } from '../fhir/types/copy.ts';
import type { FileKind } from '../vocabulary/formats/rpps.ts';
import { mailboxOf } from './mailbox.ts';
import { assertMappable, KEY_COLUMNS, MapError, organizationId, practitionerId, roleId, structurePart } from './map.ts';
import { chunkRecords, fieldsJson, type LineChunk, type OpenDataRecord } from './read.ts';

/**
 * A chunk of an extract's lines as rows of import_line (src/opendata/stage.ts), COPY text: its
 * records read, their ids and digests computed. Pure: it runs in a worker thread
 * (src/opendata/pool.ts) or on the main thread.
 */

export interface StageRequest {
  chunk: LineChunk;
  /** seq of the chunk's first line; line n gets seqBase + n - chunk.first (input order). */
  seqBase: number;
}

export interface StageResult {
  /** COPY text of the staged rows. */
  copy: Uint8Array;
  /** data lines read (rejected ones included). */
  lines: number;
  /** lines read as records of the file's kind (staged, or rejected by the mapper). */
  records: number;
  staged: number;
  /** the lines left out, in line order: where (`file:line`) and why. */
  rejects: [string, string][];
  /** the persons named by lines left out, who keep their state (src/opendata/snapshot.ts). */
  held: string[];
  /** lines left out that name no person one can trust. */
  unattributed: number;
  /** where the file's last line is cut (src/opendata/read.ts chunkRecords). */
  cut: string[];
  kind: FileKind;
}

const md5 = (text: string) => hash('md5', text);
const NULL = '\\N';

/**
 * The staging row of a mailbox line: person (the IDNPS, '' for ORG), structure (the identifier
 * value), role (the mailbox type), digest (of what the mailbox is: owner and telecom, so lines
 * differing in nothing else are one mailbox) and, as its fields, the telecom.
 */
function mailboxRow(seq: number, record: Extract<OpenDataRecord, { kind: 'mailbox' }>): string {
  const m = mailboxOf(record);
  const telecom = JSON.stringify(m.telecom);
  const digest = md5(JSON.stringify([m.kind, m.person, m.structure, telecom]));
  const structure = m.structure === null ? NULL : copyText(m.structure);
  return `${seq}\tmailbox\t${copyText(m.person ?? '')}\t${structure}\t${m.kind}\t${digest}\t${NULL}\t${NULL}\t${copyText(record.where)}\t${copyText(telecom)}\n`;
}

/**
 * The staging row of a line (the columns of import_line: src/opendata/stage.ts), or the MapError
 * that keeps it out. `keyed`: the structures and digests whose keys the chunk has already staged.
 */
function stagingRow(seq: number, record: OpenDataRecord, keyed: Set<string>): string {
  if (record.kind === 'mailbox') return mailboxRow(seq, record);
  assertMappable(record);
  const person = practitionerId(record);
  const json = fieldsJson(record);
  let structure = NULL;
  let role = NULL;
  let structureDigest = NULL;
  let keys = NULL;
  if (record.kind === 'activity') {
    const id = organizationId(record);
    role = copyText(roleId(record));
    if (id !== undefined) {
      structure = copyText(id);
      structureDigest = md5(JSON.stringify(structurePart(record)));
      const seen = `${id}\t${structureDigest}`;
      if (!keyed.has(seen)) {
        keyed.add(seen);
        keys = copyTextArray(KEY_COLUMNS.map((k) => record.fields[k]).filter((v) => v !== undefined && v !== ''));
      }
    }
  }
  return `${seq}\t${record.kind}\t${copyText(person)}\t${structure}\t${role}\t${md5(json)}\t${structureDigest}\t${keys}\t${copyText(record.where)}\t${copyText(json)}\n`;
}

/**
 * The person a rejected line names, if its identifier columns read as one (practitionerId checks
 * that the IDNPS is the type and the identifier joined, which a line cut or shifted before them
 * virtually never passes).
 */
function personNamed(record: OpenDataRecord): string | undefined {
  // A mailbox line holds no RPPS person: a rejected one keeps the mailboxes (FEEDS.mailbox).
  if (record.kind === 'mailbox') return undefined;
  try {
    return practitionerId(record);
  } catch (err) {
    if (err instanceof MapError) return undefined;
    throw err;
  }
}

export function stageChunk(req: StageRequest): StageResult {
  const { chunk, seqBase } = req;
  const rows: string[] = [];
  const keyed = new Set<string>();
  const kind = chunk.header.kind;
  const result = { lines: 0, records: 0, staged: 0, rejects: [] as [string, string][], held: [] as string[], unattributed: 0, cut: [] as string[], kind };
  const reject = (record: OpenDataRecord, reason: string) => {
    result.rejects.push([record.where, reason]);
    const person = personNamed(record);
    if (person === undefined) result.unattributed++;
    else result.held.push(person);
  };
  for (const item of chunkRecords(chunk)) {
    result.lines++;
    if (!('record' in item)) {
      if (item.cut) result.cut.push(item.where);
      reject({ kind, where: item.where, fields: item.fields } as OpenDataRecord, item.reason);
      continue;
    }
    result.records++;
    try {
      rows.push(stagingRow(seqBase + item.n - chunk.first, item.record, keyed));
      result.staged++;
    } catch (err) {
      if (!(err instanceof MapError)) throw err;
      reject(item.record, err.message);
    }
  }
  return { copy: Buffer.from(rows.join('')), ...result };
}
