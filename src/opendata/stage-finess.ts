import { hash } from 'node:crypto';
import type { Db } from '../db.ts';
import { copyText, copyTextArray } from '../fhir/types/copy.ts';
import { CopyIn } from '../store/copy-in.ts';
import { establishmentId, legalEntityId } from '../vocabulary/formats/finess.ts';
import { establishmentOf, hasLocation, identifiersOf, isActive, legalEntityOf, locationOf } from './finess-map.ts';
import { readFiness, type FinessEvents, type FinessRecord } from './finess-read.ts';
import { NOT_A_KEY } from './map.ts';
import { MAPPING_VERSION } from './snapshot.ts';

/**
 * The FINESS feed staged: each legal entity and establishment of the files, read as a stream
 * (src/opendata/finess-read.ts), one row of import_finess_now each, by one COPY: what the snapshot
 * (src/opendata/snapshot.ts diffFiness) compares by digest and the writer merges.
 *
 * An entity's digest is of what its resources are made from: the record as read, whether it is in
 * service today (a closing date passes without the feed changing), and MAPPING_VERSION. An entity
 * whose digest is its active state's is unchanged: staged with its keys alone, never mapped (a daily
 * feed is ~99 % such rows). Any other is mapped to the Organization the feed alone describes
 * (src/opendata/finess-map.ts), with an establishment's Location.
 */

export interface FinessStageSummary {
  /** entities read (rejected ones included). */
  records: number;
  staged: number;
  rejected: number;
}

const ROWS_PER_WRITE = 2000;

/** The values mailboxes name an entity by: its identifiers but the SIREN (map.ts NOT_A_KEY). */
const keysOf = (rec: FinessRecord): string[] =>
  identifiersOf(rec).filter((i) => (i.type as { coding: { code: string }[] }).coding[0].code !== NOT_A_KEY).map((i) => i.value as string);

/** The digest of an entity (see above), as of `today` (YYYY-MM-DD, UTC). */
export function finessDigest(rec: FinessRecord, today?: string): string {
  const active = isActive(rec.data.state, rec.data.closed, today);
  return hash('md5', `${MAPPING_VERSION}\n${active}\n${JSON.stringify([rec.kind, rec.finess, rec.kind === 'establishment' ? rec.legal : '', rec.data])}`);
}

/** The digests of the active FINESS state (import_finess), by Organization id. */
async function activeDigests(db: Db): Promise<Map<string, string>> {
  const rows = await db<{ org: string; digest: string }[]>`select org, digest from import_finess where active`;
  return new Map(rows.map((r) => [r.org, r.digest]));
}

/**
 * Stages `files` (FINESS feeds) into import_finess_now; throws OpenDataError for a file that is not a whole feed.
 * `fresh`: the state is not compared with (a database without resources starts afresh), so every entity is staged whole.
 */
export async function stageFiness(db: Db, files: readonly string[], events: FinessEvents, fresh: boolean): Promise<FinessStageSummary> {
  const summary: FinessStageSummary = { records: 0, staged: 0, rejected: 0 };
  if (files.length === 0) return summary;
  const state = fresh ? new Map<string, string>() : await activeDigests(db);
  const counting: FinessEvents = {
    reject: (where, reason) => {
      summary.records++;
      summary.rejected++;
      events.reject(where, reason);
    },
    bytes: events.bytes,
  };
  const out = await CopyIn.open(db`copy import_finess_now (seq, org, kind, digest, at, content, location, located, keys) from stdin`);
  try {
    let rows: string[] = [];
    for (const file of files) {
      for await (const rec of readFiness(file, counting)) {
        summary.records++;
        const digest = finessDigest(rec);
        const id = rec.kind === 'legal' ? legalEntityId(rec.finess) : establishmentId(rec.finess);
        let content = '\\N';
        let place = '\\N';
        if (state.get(id) !== digest) {
          content = copyText(JSON.stringify(rec.kind === 'legal' ? legalEntityOf(rec) : establishmentOf(rec)));
          const location = rec.kind === 'legal' ? undefined : locationOf(rec);
          if (location !== undefined) place = copyText(JSON.stringify(location));
        }
        rows.push(`${summary.staged}\t${copyText(id)}\t${rec.kind}\t${digest}\t${copyText(rec.where)}\t${content}\t${place}\t${hasLocation(rec)}\t${copyTextArray(keysOf(rec))}\n`);
        summary.staged++;
        if (rows.length >= ROWS_PER_WRITE) {
          await out.write(Buffer.from(rows.join('')));
          rows = [];
        }
      }
    }
    if (rows.length) await out.write(Buffer.from(rows.join('')));
    await out.end();
  } catch (err) {
    out.abort(err as Error);
    throw err;
  }
  return summary;
}
