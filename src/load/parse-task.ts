import { parentPort } from 'node:worker_threads';
import { registry } from '../registry/index.ts';
import { prepare, type Prepared } from './prepare.ts';
import { bulkChunk, type BulkChunkRequest, type BulkChunkResult, type SystemsUpdate } from './bulk-chunk.ts';
import { byteLines, lineEntries } from './sources.ts';
import { transferList } from './transfer.ts';

/**
 * The work of a loader worker thread (src/load/parallel.ts ParsePool; an import's threads do it too,
 * src/opendata/worker.ts). Two kinds of work:
 * - `lines`: decodes a chunk of whole NDJSON lines (raw bytes) and parses, validates and extracts
 *   them exactly as the main thread would (lineEntries + prepare), then sends the entries back
 *   (incremental loads);
 * - `bulk`: turns a chunk of raw NDJSON bytes into the COPY data of the five tables, keys assigned
 *   (src/load/bulk-chunk.ts), and sends the bytes back without a copy (bulk loads).
 */
export interface ChunkRequest {
  kind: 'lines';
  id: number;
  file: string;
  /** number of the chunk's first line (1-based). */
  first: number;
  /** lines in `bytes`. */
  lines: number;
  /** whole lines (the last one may lack its newline at the end of the file). */
  bytes: Uint8Array;
}
export type ChunkResult = { id: number; out: Prepared[]; error?: undefined } | { id: number; out?: undefined; error: string };

/** Interned token systems, as the bulk loader's main thread broadcasts them. */
const systems = new Map<string, number>();

export type LoaderMessage = ChunkRequest | BulkChunkRequest | SystemsUpdate;

/** Does the work of a loader message in this worker thread and posts the reply. */
export function loaderTask(m: LoaderMessage): void {
  if (m.kind === 'systems') {
    for (const [uri, id] of m.systems) systems.set(uri, id);
    return;
  }
  try {
    if (m.kind === 'bulk') {
      const result: BulkChunkResult = bulkChunk(registry, systems, m);
      parentPort!.postMessage(result, transferList(...result.tables, result.copied));
      return;
    }
    const out: Prepared[] = [];
    for (const { n, line, utf8 } of byteLines(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength), m.first, m.lines)) {
      for (const raw of lineEntries(m.file, n, line, utf8)) out.push(prepare(registry, raw));
    }
    parentPort!.postMessage({ id: m.id, out } satisfies ChunkResult);
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error)?.stack ?? String(err) } satisfies ChunkResult);
  }
}
