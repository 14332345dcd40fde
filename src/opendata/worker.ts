import { parentPort } from 'node:worker_threads';
import { loaderTask, type LoaderMessage } from '../load/parse-task.ts';
import { transferList } from '../load/transfer.ts';
import { mapChunk } from './map-chunk.ts';
import type { PoolRequest } from './pool.ts';
import { stageChunk } from './stage-chunk.ts';

/**
 * A worker thread of an import (src/opendata/pool.ts): one chunk in, its bytes out (transferred);
 * a first import's bulk load gives it the loader's work as well (src/load/parse-task.ts).
 */
parentPort!.on('message', (m: PoolRequest | LoaderMessage) => {
  if (!('op' in m)) return loaderTask(m);
  try {
    if (m.op === 'stage') {
      const r = stageChunk(m);
      parentPort!.postMessage({ id: m.id, ...r }, transferList(r.copy));
    } else {
      const r = mapChunk(m);
      parentPort!.postMessage({ id: m.id, ...r }, transferList(r.ndjson));
    }
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error)?.stack ?? String(err) });
  }
});
