import { CHUNK_BYTES, chunksAhead } from '../load/limits.ts';
import { ordered } from '../load/ordered.ts';
import { ParsePool } from '../load/parallel.ts';
import { transferList } from '../load/transfer.ts';
import { mapChunk, rowChunks, type ChunkKind, type MapRequest, type MapResult } from './map-chunk.ts';
import { stageChunk, type StageRequest, type StageResult } from './stage-chunk.ts';

/**
 * The CPU of an import's two passes over its lines — staging them (reading, ids, digests) and, on a
 * first import, mapping them into resources — is spent on chunks by worker threads, while this
 * thread only cuts the bytes, keeps the order and writes: on one thread each pass took as long as a
 * third of the bulk load, with PostgreSQL idle. Chunks are handed out round-robin and taken back in
 * input order, so the result is exactly one thread's.
 */

export type PoolRequest = ({ op: 'stage' } & StageRequest & { id: number }) | ({ op: 'map' } & MapRequest & { id: number });

/** The import's threads: they stage and map its lines, and encode a first import's resources for the bulk load (ParsePool). */
export class ImportPool extends ParsePool {
  constructor(size: number) {
    super(size, 'worker', import.meta.url, 'import worker');
  }

  /** Stages a chunk in a worker; its bytes are transferred. */
  stage(req: StageRequest): Promise<StageResult> {
    return this.post((id) => ({ op: 'stage', ...req, id }) satisfies PoolRequest, transferList(req.chunk.bytes));
  }

  /** Maps a chunk in a worker; its bytes are transferred. */
  map(req: MapRequest): Promise<MapResult> {
    return this.post((id) => ({ op: 'map', ...req, id }) satisfies PoolRequest, transferList(req.bytes));
  }
}

/** The staged chunks of `chunks` (src/opendata/stage-chunk.ts), in input order: by the pool, or on this thread without one. */
export function stagedChunks(chunks: AsyncIterable<StageRequest>, pool?: ImportPool): AsyncGenerator<StageResult> {
  return ordered(chunks, (req) => (pool ? pool.stage(req) : stageChunk(req)), chunksAhead(pool?.size ?? 0));
}

/** The mapped chunks of a stream of staged rows (src/opendata/map-chunk.ts), in input order: by the pool, or on this thread without one. */
export function mappedChunks(rows: AsyncIterable<Uint8Array>, kind: ChunkKind, lastUpdated: string, pool?: ImportPool): AsyncGenerator<MapResult> {
  const map = (bytes: Uint8Array) => (pool ? pool.map({ kind, bytes, lastUpdated }) : mapChunk({ kind, bytes, lastUpdated }));
  return ordered(rowChunks(rows, CHUNK_BYTES), map, chunksAhead(pool?.size ?? 0));
}
