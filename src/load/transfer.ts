/**
 * The transfer list of a message between threads: the memory of each view that owns all of it.
 * A view into shared memory (Node's pool of small Buffers, a read buffer holding the next chunk
 * too) is copied instead: Node 22 and later refuse to transfer the pool, and moving a shared
 * buffer would take the other bytes with it.
 */
export function transferList(...views: ArrayBufferView[]): ArrayBuffer[] {
  return views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength).map((v) => v.buffer as ArrayBuffer);
}
