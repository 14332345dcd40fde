/**
 * Two independent 32-bit hashes (FNV-1a and a multiplicative one) of a resource key `Type/id`: the
 * bulk loader keeps them for every resource it streams, to find an id that comes again.
 */
export function keyHashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b + c, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

/**
 * A set of 64-bit keys (two 32-bit halves) in one typed array, open addressing: a few bytes a
 * resource where a Set of strings takes tens. Two different keys with the same 64 bits only make
 * the second one take the slower, exact path.
 */
export class KeySet {
  private table = new Uint32Array(2 * 1024);
  private size = 0;

  /** Adds a key; false when it was there already. */
  add(h1: number, h2: number): boolean {
    if (h2 === 0) h2 = 1; // 0 marks an empty slot
    if (2 * (this.size + 1) > this.table.length / 2) this.grow();
    const t = this.table;
    const mask = t.length / 2 - 1;
    for (let i = h1 & mask; ; i = (i + 1) & mask) {
      if (t[2 * i + 1] === 0) {
        t[2 * i] = h1;
        t[2 * i + 1] = h2;
        this.size++;
        return true;
      }
      if (t[2 * i] === h1 && t[2 * i + 1] === h2) return false;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    this.size = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.add(old[i], old[i + 1]);
  }
}
