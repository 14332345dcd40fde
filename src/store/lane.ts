/**
 * A first-come, first-served lane of bounded width. Heavy searches (compile.ts `heavySearch`: pages
 * of more than 100 resources, :contains, exact totals) enter it so that PostgreSQL works on as many
 * of them at once as there are cores, and the others wait their turn here instead of sharing the
 * cores many ways (which made the slowest pages several times slower for little throughput).
 * Light searches (lookups, pages of 50) never wait behind them.
 */
export class Lane {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly width: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.width) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
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
