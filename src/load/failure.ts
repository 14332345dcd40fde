import { classifyDbError } from '../db-errors.ts';
import { BulkIncomplete, BulkRefused } from './bulk.ts';

/**
 * What the loader says when a load fails: the cause (a database that went away said as such), what
 * of the load is stored, and how to finish it. Every path leaves the database whole: an incremental
 * load commits batch by batch, and a bulk load is all or nothing until its rows are committed.
 */
export function failureMessage(err: unknown, bulk: boolean): string {
  if (err instanceof BulkRefused) return err.message;
  const cause = err instanceof BulkIncomplete ? err.cause : err;
  const text = cause instanceof Error ? cause.message : String(cause);
  const what = classifyDbError(cause) ? `the database went away or did not answer (${text})` : text;
  const next =
    err instanceof BulkIncomplete
      ? 'every row of the bulk load was stored before it failed: run the same files again without --bulk to finish it'
      : bulk
        ? 'nothing of the bulk load is kept: run the same command again'
        : 'the batches written are kept: run the same command again to finish (what is stored is found unchanged)';
  return `load failed: ${what}. ${next[0].toUpperCase()}${next.slice(1)}.`;
}
