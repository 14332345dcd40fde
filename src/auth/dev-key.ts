import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sql } from '../db.ts';
import { DEV_KEY_NAME, digestKey, generateKey, isActiveKey, KEY_PREFIX } from './keys.ts';

/**
 * The secrets the embedded default keeps in DATA_DIR, beside its database (just as local, and just
 * as sensitive): files of mode 0600, never seen half-written.
 *
 * - `dev-api-key`: the development key (`npm start` without DATABASE_URL nor API_KEYS). The
 *   database keeps only digests, so a key can be shown only when it is made: the clear key is kept
 *   here and shown at every start. When the file is missing, or holds a key that is no longer active
 *   (revoked, or the database was reset), a new key replaces the row named `dev` and the file.
 * - `cursor-secret`: the paging cursors' HMAC key when CURSOR_SECRET is not set, so that the next
 *   links a client saved still work after a restart.
 */
export const DEV_KEY_FILE = 'dev-api-key';
export const CURSOR_SECRET_FILE = 'cursor-secret';

const readIfAny = async (file: string): Promise<string | undefined> => {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
};

/**
 * Writes `text` to `file` (mode 0600) through a temporary file: renamed over the file (`replace`),
 * or linked to its name only if there is none yet, so that of two processes creating it at once
 * both keep the one that won. Returns what the file holds afterwards.
 */
async function writePrivate(file: string, text: string, replace: boolean): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${text}\n`, { mode: 0o600 });
  if (replace) {
    await rename(tmp, file);
    return text;
  }
  try {
    await link(tmp, file);
    return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readIfAny(file)) ?? text;
  } finally {
    await unlink(tmp);
  }
}

export async function ensureDevKey(sql: Sql, dataDir: string): Promise<{ key: string; file: string; created: boolean }> {
  const file = path.resolve(dataDir, DEV_KEY_FILE);
  const kept = await readIfAny(file);
  if (kept && kept.startsWith(KEY_PREFIX) && (await isActiveKey(sql, kept))) {
    await chmod(file, 0o600);
    return { key: kept, file, created: false };
  }
  const key = await writePrivate(file, generateKey(), true);
  await sql`
    insert into api_key (name, key_hash) values (${DEV_KEY_NAME}, ${digestKey(key)})
    on conflict (name) do update set key_hash = excluded.key_hash, created_at = now(), revoked_at = null, rate_limit = null`;
  return { key, file, created: true };
}

/** The cursor secret kept in DATA_DIR, made on first use (CURSOR_SECRET's rules: 16 characters or more). */
export async function ensureCursorSecret(dataDir: string): Promise<string> {
  const file = path.resolve(dataDir, CURSOR_SECRET_FILE);
  const kept = await readIfAny(file);
  if (kept && kept.length >= 16) {
    await chmod(file, 0o600);
    return kept;
  }
  return writePrivate(file, randomBytes(32).toString('base64url'), kept !== undefined);
}
