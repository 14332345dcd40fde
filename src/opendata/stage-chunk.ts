import { hash } from 'node:crypto';
import { copyText } from '../fhir/types/copy.ts';
import type { FileKind } from '../vocabulary/formats/rpps.ts';
import { assertMappable, MapError, organizationId, practitionerId, roleId, structurePart } from './map.ts';
import { chunkRecords, type LineChunk, type OpenDataRecord } from './read.ts';

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
  kind: FileKind;
}

const md5 = (text: string) => hash('md5', text);
const NULL = '\\N';

/** The staging row of a line (the columns of import_line: src/opendata/stage.ts), or the MapError that keeps it out. */
function stagingRow(seq: number, record: OpenDataRecord): string {
  assertMappable(record);
  const person = practitionerId(record);
  const json = JSON.stringify(record.fields);
  let structure = NULL;
  let role = NULL;
  let structureDigest = NULL;
  if (record.kind === 'activity') {
    const id = organizationId(record);
    role = copyText(roleId(record));
    if (id !== undefined) {
      structure = copyText(id);
      structureDigest = md5(JSON.stringify(structurePart(record)));
    }
  }
  return `${seq}\t${record.kind}\t${copyText(person)}\t${structure}\t${role}\t${md5(json)}\t${structureDigest}\t${copyText(record.where)}\t${copyText(json)}\n`;
}

export function stageChunk(req: StageRequest): StageResult {
  const { chunk, seqBase } = req;
  const rows: string[] = [];
  const result = { lines: 0, records: 0, staged: 0, rejects: [] as [string, string][], kind: chunk.header.kind };
  for (const item of chunkRecords(chunk)) {
    result.lines++;
    if (!('record' in item)) {
      result.rejects.push([item.where, item.reason]);
      continue;
    }
    result.records++;
    try {
      rows.push(stagingRow(seqBase + item.n - chunk.first, item.record));
      result.staged++;
    } catch (err) {
      if (!(err instanceof MapError)) throw err;
      result.rejects.push([item.record.where, err.message]);
    }
  }
  return { copy: Buffer.from(rows.join('')), ...result };
}
