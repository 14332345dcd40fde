import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../db.ts';

/**
 * API keys (docs/security.md). A key is `afk_` + 32 random bytes in base64url (47 characters). The
 * database holds only its SHA-256 digest: a copy of the table lets nobody call the API. Keys are
 * created (the clear key is returned once, never again), listed (names and dates, never a key or a
 * digest), revoked by name (revoked rows stay, so the name keeps its history) and verified through a
 * KeyStore that keeps the active keys in memory for a short while.
 */
export const KEY_PREFIX = 'afk_';
export const KEY_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Name of the development key that the server makes for the embedded default (see ensureDevKey). */
export const DEV_KEY_NAME = 'dev';

export type KeyErrorCode = 'invalid-name' | 'invalid-rate-limit' | 'duplicate' | 'not-found' | 'collision';

export class KeyError extends Error {
  constructor(
    readonly code: KeyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What may be shown about a key: never the key, never its digest. */
export interface KeyInfo {
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** requests per second; null ⇒ RATE_LIMIT applies, 0 ⇒ unlimited. */
  rateLimit: number | null;
}

/** A key that verified: what the request handling needs to know about it. */
export interface VerifiedKey {
  name: string;
  rateLimit: number | null;
  /**
   * Identity of the key's rate-limit counter: a prefix of its digest, the same on every instance
   * and in every deployment that shares a Redis, and not the key (a digest cannot be inverted).
   */
  bucket: string;
}

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function digestKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

function checkName(name: string): void {
  if (!KEY_NAME_RE.test(name)) {
    throw new KeyError('invalid-name', `invalid key name "${name}": 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  }
}

function checkRateLimit(rateLimit: number | null | undefined): void {
  if (rateLimit === null || rateLimit === undefined) return;
  if (!Number.isSafeInteger(rateLimit) || rateLimit < 0 || rateLimit > 2_147_483_647) {
    throw new KeyError('invalid-rate-limit', `invalid rate limit ${rateLimit}: a whole number of requests per second, 0 for unlimited`);
  }
}

interface KeyRow {
  name: string;
  created_at: Date;
  revoked_at: Date | null;
  rate_limit: number | null;
}

const info = (r: KeyRow): KeyInfo => ({ name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at, rateLimit: r.rate_limit });

/** Creates a key; the clear key is in the result and nowhere else. */
export async function createKey(sql: Sql, opts: { name: string; rateLimit?: number | null }): Promise<{ key: string; info: KeyInfo }> {
  checkName(opts.name);
  checkRateLimit(opts.rateLimit);
  const key = generateKey();
  const rows = await sql<KeyRow[]>`
    insert into api_key (name, key_hash, rate_limit) values (${opts.name}, ${digestKey(key)}, ${opts.rateLimit ?? null})
    on conflict (name) do nothing
    returning name, created_at, revoked_at, rate_limit`;
  if (rows.length === 0) {
    throw new KeyError('duplicate', `an API key named "${opts.name}" already exists (a revoked key keeps its name): choose another name`);
  }
  return { key, info: info(rows[0]) };
}

export async function listKeys(sql: Sql): Promise<KeyInfo[]> {
  const rows = await sql<KeyRow[]>`select name, created_at, revoked_at, rate_limit from api_key order by created_at, name`;
  return rows.map(info);
}

/** Revokes a key by name; `already` when it was revoked before (nothing changes then). */
export async function revokeKey(sql: Sql, name: string): Promise<{ info: KeyInfo; already: boolean }> {
  const rows = await sql<KeyRow[]>`
    update api_key set revoked_at = now() where name = ${name} and revoked_at is null
    returning name, created_at, revoked_at, rate_limit`;
  if (rows.length) return { info: info(rows[0]), already: false };
  const [old] = await sql<KeyRow[]>`select name, created_at, revoked_at, rate_limit from api_key where name = ${name}`;
  if (!old) throw new KeyError('not-found', `no API key is named "${name}"`);
  return { info: info(old), already: true };
}

/** The name under which an API_KEYS key is stored: derived from its digest, never from the key. */
export function envKeyName(key: string): string {
  return `env-${digestKey(key).toString('hex').slice(0, 8)}`;
}

/**
 * Stores the keys of API_KEYS (development and tests), hashed like the others, under a derived
 * name; idempotent, safe when several instances start together. A key that was revoked stays
 * revoked: revocation is deliberate, restarting the server must not undo it.
 */
export async function ensureEnvKeys(sql: Sql, keys: readonly string[]): Promise<{ name: string; status: 'active' | 'revoked' }[]> {
  const out: { name: string; status: 'active' | 'revoked' }[] = [];
  for (const key of new Set(keys)) {
    const digest = digestKey(key);
    const name = envKeyName(key);
    await sql`insert into api_key (name, key_hash) values (${name}, ${digest}) on conflict do nothing`;
    const [row] = await sql<{ name: string; key_hash: Buffer; revoked_at: Date | null }[]>`
      select name, key_hash, revoked_at from api_key where key_hash = ${digest}`;
    if (!row) {
      throw new KeyError('collision', `API_KEYS: the name ${name} is already taken by another key; rename that key or change this one`);
    }
    out.push({ name: row.name, status: row.revoked_at ? 'revoked' : 'active' });
  }
  return out;
}

/** true when `key` is stored and not revoked (a direct database check, no cache). */
export async function isActiveKey(sql: Sql, key: string): Promise<boolean> {
  const rows = await sql`select 1 from api_key where key_hash = ${digestKey(key)} and revoked_at is null`;
  return rows.length > 0;
}

interface Entry {
  digest: Buffer;
  key: VerifiedKey;
}

export interface KeyStoreOptions {
  /** how long the active keys are kept in memory: a revoked key stops working within this time. */
  ttlMs?: number;
  /** an unknown key reloads the keys (a key created a moment ago) at most this often. */
  missRefreshMs?: number;
  now?: () => number;
  /**
   * where the keys are read from (default: the store's pool): with replicas, a hot standby, the
   * others and the primary after it (src/store/replicas.ts ReplicaSet.run). The reload an unknown
   * key makes reads the store's pool (the primary): a key created a moment ago works at once.
   */
  read?: <T>(work: (sql: Sql) => Promise<T>) => Promise<T>;
}

/**
 * Verification with a short-lived in-memory copy of the active keys, so that a request does not
 * query the database.
 *
 * - The copy is reloaded when it is older than `ttlMs` (30 s): a key revoked in the database (by the
 *   CLI, by another instance) stops working within 30 s at most; a key revoked through this store
 *   stops at once.
 * - An unknown key reloads the copy too, at most once per `missRefreshMs` (1 s) whatever the number
 *   of bad requests: a key just created by the CLI works within a second, and a flood of invalid
 *   keys costs the database one small query per second.
 * - Timing: the presented key is hashed (time depends on its length only), the digest's first 8
 *   bytes select candidates in a Map and each candidate's full digest is compared with
 *   crypto.timingSafeEqual, without stopping at the first match. The Map lookup compares digests of
 *   the attacker's input, not keys: learning how far sha256(guess) agrees with a stored digest gives
 *   no information about any key (that would need a SHA-256 preimage). Revoked and unknown keys
 *   take the same path (revoked keys are not in the copy).
 */
export class KeyStore {
  private byPrefix = new Map<string, Entry[]>();
  /**
   * Keys that verified against the current copy, by the key as presented: a known key is admitted
   * without hashing it again and without a promise (src/routes/security.ts). Emptied whenever the
   * copy is replaced or invalidated, so a key revoked in the database stops working at the next
   * reload. Only keys that were found go in, so unknown keys cannot churn it.
   */
  private verdicts = new Map<string, VerifiedKey>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private loading?: Promise<void>;
  private generation = 0;
  readonly ttlMs: number;
  readonly missRefreshMs: number;
  private readonly now: () => number;
  private readonly read: <T>(work: (sql: Sql) => Promise<T>) => Promise<T>;
  /** keys read from replicas: a reload from them does not stand for the unknown key's reload from the primary. */
  private readonly readsElsewhere: boolean;

  constructor(
    private readonly sql: Sql,
    opts: KeyStoreOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 30_000;
    this.missRefreshMs = opts.missRefreshMs ?? 1_000;
    this.now = opts.now ?? Date.now;
    this.read = opts.read ?? ((work) => work(this.sql));
    this.readsElsewhere = opts.read !== undefined;
  }

  /**
   * The key's details when the current copy is fresh and the key verified against it already;
   * undefined otherwise (unknown, revoked, not seen since the last reload or a stale copy: then
   * `verify` answers). Synchronous: the request hook admits a known key without a promise.
   */
  cached(key: string): VerifiedKey | undefined {
    return this.now() - this.loadedAt < this.ttlMs ? this.verdicts.get(key) : undefined;
  }

  /** The key's details when it is active, undefined when it is unknown or revoked. */
  async verify(key: string | undefined): Promise<VerifiedKey | undefined> {
    if (!key) return undefined;
    const digest = digestKey(key);
    if (this.now() - this.loadedAt >= this.ttlMs) await this.refresh();
    const generation = this.generation;
    const copy = this.byPrefix;
    let hit = this.find(digest);
    if (!hit && this.now() - this.lastAttemptAt >= this.missRefreshMs) {
      try {
        await this.refresh(true);
        hit = this.find(digest);
      } catch {
        // the copy is still within its TTL: an unknown key stays unknown
      }
    }
    // Remembered only against the copy it was found in (a reload or an invalidation meanwhile empties
    // the verdicts, and this verdict must not outlive them).
    if (hit && generation === this.generation && copy === this.byPrefix) {
      if (this.verdicts.size >= 256) this.verdicts.clear();
      this.verdicts.set(key, hit);
    }
    return hit;
  }

  /** Forgets the copy: the next verification reloads it (after create/revoke in this process). */
  invalidate(): void {
    this.generation++;
    this.verdicts = new Map();
    this.loadedAt = Number.NEGATIVE_INFINITY;
    this.lastAttemptAt = Number.NEGATIVE_INFINITY;
    this.loading = undefined;
  }

  async create(opts: { name: string; rateLimit?: number | null }): Promise<{ key: string; info: KeyInfo }> {
    const r = await createKey(this.sql, opts);
    this.invalidate();
    return r;
  }

  async revoke(name: string): Promise<{ info: KeyInfo; already: boolean }> {
    const r = await revokeKey(this.sql, name);
    this.invalidate();
    return r;
  }

  private find(digest: Buffer): VerifiedKey | undefined {
    let found: VerifiedKey | undefined;
    for (const c of this.byPrefix.get(digest.subarray(0, 8).toString('hex')) ?? []) {
      if (timingSafeEqual(c.digest, digest)) found = c.key;
    }
    return found;
  }

  /** Reloads the copy (joins a reload in progress); `latest`: from the store's own pool, not `read`. */
  private refresh(latest = false): Promise<void> {
    if (!this.loading) {
      const p = this.load(latest).finally(() => {
        if (this.loading === p) this.loading = undefined;
      });
      this.loading = p;
    }
    return this.loading;
  }

  private async load(latest: boolean): Promise<void> {
    const generation = this.generation;
    const startedAt = this.now();
    if (latest || !this.readsElsewhere) this.lastAttemptAt = startedAt;
    const active = (sql: Sql) => sql<{ name: string; key_hash: Buffer; rate_limit: number | null }[]>`
      select name, key_hash, rate_limit from api_key where revoked_at is null`;
    const rows = await (latest ? active(this.sql) : this.read(active));
    if (generation !== this.generation) return; // invalidated meanwhile: a newer load will replace it
    const map = new Map<string, Entry[]>();
    for (const r of rows) {
      const prefix = r.key_hash.subarray(0, 8).toString('hex');
      const entry: Entry = {
        digest: Buffer.from(r.key_hash),
        key: { name: r.name, rateLimit: r.rate_limit, bucket: r.key_hash.subarray(0, 16).toString('hex') },
      };
      map.set(prefix, [...(map.get(prefix) ?? []), entry]);
    }
    this.byPrefix = map;
    this.verdicts = new Map();
    this.loadedAt = startedAt;
  }
}
