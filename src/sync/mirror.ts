import type { Sql } from '../db.ts';
import { clipReason } from '../load/echo.ts';
import { prepare } from '../load/prepare.ts';
import type { Registry } from '../registry/index.ts';
import type { TokenSystems } from '../store/token-systems.ts';
import { addCounts, emptyCounts, loaderTx, writeBatch, type WriteCounts, type WriteEntry } from '../store/write.ts';
import { assertNextOnHost, SyncError, type Bundle, type Fetched, type UpstreamClient } from './client.ts';
import { readState, saveState, type SyncState } from './state.ts';
import type { TypePlan } from './upstream.ts';

/**
 * Mirrors one type by `_lastUpdated` windows. A run asks for everything with
 * `_lastUpdated=ge(watermark − overlap)` (everything on the first run) and writes each page, with the
 * type's new state, in one transaction. The watermark only moves to an instant before which every
 * change has been seen: the greatest lastUpdated seen in a finished run — or, pages sorted by
 * `_lastUpdated`, the last one of each committed page — and never past the upstream's clock when
 * the run began (a change made during the run is newer: this run or the next sees it). `ge` with
 * the overlap refetches the edge; the write path leaves equal content untouched.
 */
export interface MirrorOptions {
  /** the upstream's base, also the key of its rows in sync_state. */
  upstream: string;
  count: number;
  overlapMs: number;
  onReject?: (where: string, reason: string) => void;
  onPage?: (p: { type: string; pages: number; resources: number; total?: number }) => void;
  onNote?: (message: string) => void;
}

export interface TypeSummary extends WriteCounts {
  type: string;
  pages: number;
  /** resources received (matches and included). */
  fetched: number;
  rejected: number;
  /** how the run began: a new window, or the committed next link of an interrupted run. */
  start: 'window' | 'cursor';
}

/** Statuses that say a stored next link no longer answers (an expired or foreign cursor). */
const CURSOR_GONE = new Set([400, 404, 410, 422]);

export function windowUrl(base: string, plan: TypePlan, count: number, since: Date | null): string {
  const q = new URLSearchParams();
  if (since) q.append('_lastUpdated', `ge${since.toISOString()}`);
  if (plan.sorted) q.append('_sort', '_lastUpdated');
  q.append('_count', String(count));
  for (const r of plan.revinclude) q.append('_revinclude', r);
  return `${base}/${plan.type}?${q}`;
}

export function nextLink(b: Bundle): string | undefined {
  return b.link?.find((l) => l.relation === 'next')?.url;
}

/** The instant of a meta.lastUpdated, or undefined (a resource without one is rejected by the write path). */
function instant(resource: Record<string, unknown> | undefined): number | undefined {
  const lu = (resource?.meta as { lastUpdated?: unknown } | undefined)?.lastUpdated;
  if (typeof lu !== 'string') return undefined;
  const ms = Date.parse(lu);
  return Number.isNaN(ms) ? undefined : ms;
}

const later = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null ? a : a > b ? a : b);
const earlier = (a: Date, b: Date): Date => (a < b ? a : b);

export async function mirrorType(
  sql: Sql,
  registry: Registry,
  systems: TokenSystems,
  client: UpstreamClient,
  plan: TypePlan,
  opts: MirrorOptions,
): Promise<TypeSummary> {
  const summary: TypeSummary = { type: plan.type, pages: 0, fetched: 0, rejected: 0, start: 'window', ...emptyCounts() };
  const state = await readState(sql, opts.upstream, plan.type);
  let page: Fetched<Bundle> | undefined;
  let run: SyncState;
  if (state.runNext !== null) {
    try {
      page = await client.bundle(state.runNext);
      run = state;
      summary.start = 'cursor';
    } catch (err) {
      if (!(err instanceof SyncError && err.status !== undefined && CURSOR_GONE.has(err.status))) throw err;
      opts.onNote?.(`${plan.type}: the interrupted run's next link no longer answers (${err.status}); starting again from the watermark`);
    }
  }
  if (page === undefined) {
    const since = state.watermark === null ? null : new Date(state.watermark.getTime() - opts.overlapMs);
    page = await client.bundle(windowUrl(opts.upstream, plan, opts.count, since));
    run = { watermark: state.watermark, runNext: null, runStarted: page.date, runMax: null, runSorted: plan.sorted };
  }
  run = run!;
  let total: number | undefined;
  let lastSeen = run.runMax?.getTime();
  const warned = new Set<string>();
  for (;;) {
    const bundle = page.body;
    total ??= typeof bundle.total === 'number' ? bundle.total : undefined;
    const next = nextLink(bundle);
    assertNextOnHost(next, opts.upstream, page.url);
    // The next page is fetched while this one is written.
    const pending = next === undefined ? undefined : client.bundle(next);
    pending?.catch(() => {});
    summary.pages++;
    const batch: WriteEntry[] = [];
    let pageMax: number | undefined;
    let rejected = 0;
    (bundle.entry ?? []).forEach((e, i) => {
      const r = e.resource;
      const where = `${plan.type} page ${summary.pages}#entry[${i}]${typeof r?.id === 'string' ? ` (${String(r.resourceType)}/${r.id.slice(0, 64)})` : ''}`;
      if (e.search?.mode === 'outcome' || r?.resourceType === 'OperationOutcome') {
        const text = JSON.stringify((r?.issue as unknown[] | undefined) ?? r).slice(0, 300);
        if (!warned.has(text)) opts.onNote?.(`${plan.type}: the upstream warns: ${text}`);
        warned.add(text);
        return;
      }
      summary.fetched++;
      const p = prepare(registry, { kind: 'resource', where, value: r });
      if (p.entry === undefined) {
        rejected++;
        opts.onReject?.(where, clipReason(p.reason));
        return;
      }
      batch.push(p.entry);
      if ((e.search?.mode ?? 'match') !== 'match' || r?.resourceType !== plan.type) return;
      const at = instant(r);
      if (at === undefined) return;
      if (run.runSorted && lastSeen !== undefined && at < lastSeen) {
        run.runSorted = false;
        opts.onNote?.(`${plan.type}: the upstream's pages are not in _lastUpdated order; the watermark moves at the end of the run only`);
      }
      lastSeen = at;
      pageMax = Math.max(pageMax ?? at, at);
    });
    const seen = pageMax === undefined ? null : new Date(pageMax);
    const after: SyncState = { ...run, runNext: next ?? null, runMax: later(run.runMax, seen) };
    if (next === undefined) {
      // The run is complete: everything before the greatest lastUpdated seen (and before its start).
      after.watermark = after.runMax === null ? run.watermark : later(run.watermark, earlier(after.runMax, run.runStarted!));
      after.runStarted = null;
      after.runMax = null;
    } else if (run.runSorted && lastSeen !== undefined) {
      after.watermark = later(run.watermark, earlier(new Date(lastSeen), run.runStarted!));
    }
    const counts = await loaderTx(sql, async (tx) => {
      const c = batch.length ? await writeBatch(sql, registry, systems, batch, tx) : emptyCounts();
      await saveState(tx, opts.upstream, plan.type, after);
      return c;
    });
    Object.assign(summary, addCounts(summary, counts));
    summary.rejected += rejected;
    run = after;
    opts.onPage?.({ type: plan.type, pages: summary.pages, resources: summary.fetched, total });
    if (pending === undefined) return summary;
    page = await pending;
  }
}
