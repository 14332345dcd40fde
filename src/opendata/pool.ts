import type { Worker } from 'node:worker_threads';
import { spawnWorker } from '../load/parallel.ts';
import { mapChunk, rowChunks, type ChunkKind, type MapRequest, type MapResult } from './map-chunk.ts';
import { stageChunk, type StageRequest, type StageResult } from './stage-chunk.ts';

/**
 * The CPU of an import's two passes over its lines — staging them (reading, ids, digests) and, on a
 * first import, mapping them into resources — is spent on chunks by worker threads, while this
 * thread only cuts the bytes, keeps the order and writes: on one thread each pass took as long as a
 * third of the bulk load, with PostgreSQL idle. Chunks are handed out round-robin and taken back in
 * input order, so the result is exactly one thread's.
 */
const CHUNK_BYTES = 1 << 20;

export type PoolRequest = ({ op: 'stage' } & StageRequest & { id: number }) | ({ op: 'map' } & MapRequest & { id: number });
type Reply = { id: number; error?: string } & Partial<StageResult & MapResult>;

export class ImportPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(readonly size: number) {
    this.workers = Array.from({ length: size }, () => {
      const w = spawnWorker('worker', import.meta.url);
      w.on('message', (m: Reply) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(`import worker: ${m.error}`));
        else p.resolve(m as never);
      });
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`import worker exited with code ${code}`));
      });
      return w;
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** A request to a worker; its bytes are transferred (unusable here afterwards). */
  private post<T>(request: Omit<PoolRequest, 'id'>, bytes: Uint8Array): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<T>((resolve, reject) => this.pending.set(id, { resolve: resolve as (r: never) => void, reject }));
    this.workers[id % this.size].postMessage({ ...request, id }, [bytes.buffer as ArrayBuffer]);
    return p;
  }

  stage(req: StageRequest): Promise<StageResult> {
    return this.post({ op: 'stage', ...req }, req.chunk.bytes);
  }

  map(req: MapRequest): Promise<MapResult> {
    return this.post({ op: 'map', ...req }, req.bytes);
  }

  /** Ends the workers (again: nothing). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Results of `jobs` in input order, at most `ahead` of them in the pool at once. */
async function* inOrder<T>(jobs: AsyncIterable<() => Promise<T>>, ahead: number): AsyncGenerator<T> {
  const queue: Promise<T>[] = [];
  for await (const job of jobs) {
    const p = job();
    p.catch(() => {}); // awaited in order below; a failure must not be reported as unhandled first
    queue.push(p);
    if (queue.length >= ahead) yield await queue.shift()!;
  }
  while (queue.length) yield await queue.shift()!;
}

/** The staged chunks of `chunks` (src/opendata/stage-chunk.ts), in input order: by the pool, or on this thread without one. */
export async function* stagedChunks(chunks: AsyncIterable<StageRequest>, pool?: ImportPool): AsyncGenerator<StageResult> {
  if (!pool) {
    for await (const req of chunks) yield stageChunk(req);
    return;
  }
  yield* inOrder(jobsOf(chunks, (req) => pool.stage(req)), pool.size * 4);
}

/** The mapped chunks of a stream of staged rows (src/opendata/map-chunk.ts), in input order: by the pool, or on this thread without one. */
export async function* mappedChunks(rows: AsyncIterable<Uint8Array>, kind: ChunkKind, lastUpdated: string, pool?: ImportPool): AsyncGenerator<MapResult> {
  if (!pool) {
    for await (const bytes of rowChunks(rows, CHUNK_BYTES)) yield mapChunk({ kind, bytes, lastUpdated });
    return;
  }
  yield* inOrder(jobsOf(rowChunks(rows, CHUNK_BYTES), (bytes) => pool.map({ kind, bytes, lastUpdated })), pool.size * 4);
}

async function* jobsOf<A, T>(items: AsyncIterable<A>, run: (a: A) => Promise<T>): AsyncGenerator<() => Promise<T>> {
  for await (const a of items) yield () => run(a);
}

export { CHUNK_BYTES };
