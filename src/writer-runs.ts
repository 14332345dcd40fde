import { classifyDbError } from './db-errors.ts';
import type { Sql } from './db.ts';

/** The waits before each new try of a run's outcome (the last try has none): 6.35 s in all, a failover's time. */
const FINISH_RETRIES_MS = [50, 100, 200, 400, 800, 1600, 3200, undefined];

/**
 * The runs of the commands that write the directory, in `writer_run` (sql/014_writer_runs.sql):
 * `npm run load` records kind 'load', `npm run sync` kind 'sync', `npm run import` kind 'import'. A run is inserted 'running' when it starts and set to its outcome when it ends; one that
 * is killed stays 'running', so the metrics (src/metrics.ts) show the last run that finished.
 */
export type RunOutcome = 'success' | 'failure';

export interface WriterRun {
  /** Records the outcome; never throws (a database gone for longer than its tries leaves the run 'running'). */
  finish(outcome: RunOutcome, detail?: Record<string, unknown>): Promise<void>;
}

/**
 * Records the start of a run of `kind` (at `startedAt`, now by default: the import's own time, the
 * meta.lastUpdated of what it writes); throws what the database throws, like the run's first write would.
 */
export async function startRun(sql: Sql, kind: string, detail: Record<string, unknown> = {}, startedAt?: Date): Promise<WriterRun> {
  const [{ id }] = await sql<{ id: string }[]>`
    insert into writer_run (kind, started_at, detail) values (${kind}, ${startedAt ?? sql`now()`}, ${sql.json(detail as never)}) returning id`;
  return {
    finish: async (outcome, more = {}) => {
      // A run often fails because the database went away for a moment: its outcome is tried again
      // while the database comes back. Past that, the run stays 'running' (it never finished).
      for (const wait of FINISH_RETRIES_MS) {
        try {
          await sql`update writer_run set finished_at = now(), outcome = ${outcome}, detail = detail || ${sql.json(more as never)} where id = ${id}`;
          return;
        } catch (err) {
          if (wait === undefined || classifyDbError(err) !== 'transient') return;
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    },
  };
}

/** The last finished run of each kind and outcome. */
export interface LastRun {
  kind: string;
  outcome: RunOutcome;
  /** Unix time of its end, in seconds. */
  finishedAt: number;
  durationS: number;
}

export async function lastRuns(sql: Sql): Promise<LastRun[]> {
  const rows = await sql<{ kind: string; outcome: RunOutcome; finished: number; seconds: number }[]>`
    select distinct on (kind, outcome) kind, outcome,
      extract(epoch from finished_at)::float8 as finished, extract(epoch from finished_at - started_at)::float8 as seconds
    from writer_run where finished_at is not null
    order by kind, outcome, finished_at desc`;
  return rows.map((r) => ({ kind: r.kind, outcome: r.outcome, finishedAt: r.finished, durationS: r.seconds }));
}
