import { parentPort } from 'node:worker_threads';
import { registry } from '../registry/index.ts';
import { prepare, type Prepared } from './prepare.ts';
import { lineEntries } from './sources.ts';

/**
 * A loader worker thread (src/load/parallel.ts): parses, validates and extracts chunks of NDJSON
 * lines, exactly as the main thread would (lineEntries + prepare), and sends the entries back.
 */
export interface ChunkRequest {
  id: number;
  file: string;
  first: number;
  lines: string[];
}
export type ChunkResult = { id: number; out: Prepared[]; error?: undefined } | { id: number; out?: undefined; error: string };

parentPort!.on('message', (m: ChunkRequest) => {
  try {
    const out: Prepared[] = [];
    for (let i = 0; i < m.lines.length; i++) {
      for (const raw of lineEntries(m.file, m.first + i, m.lines[i])) out.push(prepare(registry, raw));
    }
    parentPort!.postMessage({ id: m.id, out } satisfies ChunkResult);
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error)?.stack ?? String(err) } satisfies ChunkResult);
  }
});
