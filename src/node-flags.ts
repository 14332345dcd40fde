/**
 * V8 flags the server runs with (`npm start` passes them to node with the server's build, dist/server.js;
 * the benchmark starts that build with them too; tests/docs.test.ts keeps the two in step).
 *
 * A young generation of 64 MB instead of 16 MB: a search allocates tens of kilobytes that die with
 * its request, so the scavenger ran several times a second under load; with 64 MB it runs a quarter
 * as often for the same work (national identifier lookups at 16 clients: server CPU 0.110 → 0.102 ms
 * per request, 8.6 k → 9.3 k requests/s).
 *
 * An old generation of at least 256 MB before a full collection (`--initial-old-space-size`: V8
 * then skips mark-compacts while the old generation, and twice that for the old generation plus
 * external memory, stays below it). The server's heap is small (17 MB after a collection), so V8's
 * own limit was about 60 MB for the heap and its Buffers together; a page of 50 resources brings
 * 100–200 kB from PostgreSQL and sends as much, so a full collection came every 25–50 requests
 * (40 in 10 s), with pauses and marking steps of up to 13 ms inside requests. Measured on the
 * national database, one client, 10 s: `_revinclude` pages of 50 p99 23.4 → 15.1 ms (mark-compacts
 * 40 → 5), name prefixes p99 18.9 → 11.7 ms (26 → 4); identifier lookups at 16 clients unchanged.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--initial-old-space-size=256'];

/**
 * V8 flags the loader runs with (`npm run load` passes them to node; the benchmark's load processes
 * too; tests/docs.test.ts keeps the two in step). A young generation of 64 MB instead of 16 MB: the
 * loader's main thread handles every NDJSON chunk, batch payload and COPY text of a load, most of it
 * dead after its batch, and the scavenger ran hundreds of times a second. Measured on the
 * benchmark's national incremental load (451 k resources into the loaded database): the loader's
 * CPU 28.0 → 25.4 s (its main thread's collector 5.6 s of 22.8 s before), 58.3 → 56.4 s in all.
 */
export const LOADER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
