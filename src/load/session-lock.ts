import type postgres from 'postgres';
import type { Sql } from '../db.ts';

/**
 * An advisory lock held by a session: a reserved connection of the pool, for as long as the work
 * under the lock lasts. The connection always goes back to the pool, whether the lock query, the
 * work or the unlock fails.
 */
export interface SessionLock {
  conn: postgres.ReservedSql;
  /** Unlocks and gives the connection back (also when the unlock fails, which it then throws). */
  release(): Promise<void>;
}

/** Takes advisory lock `key` on a connection of its own; undefined when another session holds it. */
export async function tryLock(sql: Sql, key: number): Promise<SessionLock | undefined> {
  const conn = await sql.reserve();
  let locked = false;
  try {
    [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${key}) as locked`;
  } finally {
    if (!locked) conn.release();
  }
  if (!locked) return undefined;
  return {
    conn,
    release: async () => {
      try {
        await conn`select pg_advisory_unlock(${key})`;
      } finally {
        conn.release();
      }
    },
  };
}

/**
 * Runs `fn` on the session that holds advisory lock `key`, then unlocks; `busy` instead when another
 * session holds it. A failure of `fn` is what is thrown, even if the unlock fails after it.
 */
export async function withSessionLock<T>(sql: Sql, key: number, fn: (conn: postgres.ReservedSql) => Promise<T>, busy: () => T | Promise<T>): Promise<T> {
  const lock = await tryLock(sql, key);
  if (!lock) return busy();
  let result: T;
  try {
    result = await fn(lock.conn);
  } catch (err) {
    await lock.release().catch(() => {});
    throw err;
  }
  await lock.release();
  return result;
}
