import { hash } from 'node:crypto';
import type { Db } from '../db.ts';
import { copyText, copyTextArray } from '../fhir/types/copy.ts';
import { CopyIn } from '../store/copy-in.ts';
import { establishmentOf, legalEntityOf, locationOf } from './finess-map.ts';
import { readFiness, type FinessEvents } from './finess-read.ts';
import { NOT_A_KEY } from './map.ts';

/**
 * The FINESS feed staged: each legal entity and establishment of the files, read as a stream
 * (src/opendata/finess-read.ts), mapped to the Organization the feed alone describes
 * (src/opendata/finess-map.ts) with an establishment's Location, one row of import_finess_now each,
 * by one COPY: what the snapshot (src/opendata/snapshot.ts diffFiness) compares by digest and the
 * writer merges. An entity whose digest is its active state's is staged without its content and
 * Location: the snapshot never reads them (it is unchanged), and a daily feed is ~99 % such rows.
 */

export interface FinessStageSummary {
  /** entities read (rejected ones included). */
  records: number;
  staged: number;
  rejected: number;
}

const ROWS_PER_WRITE = 2000;

type Identifier = { value?: string; type?: { coding?: { code?: string }[] } };

/** The values mailboxes name an entity by: its identifiers but the SIREN (map.ts NOT_A_KEY). */
function identifierValues(org: Record<string, unknown>): string[] {
  const identifiers = (org.identifier ?? []) as Identifier[];
  return identifiers.filter((i) => i.type?.coding?.[0]?.code !== NOT_A_KEY && i.value).map((i) => i.value!);
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
        const org = rec.kind === 'legal' ? legalEntityOf(rec) : establishmentOf(rec);
        const location = rec.kind === 'legal' ? undefined : locationOf(rec);
        const json = JSON.stringify(org);
        const place = location === undefined ? undefined : JSON.stringify(location);
        // The digest covers the Location: an establishment is changed when its place is.
        const digest = hash('md5', place === undefined ? json : `${json}\n${place}`);
        const keys = copyTextArray(identifierValues(org));
        const id = org.id as string;
        const unchanged = state.get(id) === digest;
        const contentCell = unchanged ? '\\N' : copyText(json);
        const placeCell = unchanged || place === undefined ? '\\N' : copyText(place);
        rows.push(`${summary.staged}\t${copyText(id)}\t${rec.kind}\t${digest}\t${copyText(rec.where)}\t${contentCell}\t${placeCell}\t${place !== undefined}\t${keys}\n`);
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
