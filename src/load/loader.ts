import type { Sql } from '../db.ts';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { extract } from '../fhir/extract.ts';
import { RESOURCE_TYPES, registry as defaultRegistry, type Registry, type ResourceType } from '../registry/index.ts';
import {
  addCounts, AlreadyStored, bulkInsert, deleteIndexRows, emptyCounts, encodeRows, insertIndexRows, SystemIds, writeBatch,
  type WriteCounts, type WriteEntry,
} from '../store/write.ts';
import { finishBulk, startBulk } from './bulk.ts';
import { ParsePool, preparedEntries } from './parallel.ts';

/**
 * Connections a load needs at most: a bulk load's lock (one reserved connection), two batch
 * transactions at once, and the interning of token systems outside them. The loader CLI opens
 * exactly this many; a smaller pool would wait for itself forever.
 */
export const LOADER_CONNECTIONS = 4;

export interface LoadOptions {
  strict?: boolean;
  bulk?: boolean;
  batchSize?: number;
  /** batches written at once (default 2; 1 with --strict, whose file is one transaction). */
  concurrency?: number;
  /**
   * worker threads that parse and extract NDJSON (src/load/parallel.ts); 0 = this thread. By
   * default 2 (at most the number of cores) when there are more than 16 MiB of NDJSON, else 0.
   */
  workers?: number;
  /** called once per rejected entry: `where` is file:line or file#entry[i]. */
  onReject?: (where: string, reason: string) => void;
  onProgress?: (p: { entries: number; bytes: number }) => void;
}

export interface LoadSummary extends WriteCounts {
  rejected: number;
  rejectedFiles: number;
  files: number;
  elapsedMs: number;
  /** bulk only: time spent building the indexes (and vacuum/analyze) at the end. */
  indexMs: number;
}

class StrictAbort extends Error {}

type Tx = Parameters<typeof writeBatch>[4] & {};

/**
 * A loader transaction commits without waiting for its WAL flush (synchronous_commit = off, for
 * this transaction only): a crash of PostgreSQL may forget the last fraction of a second of
 * batches, never half a batch, and a rerun of the load writes them again (loads are idempotent).
 */
function loaderTx<T>(sql: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    await tx`set local synchronous_commit = off`;
    return fn(tx);
  }) as Promise<T>;
}

/**
 * Loads files into the database: batched transactions, idempotent (a second run changes nothing),
 * one rejected line per bad entry and the load goes on. With `strict`, a file with any bad entry is
 * written not at all (its batches share one transaction that is rolled back). With `bulk`, an
 * empty database is loaded with the value indexes dropped and rebuilt at the end (src/load/bulk.ts).
 */
export async function loadFiles(sql: Sql, registry: Registry, files: string[], opts: LoadOptions = {}): Promise<LoadSummary> {
  const workers = opts.workers ?? (await defaultWorkers(files));
  // Workers build the default registry themselves: another registry is prepared on this thread.
  const pool = workers > 0 && registry === defaultRegistry ? new ParsePool(workers) : undefined;
  try {
    return await load(sql, registry, files, opts, pool);
  } finally {
    await pool?.close();
  }
}

async function defaultWorkers(files: string[]): Promise<number> {
  let bytes = 0;
  for (const f of files) if (/\.ndjson(\.gz)?$/i.test(f)) bytes += (await stat(f)).size;
  return bytes > 16 * 2 ** 20 ? Math.min(2, availableParallelism()) : 0;
}

async function load(sql: Sql, registry: Registry, files: string[], opts: LoadOptions, pool: ParsePool | undefined): Promise<LoadSummary> {
  const t0 = Date.now();
  const batchSize = opts.batchSize ?? 1000;
  const systems = new SystemIds();
  let counts = emptyCounts();
  let rejected = 0;
  let rejectedFiles = 0;
  let entries = 0;
  let bytes = 0;
  const reject = (where: string, reason: string) => {
    rejected++;
    opts.onReject?.(where, reason);
  };
  const bulk = opts.bulk ? await startBulk(sql) : undefined;

  const write = async (batch: WriteEntry[], tx?: Parameters<typeof writeBatch>[4]) => {
    let c: WriteCounts | undefined;
    if (bulk && !tx) {
      try {
        c = await loaderTx(sql, (t) => bulkInsert(sql, systems, batch, t));
      } catch (err) {
        if (!(err instanceof AlreadyStored)) throw err;
      }
    }
    const defer = bulk ? { deferIndexDeletes: bulk.stale } : undefined;
    c ??= await (tx ? writeBatch(sql, registry, systems, batch, tx, defer) : loaderTx(sql, (t) => writeBatch(sql, registry, systems, batch, t, defer)));
    counts = addCounts(counts, c);
  };

  // Batches are written by up to `concurrency` transactions at once (PostgreSQL is the slower side
  // and has a core of its own per connection); a batch that shares an id with one in flight waits
  // for it, so the last entry for an id still wins.
  const inflight = new Map<Promise<void>, Set<string>>();
  let failure: unknown;
  const submit = async (batch: WriteEntry[], concurrency: number, tx?: Parameters<typeof writeBatch>[4]) => {
    const keys = new Set(batch.map((e) => `${e.type}/${e.id}`));
    for (const [p, ks] of inflight) if ([...keys].some((k) => ks.has(k))) await p.catch(() => {});
    while (inflight.size >= concurrency) await Promise.race(inflight.keys()).catch(() => {});
    if (failure) throw failure;
    const p: Promise<void> = write(batch, tx)
      .catch((err) => {
        failure ??= err;
      })
      .finally(() => inflight.delete(p));
    inflight.set(p, keys);
  };
  const drain = async () => {
    await Promise.all(inflight.keys());
    if (failure) throw failure;
  };

  for (const file of files) {
    const run = async (tx?: Parameters<typeof writeBatch>[4]) => {
      // One transaction (--strict) means one writer.
      const concurrency = tx ? 1 : (opts.concurrency ?? 2);
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
          await submit(batch, concurrency, tx);
          batch = [];
        }
        if (entries % 1000 === 0) opts.onProgress?.({ entries, bytes });
      }
      await drain();
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
  let indexMs = 0;
  if (bulk) {
    const t1 = Date.now();
    await finishBulk(sql, bulk, registry, systems);
    indexMs = Date.now() - t1;
  }
  await sql`analyze resource`;
  return { ...counts, rejected, rejectedFiles, files: files.length, elapsedMs: Date.now() - t0, indexMs };
}

/** Re-extracts and rewrites the index rows of the given resources (used after a bulk load). */
export async function reindex(sql: Sql, registry: Registry, systems: SystemIds, rids: string[]): Promise<void> {
  for (let i = 0; i < rids.length; i += 1000) {
    const slice = rids.slice(i, i + 1000);
    const rows = await sql<{ rid: string; type: ResourceType; content: Record<string, unknown> }[]>`
      select rid, type, content from resource where rid = any(${slice}::bigint[])`;
    const items = rows.map((r) => ({ rid: r.rid, index: encodeRows(extract(r.content, registry.forType(r.type))) }));
    // Deleted resources are gone from `resource`: their rows go by the parameters of every type.
    const present = new Map(rows.map((r) => [r.rid, r.type as string]));
    const targets = slice.flatMap((rid) => (present.has(rid) ? [{ rid, type: present.get(rid)! }] : RESOURCE_TYPES.map((type) => ({ rid, type }))));
    await systems.resolve(sql, items.flatMap((it) => it.index.systems));
    await sql.begin(async (tx) => {
      await deleteIndexRows(tx, registry, targets);
      await insertIndexRows(tx, systems, items);
    });
  }
}
