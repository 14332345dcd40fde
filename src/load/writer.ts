/**
 * Batch transactions written at most `width` at once (PostgreSQL is the slower side and has a core
 * of its own per connection). A job submitted with keys first waits for those in flight that share
 * one, so the last write of a key still wins. The first failure is thrown by the next submit or by
 * drain; the jobs in flight then are left to end.
 */
export class BoundedWriter {
  private readonly inflight = new Map<Promise<void>, ReadonlySet<string> | undefined>();
  private failure: unknown;

  constructor(private readonly width: number) {}

  async submit(job: () => Promise<void>, keys?: ReadonlySet<string>): Promise<void> {
    if (keys) for (const [p, ks] of this.inflight) if (ks && [...keys].some((k) => ks.has(k))) await p;
    while (this.inflight.size >= this.width) await Promise.race(this.inflight.keys());
    if (this.failure) throw this.failure;
    const p: Promise<void> = job()
      .catch((err: unknown) => void (this.failure ??= err))
      .finally(() => this.inflight.delete(p));
    this.inflight.set(p, keys);
  }

  /** Waits for every job in flight; throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.inflight.keys());
    if (this.failure) throw this.failure;
  }
}
