import { Worker } from 'node:worker_threads';
import type { Registry } from '../registry/index.ts';
import type { ChunkRequest, ChunkResult } from './parse-task.ts';
import type { BulkChunkRequest, BulkChunkResult } from './bulk-chunk.ts';
import { CHUNK_BYTES, chunksAhead } from './limits.ts';
import { ordered } from './ordered.ts';
import { prepare, type Prepared } from './prepare.ts';
import { isNdjson, ndjsonByteChunks, readEntries, type ByteChunk } from './sources.ts';
import { transferList } from './transfer.ts';

/**
 * Parsing, validation and extraction take most of the loader's CPU (JSON.parse, the registry's
 * extractors, JSON.stringify of what is stored), and on one thread they are the bottleneck of a
 * load: PostgreSQL waited for them half of the time. NDJSON files are therefore cut into chunks of
 * lines that worker threads prepare; the main thread only reads lines, writes batches and keeps the
 * order (chunks are handed out round-robin and their results taken back in input order, so the
 * entries, their file:line and the last-wins rule are exactly those of the single-thread path).
 * The main thread hands over raw bytes cut after a newline (transferred, not copied); the workers
 * decode and split them, so the main thread never decodes or copies the text.
 */

/**
 * A worker thread running the module `name` (without extension) beside the module of `base`
 * (its import.meta.url): the built .js, or the TypeScript source when running under tsx.
 */
function spawnWorker(name: string, base: string): Worker {
  const entry = new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry);
  // Running from TypeScript sources (tsx): the worker registers the same loader before importing.
  const api = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true });
}

type Pending = { resolve: (v: never) => void; reject: (e: Error) => void };
type Reply = { id: number; error?: string };

/**
 * Worker threads running the module `name` beside `base` (spawnWorker): requests are numbered and
 * handed out round-robin, each settled by the worker's reply of the same id (`error`: its failure,
 * as `<label>: <stack>`). A worker that fails or exits fails every waiting and later request.
 */
export class WorkerPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(readonly size: number, name: string, base: string, label: string) {
    this.workers = Array.from({ length: size }, () => {
      const w = spawnWorker(name, base);
      w.on('message', (m: Reply) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(`${label}: ${m.error}`));
        else p.resolve(m as never);
      });
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`${label} exited with code ${code}`));
      });
      return w;
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** A request to the next worker; the buffers of `transfer` are moved there (unusable here afterwards). */
  protected post<T>(message: (id: number) => object, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<T>((resolve, reject) => this.pending.set(id, { resolve: resolve as (v: never) => void, reject }));
    this.workers[id % this.size].postMessage(message(id), transfer);
    return p;
  }

  /** A message to every worker, before the requests posted after it. */
  protected broadcast(message: object): void {
    for (const w of this.workers) w.postMessage(message);
  }

  /** Ends the workers (again: nothing). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Threads that prepare and encode a load's NDJSON; a subclass may run another worker module that does this work too. */
export class ParsePool extends WorkerPool {
  constructor(size: number, name = 'parse-worker', base = import.meta.url, label = 'loader worker') {
    super(size, name, base, label);
  }

  /**
   * Bytes handed over to a worker: transferred (unusable here afterwards) when they own their
   * memory, else copied first into memory of their own (a read buffer may share memory with the next
   * chunk's bytes).
   */
  private static handOver(bytes: Uint8Array, owned: boolean): Uint8Array {
    return owned ? bytes : new Uint8Array(bytes);
  }

  /** A chunk of whole NDJSON lines to prepare (incremental loads). */
  run(file: string, chunk: ByteChunk): Promise<Prepared[]> {
    const bytes = ParsePool.handOver(chunk.bytes, chunk.owned);
    return this.post<ChunkResult>((id) => ({ kind: 'lines', id, file, first: chunk.first, lines: chunk.lines, bytes }) satisfies ChunkRequest, transferList(bytes)).then((m) => m.out!);
  }

  /** A bulk chunk (src/load/bulk-chunk.ts). */
  bulk(req: Omit<BulkChunkRequest, 'kind' | 'id'>, owned = false): Promise<BulkChunkResult> {
    const bytes = ParsePool.handOver(req.bytes, owned);
    return this.post((id) => ({ ...req, bytes, kind: 'bulk', id }) satisfies BulkChunkRequest, transferList(bytes));
  }

  /** Token systems interned since the last update, for every worker (posted before later chunks). */
  systems(systems: [string, number][]): void {
    this.broadcast({ kind: 'systems', systems });
  }
}

/**
 * The prepared entries of one file, in input order: NDJSON through the pool when there is one,
 * everything else (and everything without a pool) on this thread.
 */
export async function* preparedEntries(file: string, registry: Registry, onBytes: (n: number) => void, pool?: ParsePool): AsyncGenerator<Prepared> {
  if (!pool || !isNdjson(file)) {
    for await (const raw of readEntries(file, onBytes)) yield prepare(registry, raw);
    return;
  }
  for await (const entries of ordered(ndjsonByteChunks(file, onBytes, CHUNK_BYTES), (chunk) => pool.run(file, chunk), chunksAhead(pool.size))) yield* entries;
}
