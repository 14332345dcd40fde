import type { Db } from '../db.ts';
import { stmt } from '../fhir/statement.ts';
import { runOn, type Run } from './query.ts';

/**
 * Token system URIs and their ids in token_system (index rows store the id; 0 is no system), cached
 * per process. Only ids found are kept: a system no stored token uses has none yet, and may appear
 * with the next load.
 */
export class TokenSystems {
  private readonly ids = new Map<string, number>();

  /** Reads the ids of `uris` not cached yet through `run` (a search: a system nobody stored stays unknown). */
  async find(run: Run, uris: Iterable<string>): Promise<void> {
    const missing = [...new Set(uris)].filter((u) => !this.ids.has(u));
    if (missing.length === 0) return;
    const found = await run<{ id: number; uri: string }[]>(stmt`select id, uri from token_system where uri = any(${missing}::text[])`);
    for (const r of found) this.ids.set(r.uri, r.id);
  }

  /**
   * Interns `uris` (a write: outside the batch's transaction, since an interned system is harmless
   * even if the batch rolls back), then caches their ids.
   */
  async intern(db: Db, uris: Iterable<string>): Promise<void> {
    const missing = [...new Set(uris)].filter((u) => !this.ids.has(u));
    if (missing.length === 0) return;
    await db`insert into token_system (uri) select unnest(${missing}::text[]) on conflict (uri) do nothing`;
    await this.find(runOn(db), missing);
  }

  /** The id of a system found or interned; undefined when unknown. */
  known(uri: string): number | undefined {
    return this.ids.get(uri);
  }

  /** The id an index row stores: 0 for no system; the system must have been interned. */
  id(uri: string | null): number {
    if (uri === null) return 0;
    const v = this.ids.get(uri);
    if (v === undefined) throw new Error(`token system not interned: ${uri}`);
    return v;
  }
}
