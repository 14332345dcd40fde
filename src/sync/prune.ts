import type { Sql } from '../db.ts';
import type { Registry, ResourceType } from '../registry/index.ts';
import type { TokenSystems } from '../store/token-systems.ts';
import { clipReason } from '../load/echo.ts';
import { prepare } from '../load/prepare.ts';
import { loaderTx, writeBatch, type WriteEntry } from '../store/write.ts';
import { assertNextOnHost, SyncError, type UpstreamClient } from './client.ts';
import { nextLink } from './mirror.ts';
import type { TypePlan } from './upstream.ts';

/**
 * Deletions: the upstream has no feed of them, so its ids of a type are walked to the end
 * (`_elements=id`) and the local resources of that type it no longer has are deleted through the
 * write path (index rows too). The types only reached through `_revinclude` are walked with it: the
 * included resources come whole (`_elements` subsets the matches), are written (a change to one of
 * them alone is seen here) and give their ids. Nothing is deleted unless the walk reached the last
 * page, nor more than `maxShare` of a type's local resources unless `force`.
 */
export interface PruneOptions {
  upstream: string;
  count: number;
  /** largest share (0–1) of a type's local resources one run may delete without `force`. */
  maxShare: number;
  force: boolean;
  batchSize?: number;
  onPage?: (p: { type: string; pages: number; ids: number; total?: number }) => void;
  onReject?: (where: string, reason: string) => void;
}

export interface PruneSummary {
  type: ResourceType;
  upstream: number;
  local: number;
  deleted: number;
}

export class PruneRefused extends SyncError {}

const isSubsetted = (r: Record<string, unknown>) =>
  ((r.meta as { tag?: { code?: string }[] } | undefined)?.tag ?? []).some((t) => t?.code === 'SUBSETTED');

export async function prunePlan(sql: Sql, registry: Registry, systems: TokenSystems, client: UpstreamClient, plan: TypePlan, opts: PruneOptions): Promise<{ types: PruneSummary[]; refreshed: number }> {
  const ids = new Map<ResourceType, Set<string>>([[plan.type, new Set()]]);
  let refreshed = 0;
  const q = new URLSearchParams({ _elements: 'id', _count: String(opts.count) });
  for (const r of plan.revinclude) q.append('_revinclude', r);
  let url: string | undefined = `${opts.upstream}/${plan.type}?${q}`;
  let pages = 0;
  let total: number | undefined;
  while (url !== undefined) {
    const { body, url: at } = await client.bundle(url);
    total ??= typeof body.total === 'number' ? body.total : undefined;
    const included: WriteEntry[] = [];
    pages++;
    (body.entry ?? []).forEach((e, i) => {
      const r = e.resource;
      const mode = e.search?.mode ?? 'match';
      if (typeof r?.id !== 'string' || typeof r.resourceType !== 'string' || mode === 'outcome') return;
      const type = r.resourceType as ResourceType;
      if (mode === 'match' && type === plan.type) ids.get(type)!.add(r.id);
      if (mode !== 'include' || !plan.revinclude.some((x) => x.startsWith(`${type}:`))) return;
      if (!ids.has(type)) ids.set(type, new Set());
      ids.get(type)!.add(r.id);
      if (isSubsetted(r)) return;
      const where = `${plan.type} ids page ${pages}#entry[${i}] (${type}/${r.id.slice(0, 64)})`;
      const p = prepare(registry, { kind: 'resource', where, value: r });
      if (p.entry) included.push(p.entry);
      else opts.onReject?.(where, clipReason(p.reason));
    });
    if (included.length) {
      const c = await loaderTx(sql, (tx) => writeBatch(sql, registry, systems, included, tx));
      refreshed += c.inserted + c.updated;
    }
    opts.onPage?.({ type: plan.type, pages, ids: ids.get(plan.type)!.size, total });
    url = nextLink(body);
    assertNextOnHost(url, opts.upstream, at);
  }
  // Every type is checked before any is pruned: a refusal deletes nothing.
  const plans: { type: ResourceType; local: number; gone: string[] }[] = [];
  for (const [type, seen] of ids) {
    const local = await sql<{ id: string }[]>`select id from resource where type = ${type}`;
    const gone = local.map((r) => r.id).filter((id) => !seen.has(id));
    const allowed = Math.floor(local.length * opts.maxShare);
    if (gone.length > allowed && !opts.force) {
      throw new PruneRefused(
        `${type}: --prune would delete ${gone.length} of ${local.length} local resources, more than --max-prune allows (${allowed}); nothing was deleted (--force to delete them)`,
      );
    }
    plans.push({ type, local: local.length, gone });
  }
  const size = opts.batchSize ?? 1000;
  const out: PruneSummary[] = [];
  for (const { type, local, gone } of plans) {
    let deleted = 0;
    for (let i = 0; i < gone.length; i += size) {
      const batch = gone.slice(i, i + size).map((id) => ({ op: 'delete' as const, type, id }));
      deleted += (await loaderTx(sql, (tx) => writeBatch(sql, registry, systems, batch, tx))).deleted;
    }
    out.push({ type, upstream: ids.get(type)!.size, local, deleted });
  }
  return { types: out, refreshed };
}
