import type postgres from 'postgres';
import type { Sql } from '../db.ts';
import { COPY_BINARY, COPY_COLUMNS, COPY_TABLES } from '../store/copy-encode.ts';
import { CopyIn } from '../store/copy-in.ts';
import { BINARY_HEADER, BINARY_TRAILER } from '../store/pg-binary.ts';
import { INDEX_BUILDS } from './limits.ts';
import { tryLock, withSessionLock } from './session-lock.ts';

/**
 * The bulk path of an initial load into an empty database (src/load/bulk-load.ts drives it):
 *
 * 1. `startBulk`: under an advisory lock, the indexes of the index tables and of string_value are
 *    dropped (their definitions kept in load_state; `resource` keeps its keys, see INDEX_TABLES)
 *    and bulk_state marks the load as running.
 * 2. `BulkCopies`: each table gets a transaction of its own that TRUNCATEs it and then COPYs its
 *    rows `FREEZE`: rows are written frozen and all-visible (no VACUUM afterwards, index-only scans
 *    at once) and, with wal_level=minimal (the embedded server), never go through the WAL. The five
 *    transactions commit together once every row is in; then bulk_state goes.
 * 3. `rebuildIndexes`: string_value is filled from string_idx, indexes and constraints are built
 *    from sorted input, INDEX_BUILDS at a time (src/load/limits.ts: one per core), largest first,
 *    each table analysed.
 *
 * Interrupted before its rows were committed, the load leaves nothing: at the next start (or the
 * next bulk load) bulk_state is found, the five tables are emptied again and the indexes rebuilt.
 * Interrupted while indexes were built, the rows stay and the missing indexes are built then.
 */
const LOCK = 724012;

export class BulkRefused extends Error {}

/** A bulk load that failed once its rows were committed: they stay, and an incremental load of the same input finishes it. */
export class BulkIncomplete extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

export interface BulkSession {
  release(): Promise<void>;
}

interface IndexDefinition {
  table: string;
  name: string;
  /**
   * statements that recreate it, separated by ";\n" (a key constraint: its unique index, then the
   * constraint on it — run one at a time: ALTER TABLE waits for the builds on the same table, and
   * must not do so holding a lock of its own build's).
   */
  definition: string;
  drop: string;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The tables whose indexes a bulk load drops and builds again. `resource` keeps its three (the
 * primary key, (type, id), (type, rid)): COPY maintains them at little cost — keys arrive in
 * increasing order, and an id that comes again never reaches the COPY — while building them
 * afterwards would read the whole table back three times (COPY writes through a small ring of
 * buffers, and the page cache does not keep what it wrote).
 */
const INDEX_TABLES = [...COPY_TABLES.filter((t) => t !== 'resource'), 'string_value'];

/**
 * string_value (sql/016), the distinct values of string_idx that its trigger keeps on every other
 * write: a bulk load's triggers are off, so its indexes are dropped with the others, and their
 * build begins by filling it again from string_idx (also after an interruption: the indexes are
 * missing until then).
 */
const VALUES_TABLE = 'string_value';
async function refillValues(conn: postgres.ReservedSql): Promise<void> {
  await conn`begin`;
  try {
    await conn`set local max_parallel_workers_per_gather = 0`;
    await conn.unsafe(`truncate ${VALUES_TABLE}`);
    await conn.unsafe(`insert into ${VALUES_TABLE} (param, norm) select distinct param, norm from string_idx`);
    await conn`commit`;
  } catch (err) {
    await conn`rollback`.catch(() => {});
    throw err;
  }
}

/**
 * The tables a bulk load fills, each by a COPY of its own: the resources, their index rows, and the
 * counts per value (value_count, sql/012), which the loader computes from the rows it copies; the
 * triggers that keep those counts on every other write are off meanwhile.
 */
export const BULK_TABLES = [...COPY_TABLES, 'value_count'] as const;

async function setCountTriggers(db: postgres.Sql | postgres.TransactionSql, on: boolean): Promise<void> {
  for (const t of COPY_TABLES) await db.unsafe(`alter table ${t} ${on ? 'enable' : 'disable'} trigger user`);
}

/** The indexes and primary/unique constraints of the index tables. */
async function indexDefinitions(db: postgres.Sql | postgres.TransactionSql): Promise<IndexDefinition[]> {
  const rows = await db<{ table: string; name: string; indexdef: string; contype: string | null; conname: string | null }[]>`
    select c.relname as table, i.relname as name, pg_get_indexdef(i.oid) as indexdef, con.contype, con.conname
    from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_class c on c.oid = x.indrelid
    left join pg_constraint con on con.conindid = i.oid and con.contype in ('p', 'u') and con.conrelid = c.oid
    where c.relnamespace = current_schema()::regnamespace and c.relname = any(${INDEX_TABLES}::text[])
    order by c.relname, i.relname`;
  return rows.map((r) => {
    if (r.contype && r.conname) {
      const kind = r.contype === 'p' ? 'primary key' : 'unique';
      return {
        table: r.table,
        name: r.name,
        definition: `${r.indexdef};\nalter table ${quote(r.table)} add constraint ${quote(r.conname)} ${kind} using index ${quote(r.name)}`,
        drop: `alter table ${quote(r.table)} drop constraint ${quote(r.conname)}`,
      };
    }
    return { table: r.table, name: r.name, definition: r.indexdef, drop: `drop index ${quote(r.name)}` };
  });
}

async function setAutovacuum(db: postgres.Sql | postgres.TransactionSql, on: boolean): Promise<void> {
  for (const t of COPY_TABLES) await db.unsafe(on ? `alter table ${t} reset (autovacuum_enabled)` : `alter table ${t} set (autovacuum_enabled = false)`);
}

/**
 * Puts the tables back after an interrupted bulk load (the caller holds the lock): rows that were
 * not all committed are removed, the indexes rebuilt, autovacuum given back. Returns the number of
 * indexes rebuilt and whether rows were removed.
 */
async function recover(sql: Sql): Promise<{ indexes: number; emptied: boolean }> {
  const [{ rows, pending }] = await sql<{ rows: boolean; pending: number }[]>`
    select exists (select 1 from bulk_state) as rows, (select count(*)::int from load_state) as pending`;
  if (!rows && pending === 0) return { indexes: 0, emptied: false };
  if (rows) {
    await sql.begin(async (tx) => {
      await tx.unsafe(`truncate ${BULK_TABLES.join(', ')}`);
      await tx`delete from bulk_state`;
    });
  }
  await setCountTriggers(sql, true);
  const indexes = await rebuildIndexes(sql);
  await setAutovacuum(sql, true);
  return { indexes, emptied: rows };
}

/**
 * At start-up: finishes what an interrupted bulk load left (nobody holds its lock any more). Needs
 * a pool of INDEX_BUILDS + 2 connections when there is something to finish (the lock, the index
 * builds, an analysis beside them); nothing at all when there is not.
 */
export async function finishInterruptedBulk(sql: Sql, log: (message: string) => void = () => {}): Promise<number> {
  const [{ pending }] = await sql<{ pending: boolean }[]>`
    select exists (select 1 from bulk_state) or exists (select 1 from load_state) as pending`;
  if (!pending) return 0;
  return withSessionLock(
    sql,
    LOCK,
    async () => {
      const r = await recover(sql);
      if (r.emptied) log('an interrupted bulk load was found: its rows were not all committed, the tables are empty again — run the bulk load again');
      if (r.indexes) log(`recreated ${r.indexes} index(es) left behind by an interrupted bulk load`);
      return r.indexes;
    },
    () => 0, // a bulk load is running; it cleans up after itself
  );
}

/**
 * Starts a bulk load: the lock, the check that the database is empty, the indexes dropped and their
 * definitions kept, autovacuum off (it would scan the tables while their indexes are built).
 */
export async function startBulk(sql: Sql): Promise<BulkSession> {
  const lock = await tryLock(sql, LOCK);
  if (!lock) throw new BulkRefused('another bulk load is running on this database');
  try {
    await recover(sql);
    const [{ any }] = await sql<{ any: boolean }[]>`select exists (select 1 from resource) as any`;
    if (any) throw new BulkRefused('--bulk needs an empty database; use the default (incremental) load to add to existing data');
    await sql.begin(async (tx) => {
      await tx`insert into bulk_state default values`;
      for (const d of await indexDefinitions(tx)) {
        await tx`insert into load_state (index_name, definition, table_name) values (${d.name}, ${d.definition}, ${d.table})`;
        await tx.unsafe(d.drop);
      }
      await setAutovacuum(tx, false);
      await setCountTriggers(tx, false);
    });
  } catch (err) {
    await lock.release();
    throw err;
  }
  return { release: () => lock.release() };
}

/** The rows (and their counts) are all committed: an interruption from now on keeps them; later writes count again. */
export async function rowsCommitted(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from bulk_state`;
    await setCountTriggers(tx, true);
  });
}

/**
 * A bulk load that failed: whatever it committed is kept only if all its rows were (bulk_state
 * gone), the indexes are rebuilt, autovacuum is back and the lock released.
 */
export async function failBulk(sql: Sql, session: BulkSession): Promise<void> {
  try {
    await recover(sql);
  } finally {
    await session.release();
  }
}

/** Indexes done, tables analysed: autovacuum back, the lock released. */
export async function endBulk(sql: Sql, session: BulkSession): Promise<void> {
  try {
    await setAutovacuum(sql, true);
  } finally {
    await session.release();
  }
}

/**
 * maintenance_work_mem of an index build depends on its method.
 *
 * A btree build sorts its rows; a sort that fits in memory is one quicksort of every row, whose
 * comparisons miss the CPU cache at each step, and an external sort of small runs (each sorted
 * within the cache) merged afterwards costs much less: 8 MB runs, the fastest on these machines.
 *
 * A GIN build gathers its entries in memory and writes them out whenever the memory is full: more
 * memory is faster. It gets up to 3 GB, but at most half of shared_buffers (a stand-in for the
 * server's memory, which SQL cannot see), shared among the INDEX_BUILDS builds that run at once
 * (half of it at most), and never less than the server's own setting.
 */
const SORT_MEMORY = `set maintenance_work_mem = '8MB'`;
const GIN_MEMORY = `select set_config('maintenance_work_mem', (greatest(
    pg_size_bytes(current_setting('maintenance_work_mem')),
    least(pg_size_bytes('3GB'), pg_size_bytes(current_setting('shared_buffers')) / ${Math.max(2, INDEX_BUILDS)})) / 1024)::bigint::text || 'kB', false)`;

/** An index definition as pg_get_indexdef writes it ("… USING gin (…)"). */
const isGin = (definition: string) => / USING gin /i.test(definition);

/** The statement that sets maintenance_work_mem for building the index of `definition`. */
export const buildMemory = (definition: string): string => (isGin(definition) ? GIN_MEMORY : SORT_MEMORY);

type Task = (conn: postgres.ReservedSql) => Promise<unknown>;

/**
 * Builds the indexes kept in load_state, INDEX_BUILDS at a time, largest table first (GIN before
 * btree: it costs more per row), then analyses the tables (statistics for the planner; no VACUUM: the
 * rows are frozen and all-visible).
 */
export async function rebuildIndexes(sql: Sql, onIndex?: (name: string, ms: number) => void): Promise<number> {
  const defs = await sql<{ index_name: string; definition: string; table_name: string | null; bytes: string }[]>`
    select s.index_name, s.definition, s.table_name, coalesce(pg_table_size(to_regclass(s.table_name)), 0)::text as bytes from load_state s`;
  const weight = (d: (typeof defs)[number]) => Number(d.bytes) * (isGin(d.definition) ? 2 : 1);
  const refill = defs.some((d) => d.table_name === VALUES_TABLE) ? deferred<void>() : undefined;
  // First in the queue; the builds of string_value's indexes wait for it.
  const fill: Task[] = refill
    ? [async (conn) => {
        const t0 = performance.now();
        try {
          await refillValues(conn);
          refill.resolve();
        } catch (err) {
          refill.reject(err);
          throw err;
        }
        onIndex?.(`fill ${VALUES_TABLE}`, performance.now() - t0);
      }]
    : [];
  const builds: Task[] = defs
    .sort((a, b) => weight(b) - weight(a))
    .map((d) => async (conn) => {
      if (d.table_name === VALUES_TABLE) await refill?.promise;
      const t0 = performance.now();
      const [{ exists }] = await conn<{ exists: boolean }[]>`
        select exists (select 1 from pg_class where relnamespace = current_schema()::regnamespace and relname = ${d.index_name}) as exists`;
      if (!exists) {
        await conn.unsafe(buildMemory(d.definition));
        for (const statement of d.definition.split(';\n')) await conn.unsafe(statement);
      } else if (d.definition.includes(';\n')) {
        // Interrupted between the index and its constraint: the constraint may be missing.
        const [{ constrained }] = await conn<{ constrained: boolean }[]>`
          select exists (select 1 from pg_constraint where conindid = to_regclass(${d.index_name})) as constrained`;
        if (!constrained) for (const statement of d.definition.split(';\n').slice(1)) await conn.unsafe(statement);
      }
      await conn`delete from load_state where index_name = ${d.index_name}`;
      onIndex?.(d.index_name, performance.now() - t0);
    });
  const analyze = async (conn: Sql | postgres.ReservedSql, t: string) => {
    const t0 = performance.now();
    await conn.unsafe(`analyze ${t}`);
    onIndex?.(`analyze ${t}`, performance.now() - t0);
  };
  // The index tables are analysed after their builds (which read them into memory). resource's
  // sample is pages read at random from the largest heap, mostly waiting for the disk, so it runs
  // beside the builds on a connection of its own.
  const resourceAnalysis = analyze(sql, 'resource');
  resourceAnalysis.catch(() => {}); // awaited below
  const analyses: Task[] = INDEX_TABLES.map((t) => (conn) => analyze(conn, t));
  const queue = [...fill, ...builds, ...analyses];
  const worker = async () => {
    const conn = await sql.reserve();
    try {
      await conn`set max_parallel_maintenance_workers = 0`;
      for (let t = queue.shift(); t; t = queue.shift()) await t(conn);
    } finally {
      await conn`reset maintenance_work_mem`.catch(() => {});
      await conn`reset max_parallel_maintenance_workers`.catch(() => {});
      conn.release();
    }
  };
  await Promise.all([...Array.from({ length: INDEX_BUILDS }, worker), resourceAnalysis]);
  return defs.length;
}

/** COPY statements of a table are cut at this size: a refused row is reported within 64 MB, not at the end. */
const COPY_STATEMENT_BYTES = 64 << 20;

/** One table's COPY stream inside its transaction; a new COPY statement every COPY_STATEMENT_BYTES. */
class CopySink {
  private copy: CopyIn | undefined;
  private bytes = 0;

  constructor(
    private readonly tx: postgres.TransactionSql,
    readonly table: string,
  ) {}

  private async open(): Promise<CopyIn> {
    const binary = COPY_BINARY[this.table];
    const copy = await CopyIn.open(this.tx.unsafe(`copy ${this.table} (${COPY_COLUMNS[this.table]}) from stdin (${binary ? 'format binary, ' : ''}freeze)`));
    this.copy = copy;
    this.bytes = 0;
    if (binary) await copy.write(BINARY_HEADER);
    return copy;
  }

  async write(data: Uint8Array): Promise<void> {
    if (data.length === 0) return;
    const copy = this.copy ?? (await this.open());
    this.bytes += data.length;
    await copy.write(data);
    if (this.bytes >= COPY_STATEMENT_BYTES) await this.close();
  }

  async close(): Promise<void> {
    const copy = this.copy;
    if (!copy) return;
    this.copy = undefined;
    await copy.end(COPY_BINARY[this.table] ? BINARY_TRAILER : undefined);
  }

  abort(err: Error): void {
    this.copy?.abort(err);
    this.copy = undefined;
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** The COPY transactions of a bulk load, one per table of BULK_TABLES (one connection each). */
export class BulkCopies {
  private constructor(
    private readonly sinks: CopySink[],
    private readonly barrier: ReturnType<typeof deferred<void>>,
    private readonly committed: Promise<void>[],
  ) {}

  static async open(sql: Sql): Promise<BulkCopies> {
    const barrier = deferred<void>();
    const ready: Promise<CopySink>[] = [];
    const committed: Promise<void>[] = [];
    for (const table of BULK_TABLES) {
      const sink = deferred<CopySink>();
      ready.push(sink.promise);
      const done = sql
        .begin(async (tx) => {
          await tx.unsafe(`truncate ${table}`);
          sink.resolve(new CopySink(tx, table));
          await barrier.promise;
        })
        .then(
          () => {},
          (err: unknown) => {
            sink.reject(err);
            throw err;
          },
        );
      // Awaited by commit or abort; a transaction lost before then (its connection closed) must not
      // be an unhandled rejection, which ended the loader's process.
      done.catch(() => {});
      committed.push(done);
    }
    try {
      return new BulkCopies(await Promise.all(ready), barrier, committed);
    } catch (err) {
      barrier.reject(err);
      await Promise.allSettled(committed);
      throw err;
    }
  }

  /** Writes one chunk's data of the tables (BULK_TABLES order, as many as given), waiting while PostgreSQL catches up. */
  async write(tables: Uint8Array[]): Promise<void> {
    await Promise.all(tables.map((t, i) => this.sinks[i].write(t)));
  }

  /** Ends the COPY statements and commits the five transactions. */
  async commit(): Promise<void> {
    // Every COPY ended (finished or refused) before any transaction is told to roll back: a ROLLBACK
    // issued while another table's COPY is still ending is refused by postgres.js (a query during a
    // COPY), and that transaction stayed open, holding its table's lock.
    const closed = await Promise.allSettled(this.sinks.map((s) => s.close()));
    const refused = closed.find((c) => c.status === 'rejected');
    if (refused) {
      await this.abort(refused.reason as Error);
      throw refused.reason;
    }
    this.barrier.resolve();
    await Promise.all(this.committed);
  }

  /** Rolls the five transactions back (their tables are as empty as before). */
  async abort(err: Error): Promise<void> {
    for (const s of this.sinks) s.abort(err);
    this.barrier.reject(err);
    await Promise.allSettled(this.committed);
  }
}
