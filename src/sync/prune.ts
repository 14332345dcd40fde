import type { Sql } from '../db.ts';
import type { Registry, ResourceType } from '../registry/index.ts';
import type { TokenSystems } from '../store/token-systems.ts';
import { loaderTx, writeBatch } from '../store/write.ts';
import { sameOrigin, SyncError, type UpstreamClient } from './client.ts';
import { nextLink } from './mirror.ts';

/**
 * Deletions: the upstream has no feed of them, so its ids of a type are walked to the end
 * (`_elements=id`) and the local resources of that type it no longer has are deleted through the
 * write path (index rows too). Nothing is deleted unless the walk reached the last page, nor more
 * than `maxShare` of the local resources unless `force`.
 */
export interface PruneOptions {
  upstream: string;
  count: number;
  /** largest share (0–1) of a type's local resources one run may delete without `force`. */
  maxShare: number;
  force: boolean;
  batchSize?: number;
  onPage?: (p: { type: string; pages: number; ids: number; total?: number }) => void;
}

export interface PruneSummary {
  type: ResourceType;
  upstream: number;
  local: number;
  deleted: number;
  requests: number;
}

export class PruneRefused extends SyncError {}

export async function pruneType(sql: Sql, registry: Registry, systems: TokenSystems, client: UpstreamClient, type: ResourceType, opts: PruneOptions): Promise<PruneSummary> {
  const ids = new Set<string>();
  const before = client.requests;
  let url: string | undefined = `${opts.upstream}/${type}?${new URLSearchParams({ _elements: 'id', _count: String(opts.count) })}`;
  let pages = 0;
  let total: number | undefined;
  while (url !== undefined) {
    const { body } = await client.bundle(url);
    total ??= typeof body.total === 'number' ? body.total : undefined;
    for (const e of body.entry ?? []) {
      const r = e.resource;
      if ((e.search?.mode ?? 'match') === 'match' && r?.resourceType === type && typeof r.id === 'string') ids.add(r.id);
    }
    opts.onPage?.({ type, pages: ++pages, ids: ids.size, total });
    url = nextLink(body);
    if (url !== undefined && !sameOrigin(url, opts.upstream)) throw new SyncError(`the upstream's next link ${url} is not on its host: not followed`);
  }
  const local = await sql<{ id: string }[]>`select id from resource where type = ${type}`;
  const gone = local.map((r) => r.id).filter((id) => !ids.has(id));
  const allowed = Math.floor(local.length * opts.maxShare);
  if (gone.length > allowed && !opts.force) {
    throw new PruneRefused(
      `${type}: --prune would delete ${gone.length} of ${local.length} local resources, more than --max-prune allows (${allowed}); nothing was deleted (--force to delete them)`,
    );
  }
  const size = opts.batchSize ?? 1000;
  let deleted = 0;
  for (let i = 0; i < gone.length; i += size) {
    const batch = gone.slice(i, i + size).map((id) => ({ op: 'delete' as const, type, id }));
    deleted += (await loaderTx(sql, (tx) => writeBatch(sql, registry, systems, batch, tx))).deleted;
  }
  return { type, upstream: ids.size, local: local.length, deleted, requests: client.requests - before };
}
