/**
 * Opt-in retention of request content. Off by default: nothing of a /v1/systemone request's content
 * is kept unless its key, or its account, has a retention period. A retained request (its state,
 * questions and served answers) lives until its period ends, its key is revoked, retention is turned
 * off, or the account is deleted. Outcomes (src/domain/outcomes.ts) label retained requests.
 */
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/open.ts';
import { type Database, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

const DAY_MS = 86_400_000;
/** The longest retention period, in days. */
export const MAX_RETENTION_DAYS = 90;
export const ACCOUNT_SCOPE = 'account';

export interface RetentionPolicy {
  /** Days for every key of the account, or null (off). */
  account: number | null;
  /** Per-key periods, which take precedence over the account's. */
  keys: Record<string, number>;
}

export interface RetainedRequest {
  requestId: string;
  keyId: string;
  model: string;
  /** Compact JSON of the state, the questions map and the served answers. */
  state: string;
  questions: string;
  answers: string;
  createdAt: number;
  expiresAt: number;
}

export interface RetentionOptions {
  /** How long a policy lookup is cached (ms, default 1000): a change is seen within it everywhere. */
  cacheTtlMs?: number;
  now?: () => number;
  /**
   * Told, inside the deleting transaction, which templates lost outcomes when retention was revoked
   * (the job queue restarts or cancels the jobs that read them: src/domain/jobs.ts examplesDeleted).
   */
  onExamplesDeleted?: (
    tx: Kysely<Database>,
    userId: string,
    templates: readonly string[],
    why: string,
  ) => Promise<unknown>;
  /**
   * Told, inside the deleting transaction, that retained requests were revoked (the job queue restarts
   * the distillation jobs that read retained requests: src/domain/jobs.ts statesDeleted).
   */
  onRetainedDeleted?: (tx: Kysely<Database>, userId: string, why: string) => Promise<unknown>;
}

export function createRetention(db: Db, options: RetentionOptions = {}) {
  const now = options.now ?? Date.now;
  const cache = new LRUCache<string, { days: number | null }>({
    max: 10_000,
    ttl: Math.max(1, options.cacheTtlMs ?? 1000),
  });

  /**
   * Retention revoked for a key (turned off, or the key revoked): its retained requests go, and with
   * them the outcomes recorded from them, which carry the same content; the job queue is told.
   */
  async function revoke(tx: Kysely<Database>, userId: string, keyId: string, why: string): Promise<void> {
    const fromKey = tx
      .selectFrom('retained_request')
      .select('request_id')
      .where('user_id', '=', userId)
      .where('key_id', '=', keyId);
    // First, so that a distillation job reading them stops before they go (on PostgreSQL: its row locked).
    if (await fromKey.limit(1).executeTakeFirst()) {
      await options.onRetainedDeleted?.(tx, userId, `retained requests it read were deleted (${why})`);
    }
    const templates = await tx
      .selectFrom('example')
      .select('template_id')
      .distinct()
      .where('user_id', '=', userId)
      .where('source', '=', 'outcome')
      .where('request_id', 'in', fromKey)
      .execute();
    if (templates.length > 0) {
      await tx
        .deleteFrom('example')
        .where('user_id', '=', userId)
        .where('source', '=', 'outcome')
        .where('request_id', 'in', fromKey)
        .execute();
      await options.onExamplesDeleted?.(
        tx,
        userId,
        templates.map((t) => t.template_id),
        `outcomes were deleted with their requests (${why})`,
      );
    }
    await tx.deleteFrom('retained_request').where('user_id', '=', userId).where('key_id', '=', keyId).execute();
  }

  async function policy(userId: string): Promise<RetentionPolicy> {
    const rows = await db.kysely.selectFrom('retention_policy').selectAll().where('user_id', '=', userId).execute();
    const out: RetentionPolicy = { account: null, keys: {} };
    for (const r of rows) {
      if (r.scope === ACCOUNT_SCOPE) out.account = Number(r.days);
      else out.keys[r.scope] = Number(r.days);
    }
    return out;
  }

  /** The retention period (days) of requests made with `keyId`, or null when nothing is kept. */
  async function daysFor(userId: string, keyId: string): Promise<number | null> {
    const hit = cache.get(`${userId}\u0000${keyId}`);
    if (hit) return hit.days;
    const rows = await db.kysely
      .selectFrom('retention_policy')
      .select(['scope', 'days'])
      .where('user_id', '=', userId)
      .where('scope', 'in', [keyId, ACCOUNT_SCOPE])
      .execute();
    const own = rows.find((r) => r.scope === keyId) ?? rows.find((r) => r.scope === ACCOUNT_SCOPE);
    const days = own ? Number(own.days) : null;
    cache.set(`${userId}\u0000${keyId}`, { days });
    return days;
  }

  /**
   * Sets the period of a scope (the account, or one active key of it), or turns it off (null).
   * What is retained and no longer covered (a key whose retention is now off, or requests older than
   * a shorter period) is deleted at once.
   */
  async function set(userId: string, scope: string, days: number | null): Promise<RetentionPolicy> {
    if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
      throw fail('BAD_REQUEST', `days: from 1 to ${MAX_RETENTION_DAYS} (the limit), or 0 to turn retention off`);
    }
    if (scope !== ACCOUNT_SCOPE) {
      const key = await db.kysely
        .selectFrom('api_key')
        .select('id')
        .where('user_id', '=', userId)
        .where('id', '=', scope)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (!key) throw fail('NOT_FOUND', `key_id: no active API key ${scope} in this account`);
    }
    await db.kysely.transaction().execute(async (tx) => {
      await tx.deleteFrom('retention_policy').where('user_id', '=', userId).where('scope', '=', scope).execute();
      if (days !== null) {
        await tx.insertInto('retention_policy').values({ user_id: userId, scope, days, updated_at: now() }).execute();
      }
    });
    cache.clear();
    const after = await policy(userId);
    // Drop what the new policy no longer covers.
    const retained = await db.kysely
      .selectFrom('retained_request')
      .select(['key_id'])
      .distinct()
      .where('user_id', '=', userId)
      .execute();
    for (const { key_id } of retained) {
      const period = after.keys[key_id] ?? after.account;
      if (period === null) {
        await db.kysely.transaction().execute((tx) => revoke(tx, userId, key_id, 'retention was turned off'));
        continue;
      }
      // Shortened: what the new period no longer covers goes as it would have expired (outcomes stay).
      await db.kysely
        .deleteFrom('retained_request')
        .where('user_id', '=', userId)
        .where('key_id', '=', key_id)
        .where('created_at', '<', now() - period * DAY_MS)
        .execute();
      // A shorter period applies to what was kept under a longer one.
      await db.kysely
        .updateTable('retained_request')
        .set((eb) => ({ expires_at: eb('created_at', '+', period * DAY_MS) }))
        .where('user_id', '=', userId)
        .where('key_id', '=', key_id)
        .where('expires_at', '>', now() + period * DAY_MS)
        .execute();
    }
    return after;
  }

  /** Keeps one answered request for `days`. */
  async function keep(
    userId: string,
    request: Omit<RetainedRequest, 'createdAt' | 'expiresAt'>,
    days: number,
  ): Promise<void> {
    const at = now();
    await db.kysely
      .insertInto('retained_request')
      .values({
        request_id: request.requestId,
        user_id: userId,
        key_id: request.keyId,
        model: request.model,
        state: request.state,
        questions: request.questions,
        answers: request.answers,
        created_at: at,
        expires_at: at + days * DAY_MS,
      })
      .execute();
  }

  /** A retained request of this account that has not expired, or undefined. */
  async function find(userId: string, requestId: string): Promise<RetainedRequest | undefined> {
    const r = await db.kysely
      .selectFrom('retained_request')
      .selectAll()
      .where('user_id', '=', userId)
      .where('request_id', '=', requestId)
      .where('expires_at', '>', now())
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      requestId: r.request_id,
      keyId: r.key_id,
      model: r.model,
      state: r.state,
      questions: r.questions,
      answers: r.answers,
      createdAt: toMs(r.created_at) ?? 0,
      expiresAt: toMs(r.expires_at) ?? 0,
    };
  }

  /** How many requests the account has retained now (not expired). */
  async function count(userId: string): Promise<number> {
    const { n } = await db.kysely
      .selectFrom('retained_request')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .where('expires_at', '>', now())
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** A key was revoked: its retained requests, their outcomes and its own policy go with it. */
  async function forgetKey(userId: string, keyId: string): Promise<void> {
    await db.kysely.transaction().execute(async (tx) => {
      await revoke(tx, userId, keyId, 'its key was revoked');
      await tx.deleteFrom('retention_policy').where('user_id', '=', userId).where('scope', '=', keyId).execute();
    });
    cache.clear();
  }

  /** Deletes every expired retained request (run periodically). Returns how many. */
  async function sweep(): Promise<number> {
    const r = await db.kysely.deleteFrom('retained_request').where('expires_at', '<=', now()).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  return { policy, daysFor, set, keep, find, count, forgetKey, sweep };
}

export type Retention = ReturnType<typeof createRetention>;
