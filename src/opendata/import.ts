import type postgres from 'postgres';
import type { Sql } from '../db.ts';
import { finishInterruptedBulk } from '../load/bulk.ts';
import { defaultWorkers, IMPORT_WORKERS_FROM } from '../load/limits.ts';
import { loaderConnections } from '../load/loader.ts';
import { withSessionLock } from '../load/session-lock.ts';
import { registry as defaultRegistry, type Registry } from '../registry/index.ts';
import { finishWrites } from '../store/write.ts';
import { startRun } from '../writer-runs.ts';
import { KINDS, RPPS_KINDS } from '../vocabulary/formats/rpps.ts';
import { publishBulk, publishIncremental, type ImportCounts } from './publish.ts';
import { ImportPool } from './pool.ts';
import { classifyInputs, inputBytes, OpenDataError } from './read.ts';
import {
  affectedOrganizations, applyMailboxes, buildOrgKeys, checkGone, countHeld, diffFiness, diffLocations, diffMailboxes, diffSnapshot, FEEDS,
  markLocatedChanges, SnapshotRefused, TYPE_NAMES, unmatchedMailboxes, type DiffType, type Kept, type SnapshotDiff, type TypeDiff,
} from './snapshot.ts';
import { stageFiness, type FinessStageSummary } from './stage-finess.ts';
import { createStaging, dropStaging, stageLines, type StageSummary } from './stage.ts';

/**
 * One import of the open-data extracts (`npm run import`): the directory as of its files. Three
 * sources, each its own snapshot: the RPPS extracts, the FINESS feed, the MSSanté extraction; a
 * source absent from the inputs keeps what it brought before.
 *
 * 1. Under an advisory lock (one import at a time per database), a run in writer_run (kind 'import').
 * 2. Stage every line in PostgreSQL (src/opendata/stage.ts), by worker threads for a large input
 *    (src/opendata/pool.ts), which also map a first import's lines and encode them for its bulk load.
 *    The FINESS feed is staged (src/opendata/stage-finess.ts) while the lines are diffed.
 * 3. Refuse a file whose last line is cut (a truncated download) without `force`. Diff the
 *    snapshot against the last import's state (src/opendata/snapshot.ts): a rejected line never
 *    deactivates; refuse to deactivate more than 5 % of a type without `force`, before anything is
 *    written.
 * 4. Write what changed (src/opendata/publish.ts): by the bulk loader into a database without
 *    resources, else in batches through the loader's write path, while the server serves.
 * 5. Finish the writes (counts compacted, statistics), drop the staging tables, close the run.
 *
 * A run killed anywhere converges when run again: the staging is made anew, and the state rows are
 * committed with the resources they describe.
 */

/** Advisory lock of the import (migrations take 724011, bulk loads 724012, compactions of value_count 724014). */
export const IMPORT_LOCK = 724013;

/** Connections an import needs: the loader's (batch transactions, interning, a bulk load), and its locked session. */
export const importConnections = (concurrency: number): number => loaderConnections(concurrency) + 1;

/** Another import holds the lock: nothing was done. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
}

export { OpenDataError, SnapshotRefused };

/** Said at each phase's start, and as it goes for read and write. */
export interface ImportProgress {
  phase: 'read' | 'compare' | 'write' | 'finish';
  done: number;
  /** read: bytes (done as well); write: resources to write. */
  total?: number;
  /** read: lines read so far. */
  lines?: number;
}

export interface ImportOptions {
  registry?: Registry;
  batchSize?: number;
  concurrency?: number;
  /** deactivate even beyond MAX_GONE_SHARE of a type. */
  force?: boolean;
  /** a line or resource left out, as `where: reason`. */
  onReject(where: string, reason: string): void;
  /** a file that is not an extract. */
  onSkip(file: string, reason: string): void;
  onProgress?(p: ImportProgress): void;
  /** something an operator should know that is not a failure (a kind of file missing, an index built). */
  onNote?(message: string): void;
  /** the run's time (meta.lastUpdated of what it writes); now by default. */
  now?: Date;
  /** threads that stage the lines and map a first import's (default: 2, none below IMPORT_WORKERS_FROM bytes of input); the bulk load's too. */
  workers?: number;
}

export interface ImportSummary {
  startedAt: Date;
  elapsedMs: number;
  /** 'bulk' for a first import into a database without resources. */
  path: 'bulk' | 'incremental';
  lines: number;
  /** lines, and resources the write path refused. */
  rejected: number;
  skippedFiles: number;
  /** active persons named by rejected lines, kept as they were. */
  held: number;
  /** rejected lines that name no person, by file: nothing of the `kept` types was deactivated. */
  unattributed: { file: string; lines: number; kept: readonly Kept[] }[];
  counts: ImportCounts;
  /** the sources of this run. */
  sources: { rpps: boolean; finess: boolean; mss: boolean };
  /** FINESS entities in the feed, compared with the last import's (changed: new, changed or back). */
  finess?: { establishments: TypeDiff; legal: TypeDiff; rejected: number };
  /** MSSanté mailboxes (one per distinct line): added, removed; lines whose person or structure the directory does not know. */
  mailboxes?: TypeDiff & { unknownPersons: number; unknownStructures: number };
}

/** The unchanged of each type: in the snapshot, neither new nor changed. */
function withUnchanged(counts: ImportCounts, diff: SnapshotDiff & { locations: TypeDiff }): ImportCounts {
  for (const t of [...(Object.keys(TYPE_NAMES) as DiffType[]), 'locations'] as const) {
    counts[t].unchanged = Math.max(0, diff[t].snapshot - counts[t].new - counts[t].changed);
  }
  return counts;
}

/** Imports the extracts under `paths` into the database of `sql` (a pool of importConnections(concurrency)). */
export async function importOpenData(sql: Sql, paths: readonly string[], opts: ImportOptions): Promise<ImportSummary> {
  await finishInterruptedBulk(sql, opts.onNote);
  return withSessionLock(sql, IMPORT_LOCK, (session) => locked(sql, session, paths, opts), () => {
    throw new ImportRefused('another import is running on this database');
  });
}

/** The import, on the session that holds its lock. */
async function locked(sql: Sql, session: postgres.ReservedSql, paths: readonly string[], opts: ImportOptions): Promise<ImportSummary> {
  const registry = opts.registry ?? defaultRegistry;
  const batchSize = opts.batchSize ?? 1000;
  const concurrency = opts.concurrency ?? 3;
  const note = opts.onNote ?? (() => {});
  const startedAt = opts.now ?? new Date();
  const run = await startRun(sql, 'import', { paths }, startedAt);
  let stage: StageSummary | undefined;
  let finessStage: FinessStageSummary | undefined;
  let pool: ImportPool | undefined;
  try {
    const inputs = await classifyInputs(paths);
    const workers = opts.workers ?? defaultWorkers(await inputBytes(inputs.lines), IMPORT_WORKERS_FROM);
    pool = workers > 0 ? new ImportPool(workers) : undefined;
    await createStaging(session);
    const onRead = (p: { lines: number; bytes: number; totalBytes: number }) =>
      opts.onProgress?.({ phase: 'read', done: p.bytes, total: p.totalBytes, lines: p.lines });
    const [{ empty }] = await session<{ empty: boolean }[]>`select not exists (select 1 from resource) as empty`;
    stage = await stageLines(session, inputs.lines, { reject: opts.onReject, skip: opts.onSkip }, onRead, pool);
    const sources = { rpps: RPPS_KINDS.some((k) => stage!.kinds.has(k)), finess: inputs.finess.length > 0, mss: stage.kinds.has('mailbox') };
    if (!sources.rpps && !sources.finess && !sources.mss) {
      throw new OpenDataError(`no open-data extract (RPPS PS_LibreAcces, FINESS feed or MSSanté extraction) in ${paths.join(', ')}`);
    }
    if (stage.cut.length && opts.force !== true) {
      throw new OpenDataError(`${stage.cut[0]}: the file ends in the middle of a line (a truncated download?); to import it anyway, its last line rejected, run again with --force`);
    }
    if (sources.rpps) {
      for (const kind of RPPS_KINDS) {
        if (!stage.kinds.has(kind)) note(`no ${KINDS[kind].file} file among the inputs: the snapshot has none of its lines`);
      }
    }
    // A database without resources starts afresh, whatever state of resources an earlier one left.
    // The mailboxes stay: they are the MSSanté source's snapshot, laid on resources as they come.
    if (empty) {
      for (const table of ['import_person', 'import_structure', 'import_finess', 'import_pending']) await session`delete from ${session(table)}`;
    }
    const unattributed = [...stage.unattributed].map(([kind, lines]) => ({
      file: kind === 'mailbox' ? KINDS[kind].file : `PS_LibreAcces_${KINDS[kind].file}`, lines, kept: FEEDS[kind],
    }));
    const kept = new Set<Kept>(unattributed.flatMap((u) => u.kept));
    // A source absent from the inputs deactivates nothing.
    if (!sources.rpps) for (const t of ['persons', 'structures', 'roles'] as const) kept.add(t);
    // The FINESS feed is staged (this thread's work, on a connection of its own) while PostgreSQL
    // diffs the lines (a backend's): each keeps one core busy. The mailbox lines leave import_line
    // first: the RPPS snapshot is of the persons' own lines.
    let finessBytes = 0;
    const feed = await sql.reserve();
    const [linesDiffed, feedStaged] = await Promise.allSettled([
      (async () => ({ mailboxes: await diffMailboxes(session, sources.mss, kept.has('mailboxes')), diff: await diffSnapshot(session, kept) }))(),
      stageFiness(feed, inputs.finess, {
        reject: opts.onReject,
        bytes: (n: number) => {
          finessBytes += n;
          opts.onProgress?.({ phase: 'read', done: finessBytes, lines: stage!.lines });
        },
      }, empty).finally(() => feed.release()),
    ]);
    if (feedStaged.status === 'rejected') throw feedStaged.reason;
    if (linesDiffed.status === 'rejected') throw linesDiffed.reason;
    finessStage = feedStaged.value;
    const { mailboxes, diff } = linesDiffed.value;
    opts.onProgress?.({ phase: 'compare', done: 0 });
    // A rejected FINESS entity has no id to hold, so it keeps them all.
    if (finessStage.rejected > 0) kept.add('finess');
    const finess = await diffFiness(session, sources.finess, kept.has('finess'));
    const locations = await diffLocations(session, sources.finess);
    checkGone(
      [
        ...(Object.keys(TYPE_NAMES) as DiffType[]).map((t) => ({ label: TYPE_NAMES[t].label, diff: diff[t] })),
        { label: 'FINESS establishments', diff: finess.establishments },
        { label: 'FINESS legal entities', diff: finess.legal },
        { label: 'Locations', diff: locations },
        { label: 'MSSanté mailboxes', diff: mailboxes },
      ],
      opts.force === true,
    );
    await markLocatedChanges(session);
    const held = await countHeld(session);
    if (sources.mss) {
      // One transaction on the locked session (a reserved connection has no begin()).
      await session`begin`;
      try {
        await applyMailboxes(session);
        await session`commit`;
      } catch (err) {
        await session`rollback`.catch(() => {});
        throw err;
      }
    }
    await buildOrgKeys(session, sources.rpps, sources.finess);
    const structures = await affectedOrganizations(session);
    // Organizations are counted whatever their sources: those of the RPPS lines and of the feed, once each.
    const [{ orgs }] = await session<{ orgs: number }[]>`select count(*)::int as orgs from (select structure from import_structure_now union select org from import_finess_now) o`;
    if (sources.finess) diff.structures.snapshot = orgs;
    const toWrite = diff.persons.changed + diff.roles.changed + diff.persons.gone + diff.roles.gone + structures + mailboxes.changed + mailboxes.gone;
    const publishOpts = {
      registry,
      lastUpdated: startedAt.toISOString(),
      batchSize,
      concurrency,
      pool,
      onReject: opts.onReject,
      onProgress: (done: number) => opts.onProgress?.({ phase: 'write', done, total: toWrite }),
    };
    publishOpts.onProgress(0);
    const published = empty ? await publishBulk(sql, session, publishOpts) : await publishIncremental(sql, session, publishOpts);
    const unknown = sources.mss ? await unmatchedMailboxes(session) : { persons: 0, structures: 0 };
    // Every pending owner was rewritten by this run.
    await session`delete from import_pending`;
    opts.onProgress?.({ phase: 'finish', done: published.written });
    await finishWrites(sql, empty ? 0 : published.written);
    await dropStaging(session);
    const summary: ImportSummary = {
      startedAt,
      elapsedMs: Date.now() - startedAt.getTime(),
      path: empty ? 'bulk' : 'incremental',
      lines: stage.lines,
      rejected: stage.rejected + finessStage.rejected + published.rejected,
      skippedFiles: stage.skippedFiles,
      held,
      unattributed,
      counts: withUnchanged(published.counts, { ...diff, locations }),
      sources,
      ...(sources.finess ? { finess: { ...finess, rejected: finessStage.rejected } } : {}),
      ...(sources.mss ? { mailboxes: { ...mailboxes, unknownPersons: unknown.persons, unknownStructures: unknown.structures } } : {}),
    };
    await run.finish('success', { ...summary, startedAt: undefined });
    return summary;
  } catch (err) {
    const counts = stage ? { lines: stage.lines, rejected: stage.rejected + (finessStage?.rejected ?? 0), skippedFiles: stage.skippedFiles } : {};
    await run.finish('failure', { ...counts, error: (err as Error).message, ...(err instanceof SnapshotRefused ? { refused: true } : {}) });
    await dropStaging(session).catch(() => {});
    throw err;
  } finally {
    await pool?.close();
  }
}
