import type { Sql } from '../db.ts';
import { RESOURCE_TYPES, type ResourceType } from '../registry/index.ts';
import type { ExportRequest } from './request.ts';

/**
 * The export_job table (sql/009_export_jobs.sql): every state change of a job is one statement
 * here, so that several processes (WORKERS, instances) share the queue through the database.
 */
export interface OutputFile {
  type: ResourceType;
  /** the file's name in the job's folder, `<Type>-<n>.ndjson`. */
  file: string;
  count: number;
  bytes: number;
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface Job {
  id: string;
  keyName: string;
  request: string;
  types: ResourceType[];
  since: Date | null;
  status: JobStatus;
  transactionTime: Date | null;
  progress: string | null;
  output: OutputFile[];
  error: string | null;
  attempts: number;
  expiresAt: Date | null;
}

interface Row {
  id: string;
  key_name: string;
  request: string;
  types: string[];
  since: Date | null;
  status: JobStatus;
  transaction_time: Date | null;
  progress: string | null;
  output: OutputFile[];
  error: string | null;
  attempts: number;
  expires_at: Date | null;
}

const job = (r: Row): Job => ({
  id: r.id,
  keyName: r.key_name,
  request: r.request,
  // Types come back from the table into COPY statements: only the registry's names pass.
  types: r.types.filter((t): t is ResourceType => (RESOURCE_TYPES as readonly string[]).includes(t)),
  since: r.since,
  status: r.status,
  transactionTime: r.transaction_time,
  progress: r.progress,
  output: r.output,
  error: r.error,
  attempts: r.attempts,
  expiresAt: r.expires_at,
});

/** Advisory lock classes: the queue (one key), and each running job (the hash of its id). */
const QUEUE_LOCK = 724030;
export const JOB_LOCK = 724031;
/** Tries a job gets when the database goes away under it, before it is failed. */
export const MAX_ATTEMPTS = 3;
/** A running job younger than this is never taken for an orphan (its runner may not hold its lock yet). */
const CLAIM_GRACE = '10 seconds';

export class JobStore {
  constructor(private readonly sql: Sql) {}

  /** A new queued job, or 'full' when `queueLimit` jobs already wait. */
  async create(id: string, keyName: string, request: string, req: ExportRequest, queueLimit: number): Promise<'ok' | 'full'> {
    return this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${QUEUE_LOCK}, 0)`;
      const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from export_job where status = 'queued'`;
      if (n >= queueLimit) return 'full';
      await tx`insert into export_job (id, key_name, request, types, since)
               values (${id}, ${keyName}, ${request}, ${req.types}, ${req.since ?? null})`;
      return 'ok';
    });
  }

  /** The job, if it exists and belongs to this key. */
  async get(id: string, keyName: string): Promise<Job | undefined> {
    const [r] = await this.sql<Row[]>`select * from export_job where id = ${id} and key_name = ${keyName}`;
    return r && job(r);
  }

  /** Deletes the job of this key (a cancel); true if there was one. */
  async remove(id: string, keyName: string): Promise<boolean> {
    return (await this.sql`delete from export_job where id = ${id} and key_name = ${keyName}`).count > 0;
  }

  /** The oldest queued job, now running, if fewer than `width` run (in every process together). */
  async claim(width: number): Promise<Job | undefined> {
    return this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${QUEUE_LOCK}, 0)`;
      const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from export_job where status = 'running'`;
      if (n >= width) return undefined;
      const [r] = await tx<Row[]>`
        update export_job set status = 'running', claimed_at = now(), attempts = attempts + 1, progress = 'starting'
        where id = (select id from export_job where status = 'queued' order by created_at limit 1)
        returning *`;
      return r && job(r);
    });
  }

  /** Records what a running job has done; false when it is no longer running (cancelled). */
  async progress(id: string, text: string, transactionTime?: Date): Promise<boolean> {
    const rows = transactionTime
      ? await this.sql`update export_job set progress = ${text}, transaction_time = ${transactionTime} where id = ${id} and status = 'running'`
      : await this.sql`update export_job set progress = ${text} where id = ${id} and status = 'running'`;
    return rows.count > 0;
  }

  /** The job done: its files are listed; false when it was cancelled meanwhile. */
  async finish(id: string, output: OutputFile[], ttlHours: number): Promise<boolean> {
    const rows = await this.sql`
      update export_job set status = 'done', progress = null, output = ${this.sql.json(output as never)},
        expires_at = now() + make_interval(hours => ${ttlHours})
      where id = ${id} and status = 'running'`;
    return rows.count > 0;
  }

  async fail(id: string, message: string, ttlHours: number): Promise<void> {
    await this.sql`
      update export_job set status = 'failed', progress = null, error = ${message}, output = '[]',
        expires_at = now() + make_interval(hours => ${ttlHours})
      where id = ${id} and status = 'running'`;
  }

  /** Back to the queue (the process stops, or the database went away): it starts again from scratch. */
  async requeue(id: string): Promise<void> {
    await this.sql`update export_job set status = 'queued', progress = null, transaction_time = null where id = ${id} and status = 'running'`;
  }

  /**
   * Running jobs whose runner is gone (its transaction, and so its lock, ended with its process):
   * queued again, or failed after MAX_ATTEMPTS. Returns how many were found.
   */
  async recoverOrphans(ttlHours: number): Promise<number> {
    const rows = await this.sql`
      update export_job
      set status = case when attempts >= ${MAX_ATTEMPTS} then 'failed' else 'queued' end,
          error = case when attempts >= ${MAX_ATTEMPTS} then 'the export was interrupted too many times' end,
          expires_at = case when attempts >= ${MAX_ATTEMPTS} then now() + make_interval(hours => ${ttlHours}) end,
          progress = null, transaction_time = null
      where status = 'running' and claimed_at < now() - ${CLAIM_GRACE}::interval
        and pg_try_advisory_xact_lock(${JOB_LOCK}, hashtext(id))`;
    return rows.count;
  }

  /** Deletes the jobs past their expiry; returns their ids (their folders go too). */
  async expire(): Promise<string[]> {
    return (await this.sql<{ id: string }[]>`delete from export_job where expires_at < now() returning id`).map((r) => r.id);
  }

  async ids(): Promise<Set<string>> {
    return new Set((await this.sql<{ id: string }[]>`select id from export_job`).map((r) => r.id));
  }
}
