/**
 * V8 flags the server runs with (`npm start` passes them to node with the server's build, dist/server.js;
 * the benchmark starts that build with them too; tests/docs.test.ts keeps the two in step).
 *
 * A young generation of 64 MB instead of 16 MB: a search allocates tens of kilobytes that die with
 * its request, and a small young generation makes the scavenger run several times a second under
 * load.
 *
 * An old generation of at least 256 MB before a full collection (`--initial-old-space-size`: V8
 * then skips mark-compacts while the old generation, and twice that for the old generation plus
 * external memory, stays below it). The server's heap is small, so V8's own limit would be small
 * too, and the Buffers of pages crossing the server would bring a full collection, with its pauses
 * inside requests, every few dozen requests.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--initial-old-space-size=256'];

/**
 * V8 flags the loader runs with (`npm run load` passes them to node; the benchmark's load processes
 * too; tests/docs.test.ts keeps the two in step). A young generation of 64 MB instead of 16 MB: the
 * loader's main thread handles every NDJSON chunk, batch payload and COPY text of a load, most of it
 * dead after its batch, and with 16 MB the scavenger runs hundreds of times a second.
 */
export const LOADER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
