// Seeded pseudo-random numbers. Everything the generator emits comes from here:
// never Math.random, never the clock, so a (scale, seed) pair always yields the same bytes.

/** murmur3 finaliser: a good 32-bit integer hash. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash a seed with up to three integers (stream ids, entity indexes) into one 32-bit value. */
export function hash32(seed: number, a = 0, b = 0): number {
  let h = fmix32((seed ^ 0x9e3779b9) >>> 0);
  h = fmix32((h ^ Math.imul(a + 1, 0x85ebca77)) >>> 0);
  h = fmix32((h ^ Math.imul(b + 1, 0xc2b2ae3d)) >>> 0);
  return h;
}

/** sfc32 (Small Fast Counting), 128-bit state, passes PractRand far beyond our needs. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0, index = 0) {
    this.a = hash32(seed, stream, index);
    this.b = hash32(seed ^ 0x6a09e667, stream, index);
    this.c = hash32(seed ^ 0xbb67ae85, stream, index);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** String of n random decimal digits. */
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(48 + this.int(10));
    return s;
  }
}

/** A discrete distribution sampled by binary search on cumulative weights. */
export class Weighted<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;
  private readonly total: number;

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    if (entries.length === 0) throw new Error('Weighted: no entries');
    this.items = entries.map((e) => e[0]);
    this.cumulative = new Float64Array(entries.length);
    let sum = 0;
    entries.forEach(([, w], i) => {
      if (!(w >= 0)) throw new Error(`Weighted: bad weight ${w}`);
      sum += w;
      this.cumulative[i] = sum;
    });
    if (sum <= 0) throw new Error('Weighted: total weight is zero');
    this.total = sum;
  }

  /** Probability of the i-th item (for docs and tests). */
  probability(i: number): number {
    return (this.cumulative[i] - (i > 0 ? this.cumulative[i - 1] : 0)) / this.total;
  }

  index(rng: Rng): number {
    const x = rng.next() * this.total;
    const c = this.cumulative;
    let lo = 0;
    let hi = c.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (c[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  sample(rng: Rng): T {
    return this.items[this.index(rng)];
  }
}

/**
 * Zipf-like weights for a list ordered from most to least frequent:
 * w(rank) = 1 / (rank + offset)^exponent. The offset flattens the head so the
 * most common item is a few percent, not a third, of the draws.
 */
export function zipf<T>(items: readonly T[], exponent: number, offset: number): Weighted<T> {
  return new Weighted(items.map((item, i) => [item, 1 / Math.pow(i + 1 + offset, exponent)] as const));
}

/** Index in [0, n) skewed towards 0: early pool members get more draws (big hospitals, busy cabinets). */
export function skewedIndex(rng: Rng, n: number, power: number): number {
  return Math.min(n - 1, Math.floor(n * Math.pow(rng.next(), power)));
}
