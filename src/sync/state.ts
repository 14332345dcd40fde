import type { Db } from '../db.ts';

/** A type's row of sync_state (sql/008_sync_state.sql): its watermark and the run in progress. */
export interface SyncState {
  watermark: Date | null;
  /** next link of the run's last committed page; null when no run is in progress. */
  runNext: string | null;
  runStarted: Date | null;
  runMax: Date | null;
  runSorted: boolean;
}

export const NO_STATE: SyncState = { watermark: null, runNext: null, runStarted: null, runMax: null, runSorted: false };

export async function readState(db: Db, upstream: string, type: string): Promise<SyncState> {
  const [row] = await db<{ watermark: Date | null; run_next: string | null; run_started: Date | null; run_max: Date | null; run_sorted: boolean }[]>`
    select watermark, run_next, run_started, run_max, run_sorted from sync_state where upstream = ${upstream} and type = ${type}`;
  if (!row) return { ...NO_STATE };
  return { watermark: row.watermark, runNext: row.run_next, runStarted: row.run_started, runMax: row.run_max, runSorted: row.run_sorted };
}

/** Saves a type's state; called in the transaction that writes the page it describes. */
export async function saveState(db: Db, upstream: string, type: string, s: SyncState): Promise<void> {
  await db`
    insert into sync_state (upstream, type, watermark, run_next, run_started, run_max, run_sorted, updated_at)
    values (${upstream}, ${type}, ${s.watermark}, ${s.runNext}, ${s.runStarted}, ${s.runMax}, ${s.runSorted}, now())
    on conflict (upstream, type) do update set
      watermark = excluded.watermark, run_next = excluded.run_next, run_started = excluded.run_started,
      run_max = excluded.run_max, run_sorted = excluded.run_sorted, updated_at = now()`;
}
