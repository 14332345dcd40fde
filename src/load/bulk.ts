import type { Sql } from '../db.ts';
import type { Registry } from '../registry/index.ts';
import type { SystemIds } from '../store/write.ts';
import { reindex } from './loader.ts';

/**
 * Bulk path for an initial load into an empty database: the index tables lose their value indexes
 * while rows stream in and get them back, built once, at the end (a btree built from sorted input
 * is several times cheaper than maintained row by row at random places). The key indexes
 * (param, rid, …) stay: rows arrive in rid order, so each parameter only ever appends to its own
 * right edge, which costs little, and the database has CPU to spare while the loader's thread is
 * busy parsing; the final rebuild is that much shorter. The dropped definitions are kept in
 * load_state first, so an interrupted bulk load is finished by the next loader or server start.
 */
const INDEX_TABLES = ['token_idx', 'string_idx', 'date_idx', 'reference_idx'];
const BULK_TABLES = ['resource', ...INDEX_TABLES];
/** Indexes kept during a bulk load: those whose key starts with (param, rid). */
export const keptDuringBulk = (indexdef: string) => /\(param, rid\b/.test(indexdef);
const LOCK = 724012;

export interface BulkState {
  /** resources rewritten or deleted during the bulk load: their index rows are rebuilt at the end. */
  stale: Set<string>;
  release(): Promise<void>;
}

export class BulkRefused extends Error {}

export async function startBulk(sql: Sql): Promise<BulkState> {
  const conn = await sql.reserve();
  const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${LOCK}) as locked`;
  if (!locked) {
    conn.release();
    throw new BulkRefused('another bulk load is running on this database');
  }
  const release = async () => {
    await conn`select pg_advisory_unlock(${LOCK})`;
    conn.release();
  };
  try {
    const [{ pending }] = await sql<{ pending: number }[]>`select count(*)::int as pending from load_state`;
    if (pending === 0) {
      const [{ any }] = await sql<{ any: boolean }[]>`select exists (select 1 from resource) as any`;
      if (any) throw new BulkRefused('--bulk needs an empty database; use the default (incremental) load to add to existing data');
      await sql.begin(async (tx) => {
        const defs = await tx<{ indexname: string; indexdef: string }[]>`
          select indexname, indexdef from pg_indexes
          where schemaname = current_schema() and tablename = any(${INDEX_TABLES}::text[])`;
        for (const d of defs.filter((x) => !keptDuringBulk(x.indexdef))) {
          await tx`insert into load_state (index_name, definition) values (${d.indexname}, ${d.indexdef})`;
          await tx.unsafe(`drop index "${d.indexname.replace(/"/g, '""')}"`);
        }
        // Autovacuum would vacuum and analyze the growing tables again and again while the rows
        // stream in (five times during a national load), taking CPU from the load: the VACUUM
        // ANALYZE at the end does it once.
        for (const t of BULK_TABLES) await tx.unsafe(`alter table ${t} set (autovacuum_enabled = false)`);
      });
    }
  } catch (err) {
    await release();
    throw err;
  }
  return { stale: new Set(), release };
}

/** Recreates the indexes a bulk load dropped (two at a time: the machines have two cores). */
export async function recreateIndexes(sql: Sql): Promise<number> {
  const defs = await sql<{ index_name: string; definition: string }[]>`select index_name, definition from load_state order by index_name`;
  const queue = [...defs];
  const worker = async () => {
    const conn = await sql.reserve();
    try {
      await conn`set maintenance_work_mem = '1GB'`;
      await conn`set max_parallel_maintenance_workers = 0`;
      for (let d = queue.shift(); d; d = queue.shift()) {
        const [{ exists }] = await conn<{ exists: boolean }[]>`
          select exists (select 1 from pg_indexes where schemaname = current_schema() and indexname = ${d.index_name}) as exists`;
        if (!exists) await conn.unsafe(d.definition);
        await conn`delete from load_state where index_name = ${d.index_name}`;
      }
    } finally {
      conn.release();
    }
  };
  await Promise.all([worker(), worker()]);
  return defs.length;
}

export async function finishBulk(sql: Sql, state: BulkState, registry: Registry, systems: SystemIds): Promise<void> {
  try {
    await recreateIndexes(sql);
    await reindex(sql, registry, systems, [...state.stale]);
    // Visibility map and statistics: index-only scans and good plans from the first query on.
    for (const t of BULK_TABLES) await sql.unsafe(`vacuum (analyze) ${t}`);
    await enableAutovacuum(sql);
  } finally {
    await state.release();
  }
}

/** Gives the tables back to autovacuum (a bulk load turns it off while rows stream in). */
async function enableAutovacuum(sql: Sql): Promise<void> {
  for (const t of BULK_TABLES) await sql.unsafe(`alter table ${t} reset (autovacuum_enabled)`);
}

/** At start-up: finishes a bulk load that was interrupted (nobody holds its lock any more). */
export async function finishInterruptedBulk(sql: Sql): Promise<number> {
  const [{ pending }] = await sql<{ pending: number }[]>`select count(*)::int as pending from load_state`;
  if (pending === 0) return 0;
  const conn = await sql.reserve();
  try {
    const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${LOCK}) as locked`;
    if (!locked) return 0; // a bulk load is running; it will rebuild them itself
    try {
      const n = await recreateIndexes(sql);
      await enableAutovacuum(sql);
      return n;
    } finally {
      await conn`select pg_advisory_unlock(${LOCK})`;
    }
  } finally {
    conn.release();
  }
}
