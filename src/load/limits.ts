import { availableParallelism } from 'node:os';

/**
 * The sizes and thresholds of the ingest pipeline, in one place: every source (NDJSON files, an
 * extract's lines, the staged rows of an import) is cut into chunks of the same size, and worker
 * threads start from a size of input below which starting them costs more than they save.
 */

/** Bytes of input in one chunk of work for a worker thread: whole lines, never cut. */
export const CHUNK_BYTES = 1 << 20;

/**
 * Chunks handed out and not yet taken back (src/load/ordered.ts) with `workers` threads: four per
 * worker, so that none waits for this thread while memory stays bounded; one without workers.
 */
export const chunksAhead = (workers: number): number => Math.max(1, 4 * workers);

/** Bytes of NDJSON from which a load (`npm run load`) starts worker threads. */
export const LOAD_WORKERS_FROM = 16 * 2 ** 20;

/**
 * Bytes of extract from which an import (`npm run import`) starts worker threads: smaller than the
 * loader's because an extract's line costs more (staged, then mapped into several resources).
 */
export const IMPORT_WORKERS_FROM = 4 * 2 ** 20;

/** Worker threads for `bytes` of input, given the threshold of the command: two, at most one per core. */
export const defaultWorkers = (bytes: number, from: number): number => (bytes >= from ? Math.min(2, availableParallelism()) : 0);

/**
 * Index builds at once at the end of a bulk load: one per core (each build is one sort on one
 * core of the server, which the embedded server shares with this machine), at most four (each holds
 * a connection of the loader's pool, src/load/loader.ts LOADER_CONNECTIONS, and memory of its own).
 */
export const INDEX_BUILDS = Math.max(1, Math.min(4, availableParallelism()));
