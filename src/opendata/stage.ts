import type { Db } from '../db.ts';
import { CopyIn } from '../store/copy-in.ts';
import type { FileKind } from '../vocabulary/formats/rpps.ts';
import { CHUNK_BYTES } from '../load/limits.ts';
import { stagedChunks, type ImportPool } from './pool.ts';
import { readChunks, type ReadEvents } from './read.ts';

/**
 * The staging of an import: every data line of the input, one row each, in an UNLOGGED table of
 * PostgreSQL, so that memory does not grow with the extract. A row carries what the snapshot needs
 * to decide what changed (ids, and digests of the line and of its structure part) and the line
 * itself as JSON, to be mapped again only if its person or structure changed.
 *
 * The staging tables belong to the run holding the import lock: created at its start (those a
 * killed run left are dropped first), dropped at its end.
 */

/** The staging tables, in the order they are dropped. */
export const STAGING_TABLES = [
  'import_line', 'import_held', 'import_person_now', 'import_structure_now', 'import_person_change', 'import_person_gone',
  'import_structure_change', 'import_structure_gone', 'import_finess_now', 'import_finess_change', 'import_finess_gone',
  'import_mailbox_now', 'import_mailbox_added', 'import_mailbox_gone', 'import_org_key', 'import_org_affected', 'import_mailbox_persons',
  'import_located',
] as const;

export async function dropStaging(db: Db): Promise<void> {
  for (const table of STAGING_TABLES) await db`drop table if exists ${db(table)}`;
}

/**
 * Creates import_line and import_finess_now (after dropping what a killed run left). `seq` is the input order; `digest`
 * the md5 of `fields` (the line's values as JSON, src/opendata/read.ts fieldsJson); `structure_digest`
 * the md5 of the structure part of an activity line (what its Organization is built from);
 * `structure_keys` the identifier values of that part (src/opendata/snapshot.ts buildOrgKeys), on the
 * first line of each structure and digest in a chunk. import_finess_now's `keys`: an entity's
 * identifier values but its SIREN.
 */
export async function createStaging(db: Db): Promise<void> {
  await dropStaging(db);
  await db`
    create unlogged table import_line (
      seq              bigint not null,
      kind             text not null,
      person           text collate "C" not null,
      structure        text collate "C",
      role             text collate "C",
      digest           text collate "C" not null,
      structure_digest text collate "C",
      structure_keys   text[],
      at               text not null,
      fields           text not null
    ) with (autovacuum_enabled = false)`;
  // The persons named by rejected lines: they keep their state (src/opendata/snapshot.ts).
  await db`create unlogged table import_held (person text collate "C" primary key)`;
  // The FINESS feed's entities (src/opendata/stage-finess.ts): the Organization id, the JSON the feed
  // alone gives, and an establishment's Location (null without a point); content and location are
  // null for an entity unchanged since the last import, `located` says whether it has a Location.
  await db`
    create unlogged table import_finess_now (
      seq      bigint not null,
      org      text collate "C" not null,
      kind     text not null,
      digest   text collate "C" not null,
      at       text not null,
      content  text,
      location text,
      located  boolean not null,
      keys     text[] not null
    ) with (autovacuum_enabled = false)`;
}

export interface StageSummary {
  /** data lines read (rejected ones included). */
  lines: number;
  staged: number;
  /** lines reported `file:line: reason`: by the reader (field count) or the mapper (ids). */
  rejected: number;
  /** files that are not extracts, reported once each. */
  skippedFiles: number;
  /** the kinds of file found. */
  kinds: Set<FileKind>;
  /** persons named by rejected lines (in import_held). */
  held: number;
  /** rejected lines that name no person, by kind of file. */
  unattributed: Map<FileKind, number>;
  /** where a file's last line is cut (a truncated download). */
  cut: string[];
}

/**
 * Reads `paths` into import_line by one COPY, the lines staged by the pool's workers when there is
 * one. Lines the reader or the mapper rejects are reported through `events.reject` and left out;
 * the persons they name go into import_held.
 * Throws OpenDataError, before any row is written, when an archive is damaged.
 */
export async function stageLines(
  db: Db,
  paths: readonly string[],
  events: Pick<ReadEvents, 'reject' | 'skip'>,
  onProgress?: (p: { lines: number; bytes: number; totalBytes: number }) => void,
  pool?: ImportPool,
): Promise<StageSummary> {
  const summary: StageSummary = { lines: 0, staged: 0, rejected: 0, skippedFiles: 0, kinds: new Set(), held: 0, unattributed: new Map(), cut: [] };
  const held = new Set<string>();
  let totalBytes = 0;
  let bytes = 0;
  const counting: ReadEvents = {
    total: (n) => (totalBytes = n),
    bytes: (n) => {
      bytes += n;
      onProgress?.({ lines: summary.lines, bytes, totalBytes });
    },
    reject: events.reject,
    skip: (file, reason) => {
      summary.skippedFiles++;
      events.skip(file, reason);
    },
  };
  let seq = 0;
  const requests = async function* () {
    for await (const chunk of readChunks(paths, counting, CHUNK_BYTES)) {
      yield { chunk, seqBase: seq };
      seq += chunk.lines;
    }
  };
  const staged = stagedChunks(requests(), pool);
  // The first chunk is read before the COPY starts: a damaged archive fails with nothing sent.
  let next = await staged.next();
  const out = await CopyIn.open(db`copy import_line (seq, kind, person, structure, role, digest, structure_digest, structure_keys, at, fields) from stdin`);
  try {
    for (; !next.done; next = await staged.next()) {
      const r = next.value;
      summary.lines += r.lines;
      summary.staged += r.staged;
      summary.rejected += r.rejects.length;
      if (r.records) summary.kinds.add(r.kind);
      for (const [where, reason] of r.rejects) events.reject(where, reason);
      for (const person of r.held) held.add(person);
      if (r.unattributed) summary.unattributed.set(r.kind, (summary.unattributed.get(r.kind) ?? 0) + r.unattributed);
      summary.cut.push(...r.cut);
      onProgress?.({ lines: summary.lines, bytes, totalBytes });
      await out.write(r.copy);
    }
    await out.end();
  } catch (err) {
    out.abort(err as Error);
    await staged.return(undefined);
    throw err;
  }
  summary.held = held.size;
  for (let i = 0, all = [...held]; i < all.length; i += 10_000) {
    await db`insert into import_held (person) select unnest(${all.slice(i, i + 10_000)}::text[])`;
  }
  return summary;
}
