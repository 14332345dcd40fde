import cliProgress from 'cli-progress';
import type { ImportProgress } from '../opendata/import.ts';

/** The longest an import run without a terminal (cron, a script) stays silent. */
export const PROGRESS_INTERVAL_MS = 10_000;
/** The span the rates are measured over: long enough to smooth batches, short enough to follow a change of pace. */
const RATE_WINDOW_MS = 5_000;

const fmt = (n: number) => n.toLocaleString('en-US');

const PHASES: Record<ImportProgress['phase'], string> = { read: 'reading', compare: 'comparing', write: 'writing', finish: 'finishing' };

/** A rate over the last RATE_WINDOW_MS of samples (value, time), undefined until a second of them. */
class Rate {
  private samples: [at: number, value: number][] = [];

  add(value: number, at = Date.now()): void {
    this.samples.push([at, value]);
    while (this.samples.length > 2 && at - this.samples[1][0] >= RATE_WINDOW_MS) this.samples.shift();
  }

  reset(): void {
    this.samples = [];
  }

  perSecond(): number | undefined {
    const [first, last] = [this.samples[0], this.samples.at(-1)];
    if (!first || last![0] - first[0] < 1000) return undefined;
    return ((last![1] - first[1]) * 1000) / (last![0] - first[0]);
  }
}

/**
 * An import's progress: on a terminal a bar (lines read against the input's bytes, then resources
 * written), with lines printed above it; elsewhere plain lines, one at least every `intervalMs`,
 * so that a log shows an import alive.
 */
export class Progress {
  private readonly bars: cliProgress.MultiBar | undefined;
  private bar: cliProgress.SingleBar | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  private phase: ImportProgress['phase'] | undefined;
  private lines = 0;
  private written = 0;
  private toWrite: number | undefined;
  private readonly rate = new Rate();
  /** what the last plain line said: the rate of a plain line is over the interval since. */
  private last = { at: Date.now(), value: 0 };

  constructor(tty = process.stderr.isTTY, intervalMs = PROGRESS_INTERVAL_MS) {
    if (tty) {
      this.bars = new cliProgress.MultiBar(
        { format: '{phase} [{bar}] {percentage}% | {what} | {rate} | ETA {eta_formatted}', hideCursor: true, clearOnComplete: true, etaBuffer: 100 },
        cliProgress.Presets.shades_classic,
      );
    } else {
      this.timer = setInterval(() => this.say(this.line()), intervalMs);
      this.timer.unref();
    }
  }

  /** Lines count until the writing starts, resources after. */
  private reading(): boolean {
    return this.phase === 'read' || this.phase === 'compare';
  }

  private value(): number {
    return this.reading() ? this.lines : this.written;
  }

  private unit(): string {
    return this.reading() ? 'lines' : 'resources';
  }

  update(p: ImportProgress): void {
    if (p.lines !== undefined) this.lines = p.lines;
    if (p.phase === 'write') {
      this.written = p.done;
      this.toWrite = p.total;
    }
    if (p.phase !== this.phase) {
      this.phase = p.phase;
      this.rate.reset();
      this.last = { at: Date.now(), value: this.value() };
      if (this.bars) {
        if (this.bar) this.bars.remove(this.bar);
        this.bar = this.bars.create(Math.max(p.total ?? 0, 1), 0);
      }
    }
    this.rate.add(this.value());
    if (!this.bar) return;
    const perSecond = this.rate.perSecond();
    const payload = {
      phase: PHASES[p.phase],
      what: this.reading() ? `${fmt(this.lines)} lines` : `${fmt(this.written)} of ${fmt(this.toWrite ?? 0)} resources`,
      rate: perSecond === undefined ? `… ${this.unit()}/s` : `${fmt(Math.round(perSecond))} ${this.unit()}/s`,
    };
    this.bar.setTotal(Math.max(p.total ?? 0, p.done, 1));
    this.bar.update(p.done, payload);
  }

  /** The plain line: time since the start, phase, lines read, resources written, the rate since the last line. */
  private line(): string {
    const now = Date.now();
    const value = this.value();
    const perSecond = now > this.last.at ? ((value - this.last.value) * 1000) / (now - this.last.at) : 0;
    this.last = { at: now, value };
    const written = this.toWrite === undefined ? fmt(this.written) : `${fmt(this.written)} of ${fmt(this.toWrite)}`;
    return (
      `import ${((now - this.started) / 1000).toFixed(1)} s: ${PHASES[this.phase ?? 'read']}, ${fmt(this.lines)} lines read, ` +
      `${written} resources written, ${fmt(Math.round(perSecond))} ${this.unit()}/s`
    );
  }

  say(line: string): void {
    if (this.bars) this.bars.log(`${line}\n`);
    else console.error(line);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.bars?.stop();
  }
}
