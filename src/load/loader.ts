import type { Sql } from '../db.ts';
import { stat } from 'node:fs/promises';
import { registry as defaultRegistry, type Registry } from '../registry/index.ts';
import { addCounts, finishWrites, emptyCounts, loaderTx, writeBatch, type WriteCounts, type WriteEntry } from '../store/write.ts';
import { TokenSystems } from '../store/token-systems.ts';
import { BULK_TABLES } from './bulk.ts';
import { bulkLoad, type BulkSource } from './bulk-load.ts';
import { clipReason } from './echo.ts';
import { defaultWorkers, LOAD_WORKERS_FROM } from './limits.ts';
import { ParsePool, preparedEntries } from './parallel.ts';
import { isNdjson, ndjsonByteChunks, ndjsonLines, readEntries } from './sources.ts';
import { BoundedWriter } from './writer.ts';

/**
 * Connections a load needs at most: a bulk load's lock (one reserved connection), its COPY
 * transactions (one per table, src/load/bulk.ts BULK_TABLES) and the interning of token systems
 * outside them (an incremental load: three batch transactions and the interning). The loader CLI
 * opens this many, or one more than `--concurrency` batch transactions (`loaderConnections`): a
 * smaller pool would wait for itself forever (every connection held by a transaction that waits for
 * one to intern a system).
 */
export const LOADER_CONNECTIONS = BULK_TABLES.length + 2;

/** Batch transactions an incremental load writes at once unless told (LoadOptions.concurrency). */
export const DEFAULT_CONCURRENCY = 3;

/** The pool a load needs with `concurrency` batch transactions (see LOADER_CONNECTIONS). */
export const loaderConnections = (concurrency = DEFAULT_CONCURRENCY): number => Math.max(LOADER_CONNECTIONS, concurrency + 1);

export interface LoadOptions {
  strict?: boolean;
  bulk?: boolean;
  batchSize?: number;
  /**
   * batches written at once (default 3: enough to keep both cores busy; 1 with --strict, whose file
   * is one transaction).
   */
  concurrency?: number;
  /**
   * worker threads that parse and extract NDJSON (src/load/parallel.ts); 0 = this thread. By
   * default 2 (at most the number of cores) from LOAD_WORKERS_FROM bytes of NDJSON (src/load/limits.ts), else 0.
   */
  workers?: number;
  /**
   * called once per rejected entry: `where` is file:line or file#entry[i]; `reason` echoes the input
   * cut to a readable length (clipReason); `key` (bulk loads) the Type/id of a rejected resource
   * that has both.
   */
  onReject?: (where: string, reason: string, key?: string) => void;
  onProgress?: (p: { entries: number; bytes: number }) => void;
  /** bulk only: called as each index of the end is built (and each table analysed), with its time. */
  onIndex?: (name: string, ms: number) => void;
}

export interface LoadSummary extends WriteCounts {
  rejected: number;
  rejectedFiles: number;
  files: number;
  elapsedMs: number;
  /** bulk only: time spent building the indexes (and analysing the tables) at the end. */
  indexMs: number;
}

class StrictAbort extends Error {}

/**
 * Loads files into the database: batched transactions, idempotent (a second run changes nothing),
 * one rejected line per bad entry and the load goes on. With `strict`, a file with any bad entry is
 * written not at all (its batches share one transaction that is rolled back). With `bulk`, an
 * empty database is loaded by COPY and its indexes built at the end (src/load/bulk-load.ts: each
 * file one of its sources); with `bulk` and `strict`, any bad entry leaves the whole load unwritten.
 */
export async function loadFiles(sql: Sql, registry: Registry, files: string[], opts: LoadOptions = {}): Promise<LoadSummary> {
  const workers = opts.workers ?? defaultWorkers(await ndjsonBytes(files), LOAD_WORKERS_FROM);
  if (opts.bulk) {
    let bytes = 0;
    const onBytes = (n: number) => (bytes += n);
    const sources = files.map((file): BulkSource =>
      isNdjson(file) ? { name: file, chunks: ndjsonByteChunks(file, onBytes), reread: (lines) => ndjsonLines(file, lines) } : { entries: readEntries(file, onBytes) },
    );
    const r = await loadBulk(sql, registry, sources, { ...opts, workers, onProgress: ({ entries }) => opts.onProgress?.({ entries, bytes }) });
    return { ...r, files: files.length };
  }
  return withParsePool(workers, registry, (pool) => load(sql, registry, files, opts, pool));
}

/**
 * A bulk load (src/load/bulk-load.ts) of any sources, their NDJSON encoded by `workers` threads of
 * its own, or by a pool of the caller's (left open); progress counts entries only (bytes are the
 * sources' to count).
 */
export async function loadBulk(
  sql: Sql,
  registry: Registry,
  sources: AsyncIterable<BulkSource> | Iterable<BulkSource>,
  opts: Omit<LoadOptions, 'bulk' | 'concurrency' | 'workers'> & { workers: number | ParsePool | undefined },
): Promise<Omit<LoadSummary, 'files'>> {
  const t0 = Date.now();
  const r = await withParsePool(opts.workers, registry, (pool) =>
    bulkLoad(sql, registry, sources, opts, pool, {
      reject: (where, reason, key) => opts.onReject?.(where, clipReason(reason), key),
      progress: (entries) => opts.onProgress?.({ entries, bytes: 0 }),
    }),
  );
  return { ...r, elapsedMs: Date.now() - t0 };
}

/** Runs `fn` with a pool of `workers` threads (none for 0), closed after, or with the pool given. */
async function withParsePool<T>(workers: number | ParsePool | undefined, registry: Registry, fn: (pool: ParsePool | undefined) => Promise<T>): Promise<T> {
  // Workers build the default registry themselves: another registry is prepared on this thread.
  if (registry !== defaultRegistry || !workers) return fn(undefined);
  if (workers instanceof ParsePool) return fn(workers);
  const pool = new ParsePool(workers);
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}

async function ndjsonBytes(files: string[]): Promise<number> {
  let bytes = 0;
  for (const f of files) if (isNdjson(f)) bytes += (await stat(f)).size;
  return bytes;
}

async function load(sql: Sql, registry: Registry, files: string[], opts: LoadOptions, pool: ParsePool | undefined): Promise<LoadSummary> {
  const t0 = Date.now();
  const batchSize = opts.batchSize ?? 1000;
  const systems = new TokenSystems();
  let counts = emptyCounts();
  let rejected = 0;
  let rejectedFiles = 0;
  let entries = 0;
  let bytes = 0;
  const reject = (where: string, reason: string) => {
    rejected++;
    opts.onReject?.(where, clipReason(reason));
  };
  const write = async (batch: WriteEntry[], tx?: Parameters<typeof writeBatch>[4]) => {
    const c = await (tx ? writeBatch(sql, registry, systems, batch, tx) : loaderTx(sql, (t) => writeBatch(sql, registry, systems, batch, t)));
    counts = addCounts(counts, c);
  };

  for (const file of files) {
    const run = async (tx?: Parameters<typeof writeBatch>[4]) => {
      // One transaction (--strict) means one writer; a batch that shares an id with one in flight
      // waits for it, so the last entry for an id still wins.
      const writer = new BoundedWriter(tx ? 1 : (opts.concurrency ?? DEFAULT_CONCURRENCY));
      let batch: WriteEntry[] = [];
      let fileRejected = false;
      for await (const p of preparedEntries(file, registry, (n) => (bytes += n), pool)) {
        entries++;
        const e = p.entry;
        if (e === undefined) {
          reject(p.where, p.reason);
          fileRejected = true;
          continue;
        }
        if (opts.strict && fileRejected) continue; // keep reporting, stop writing
        batch.push(e);
        if (batch.length >= batchSize) {
          const b = batch;
          await writer.submit(() => write(b, tx), new Set(b.map((e) => `${e.type}/${e.id}`)));
          batch = [];
        }
        if (entries % 1000 === 0) opts.onProgress?.({ entries, bytes });
      }
      await writer.drain();
      if (opts.strict && fileRejected) throw new StrictAbort();
      if (batch.length) await write(batch, tx);
    };
    if (opts.strict) {
      const before = counts;
      try {
        await loaderTx(sql, (tx) => run(tx));
      } catch (err) {
        if (!(err instanceof StrictAbort)) throw err;
        counts = before;
        rejectedFiles++;
        opts.onReject?.(file, 'file rejected (--strict): nothing of it was written');
      }
    } else {
      await run();
    }
    opts.onProgress?.({ entries, bytes });
  }
  await finishWrites(sql, counts.inserted + counts.updated + counts.deleted);
  return { ...counts, rejected, rejectedFiles, files: files.length, elapsedMs: Date.now() - t0, indexMs: 0 };
}

