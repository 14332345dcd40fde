import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { connectUrl, type Sql } from '../db.ts';
import { classifyDbError } from '../db-errors.ts';
import { FhirError } from '../fhir/outcome.ts';
import { JOB_LOCK, JobStore, MAX_ATTEMPTS, type Job, type OutputFile } from './jobs.ts';
import type { ExportRequest } from './request.ts';
import { copyType } from './write-files.ts';

/**
 * Bulk export jobs (FHIR Bulk Data `$export`): queued in the export_job table, run at most `jobs`
 * at once (in every process together), each in one REPEATABLE READ read-only transaction — one
 * snapshot for all its types, taken at its transactionTime — on a connection of the exporter's own,
 * never one of the search pools. Jobs whose process stopped are found by their free advisory lock
 * and run again from scratch; finished jobs and their files are deleted after `ttlHours`.
 */
export interface ExporterOptions {
  /** the pool the job table is read and written with (short statements). */
  sql: Sql;
  /** the database the exports read, on connections of their own (none: every job fails). */
  url: string | undefined;
  dir: string;
  jobs: number;
  queue: number;
  ttlHours: number;
  fileBytes: number;
}

export interface ExportLog {
  info(msg: string): void;
  warn(msg: string): void;
  error(obj: object, msg: string): void;
}

/** How often the queue, orphans and expired jobs are looked at (a kick-off or a job's end also does). */
const TICK_MS = 5000;
/** How often a running job writes its progress (and learns that it was cancelled elsewhere). */
const PROGRESS_MS = 1000;
/** A job's folder: its id (a UUID), nothing else is ever deleted from EXPORT_DIR. */
const JOB_DIR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isJobId = (id: string) => JOB_DIR.test(id);

/** Why a running job stops before its end: the client cancelled it, or this process is closing. */
type StopReason = 'cancel' | 'close';

export class Exporter {
  readonly store: JobStore;
  private exportSql: Sql | undefined;
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  /** no job in the table at the last look: the timer does not look again (a kick-off does). */
  private idle = false;
  private closed = false;
  private log: ExportLog = { info: () => {}, warn: () => {}, error: () => {} };

  constructor(readonly opts: ExporterOptions) {
    this.store = new JobStore(opts.sql);
  }

  /**
   * Starts the queue: jobs waiting run, and folders older than the TTL without a job (a crash
   * between a job's deletion and its folder's) are removed.
   */
  async start(log: ExportLog): Promise<void> {
    this.log = log;
    this.timer = setInterval(() => this.idle || this.kick(), TICK_MS);
    this.timer.unref();
    this.kick();
    try {
      const names = (await readdir(this.opts.dir)).filter(isJobId);
      if (!names.length) return;
      const ids = await this.store.ids();
      const before = Date.now() - this.opts.ttlHours * 3600_000;
      for (const name of names) {
        const dir = path.join(this.opts.dir, name);
        if (!ids.has(name) && (await stat(dir)).mtimeMs < before) await rm(dir, { recursive: true, force: true });
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn(`export: leftover folders not cleaned (${(err as Error).message})`);
    }
  }

  /** Running jobs stop and go back to the queue (the next start runs them again). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const r of this.running.values()) r.stop.abort('close' satisfies StopReason);
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.ticking;
    await this.exportSql?.end({ timeout: 5 });
  }

  /** A new job for this key; 429 when the queue is full. */
  async submit(keyName: string, request: string, req: ExportRequest): Promise<string> {
    const id = randomUUID();
    if ((await this.store.create(id, keyName, request, req, this.opts.queue)) === 'full') {
      throw new FhirError(429, 'throttled', `${this.opts.queue} exports are already waiting: try again later`, { 'retry-after': '60' });
    }
    this.idle = false;
    this.kick();
    return id;
  }

  /** Cancels and deletes this key's job and its files; false when it has no such job. */
  async cancel(id: string, keyName: string): Promise<boolean> {
    if (!(await this.store.remove(id, keyName))) return false;
    const r = this.running.get(id);
    if (r) {
      r.stop.abort('cancel' satisfies StopReason);
      await r.done;
    }
    await this.removeFiles(id);
    return true;
  }

  fileOf(id: string, file: string): string {
    return path.join(this.opts.dir, id, file);
  }

  /** Looks at the queue soon; one look at a time, another one after it if asked meanwhile. */
  kick(): void {
    if (this.closed) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((err: unknown) => {
        if (classifyDbError(err)) this.log.warn(`export: job queue unavailable (${(err as Error).message})`);
        else this.log.error({ err }, 'export: job queue failed');
      })
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async tick(): Promise<void> {
    const found = await this.store.recoverOrphans(this.opts.ttlHours);
    if (found) this.log.warn(`export: ${found} job(s) left running by a stopped process queued again`);
    for (const id of await this.store.expire()) await this.removeFiles(id);
    while (!this.closed && this.running.size < this.opts.jobs) {
      const job = await this.store.claim(this.opts.jobs);
      if (!job) break;
      const stop = new AbortController();
      const done = this.run(job, stop.signal).finally(() => {
        this.running.delete(job.id);
        this.kick();
      });
      this.running.set(job.id, { stop, done });
    }
    this.idle = this.running.size === 0 && (await this.store.ids()).size === 0;
  }

  private async removeFiles(id: string): Promise<void> {
    if (isJobId(id)) await rm(path.join(this.opts.dir, id), { recursive: true, force: true });
  }

  private async run(job: Job, signal: AbortSignal): Promise<void> {
    const dir = path.join(this.opts.dir, job.id);
    let written = 0;
    let typeNow = '';
    let lastReport = 0;
    // Progress, written at most every PROGRESS_MS; a job no longer running (cancelled by another
    // process) stops here.
    const report = (force = false) => {
      if (!force && Date.now() - lastReport < PROGRESS_MS) return;
      lastReport = Date.now();
      this.store.progress(job.id, `${written} resources written${typeNow ? ` (${typeNow})` : ''}`).then(
        (running) => !running && stop.abort('cancel'),
        () => {},
      );
    };
    const stop = new AbortController();
    signal.addEventListener('abort', () => stop.abort(signal.reason), { once: true });
    try {
      await this.removeFiles(job.id);
      await mkdir(dir, { recursive: true });
      if (!this.opts.url) throw new Error('no database URL for exports');
      this.exportSql ??= connectUrl(this.opts.url, { max: this.opts.jobs, statementTimeoutMs: 0 });
      const output = await this.exportSql.begin('isolation level repeatable read read only', async (tx) => {
        // The lock says "this job runs" for as long as the transaction lives (see JobStore.recoverOrphans).
        const [{ tt }] = await tx<{ tt: Date }[]>`select pg_advisory_xact_lock(${JOB_LOCK}, hashtext(${job.id})), now() as tt`;
        if (!(await this.store.progress(job.id, 'started', tt))) stop.abort('cancel');
        const files: OutputFile[] = [];
        for (const type of job.types) {
          typeNow = type;
          const before = written;
          files.push(...(await copyType(tx, { type, since: job.since, dir, fileBytes: this.opts.fileBytes, signal: stop.signal, onRows: (n) => {
            written = before + n;
            report();
          } })));
          written = before + files.filter((f) => f.type === type).reduce((n, f) => n + f.count, 0);
          report(true);
        }
        return files;
      });
      if (!(await this.store.finish(job.id, output, this.opts.ttlHours))) await this.removeFiles(job.id);
      else this.log.info(`export ${job.id}: ${written} resources in ${output.length} file(s)`);
    } catch (err) {
      await this.removeFiles(job.id).catch(() => {});
      const reason = stop.signal.aborted ? (stop.signal.reason as StopReason) : undefined;
      if (reason === 'cancel') return;
      if (reason === 'close' || (classifyDbError(err) === 'transient' && job.attempts < MAX_ATTEMPTS)) {
        if (reason !== 'close') this.log.warn(`export ${job.id}: database unavailable (${(err as Error).message}); queued again`);
        await this.store.requeue(job.id).catch(() => {});
        return;
      }
      this.log.error({ err }, `export ${job.id} failed`);
      await this.store.fail(job.id, 'the export failed on the server (the cause is in its log): start a new one', this.opts.ttlHours).catch(() => {});
    }
  }
}
