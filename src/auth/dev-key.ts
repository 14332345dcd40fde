import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sql } from '../db.ts';
import { DEV_KEY_NAME, digestKey, generateKey, isActiveKey, KEY_PREFIX } from './keys.ts';

/**
 * The development key of the embedded default (`npm start` without DATABASE_URL nor API_KEYS).
 *
 * The database keeps only digests, so a key can be shown only when it is made. The clear key is
 * therefore kept in DATA_DIR/dev-api-key (mode 0600, beside the embedded database, which is just
 * as local) and shown at every start. When that file is missing, or holds a key that is no longer
 * active (revoked, or the database was reset), a new key replaces the row named `dev` and the file.
 */
export const DEV_KEY_FILE = 'dev-api-key';

export async function ensureDevKey(sql: Sql, dataDir: string): Promise<{ key: string; file: string; created: boolean }> {
  const file = path.resolve(dataDir, DEV_KEY_FILE);
  let key: string | undefined;
  try {
    key = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (key && key.startsWith(KEY_PREFIX) && (await isActiveKey(sql, key))) {
    await chmod(file, 0o600);
    return { key, file, created: false };
  }
  key = generateKey();
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${key}\n`, { mode: 0o600 });
  await rename(tmp, file);
  await sql`
    insert into api_key (name, key_hash) values (${DEV_KEY_NAME}, ${digestKey(key)})
    on conflict (name) do update set key_hash = excluded.key_hash, created_at = now(), revoked_at = null, rate_limit = null`;
  return { key, file, created: true };
}
