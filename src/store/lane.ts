/**
 * A first-come, first-served lane of bounded width (src/store/router.ts has one per class of
 * search): at most `width` of its searches run at once, the others wait their turn here instead of
 * sharing PostgreSQL's cores many ways.
 */
export class Lane {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Told how long each admitted search waited, in seconds (the metrics, src/metrics.ts); none by default. */
  onAdmit?: (waitedS: number) => void;

  constructor(readonly width: number) {}

  async admit<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.width) {
      this.active++;
      this.onAdmit?.(0);
    } else {
      const since = this.onAdmit ? performance.now() : undefined;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      if (since !== undefined) this.onAdmit?.((performance.now() - since) / 1000);
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the slot passes on
      else this.active--;
    }
  }

  /** searches running / waiting (for tests and diagnostics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
