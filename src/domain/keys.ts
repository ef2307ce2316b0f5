import { hash, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/open.ts';
import { toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

/** Every key starts with this, so that secret scanners and people recognise it. */
export const KEY_PREFIX = 'brier_sk_';
const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 6;

export interface KeyOwner {
  keyId: string;
  userId: string;
}

export interface KeyListing {
  id: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface CreatedKey extends KeyListing {
  /** The key itself: returned once, never stored. */
  key: string;
}

export interface KeyServiceOptions {
  maxKeysPerAccount: number;
  /** How long a verification result is trusted before the database is read again (<= 1000 ms). */
  cacheTtlMs: number;
  cacheSize?: number;
  now?: () => number;
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'base64url');
}

export function createKeyService(db: Db, options: KeyServiceOptions) {
  const now = options.now ?? Date.now;
  // Caches hits and misses alike, so that a flood of bad keys costs one read per key per TTL.
  const cache = new LRUCache<string, (KeyOwner & { verified: boolean }) | 'none'>({
    max: options.cacheSize ?? 10_000,
    ttl: Math.max(1, options.cacheTtlMs),
  });

  async function create(userId: string, name: string): Promise<CreatedKey> {
    const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = {
      id: `key_${randomUUID().replaceAll('-', '')}`,
      user_id: userId,
      name,
      prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
      hash: hashKey(key),
      created_at: now(),
      last_used_at: null,
      revoked_at: null,
    };
    await db.kysely.transaction().execute(async (tx) => {
      // SQLite runs one transaction at a time on its single connection; PostgreSQL needs a
      // per-account lock so that two concurrent creates cannot both see room for one more key.
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${userId}))`.execute(tx);
      const { active } = await tx
        .selectFrom('api_key')
        .select((eb) => eb.fn.countAll<number | string>().as('active'))
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(active) >= options.maxKeysPerAccount) {
        throw fail(
          'KEY_LIMIT',
          `this account already has ${options.maxKeysPerAccount} active API keys (the limit); revoke one before creating another`,
        );
      }
      await tx.insertInto('api_key').values(row).execute();
    });
    return { key, ...listing(row) };
  }

  /**
   * Resolves a presented key to its owner, or null when unknown or revoked. Throws EMAIL_NOT_VERIFIED
   * when the key's account has not verified its email. One indexed read (joined to the user) per key
   * per TTL; hits, misses and unverified owners are all cached.
   */
  async function verify(key: string): Promise<KeyOwner | null> {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
    const hash = hashKey(key);
    let entry = cache.get(hash);
    if (entry === undefined) {
      const row = await db.kysely
        .selectFrom('api_key')
        .innerJoin('user', 'user.id', 'api_key.user_id')
        .select(['api_key.id as id', 'api_key.user_id as user_id', 'user.emailVerified as verified'])
        .where('api_key.hash', '=', hash)
        .where('api_key.revoked_at', 'is', null)
        .executeTakeFirst();
      entry = !row
        ? 'none'
        : { keyId: row.id, userId: row.user_id, verified: row.verified === true || Number(row.verified) === 1 };
      cache.set(hash, entry);
    }
    if (entry === 'none') return null;
    if (!entry.verified) {
      throw fail(
        'EMAIL_NOT_VERIFIED',
        "this API key's account has not verified its email; open the link in the verification email (or ask for a new one) first",
      );
    }
    return { keyId: entry.keyId, userId: entry.userId };
  }

  async function list(userId: string, options: { includeRevoked?: boolean } = {}): Promise<KeyListing[]> {
    let query = db.kysely.selectFrom('api_key').selectAll().where('user_id', '=', userId);
    if (!options.includeRevoked) query = query.where('revoked_at', 'is', null);
    const rows = await query.orderBy('created_at', 'asc').execute();
    return rows.map(listing);
  }

  /** Revokes at once in this process; other processes see it within the cache TTL. */
  async function revoke(userId: string, keyId: string): Promise<boolean> {
    const row = await db.kysely
      .updateTable('api_key')
      .set({ revoked_at: now() })
      .where('id', '=', keyId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning(['hash'])
      .executeTakeFirst();
    if (!row) return false;
    cache.delete(row.hash);
    return true;
  }

  /** Revokes every active key of an account (account deletion); returns how many. */
  async function revokeAll(userId: string): Promise<number> {
    const rows = await db.kysely
      .updateTable('api_key')
      .set({ revoked_at: now() })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning(['hash'])
      .execute();
    for (const row of rows) cache.delete(row.hash);
    return rows.length;
  }

  return { create, verify, list, revoke, revokeAll };
}

export type KeyService = ReturnType<typeof createKeyService>;

function listing(row: {
  id: string;
  name: string;
  prefix: string;
  created_at: number | string;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
}): KeyListing {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: Number(row.created_at),
    lastUsedAt: toMs(row.last_used_at),
    revokedAt: toMs(row.revoked_at),
  };
}
