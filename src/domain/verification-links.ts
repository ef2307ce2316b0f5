import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../db/open.ts';

const USED_PREFIX = 'brier-used-verify:';
/** Longer than a verification link lives (24 hours). */
const KEEP_MS = 25 * 3600 * 1000;

/**
 * Verification links work once: a used link leaves a marker in the verification table (the SHA-256
 * of its token, never the token) that outlives the link, and a link with a marker is refused.
 */
export function createUsedLinks(db: Db) {
  const marker = (token: string) => `${USED_PREFIX}${createHash('sha256').update(token).digest('base64url')}`;

  async function isUsed(token: string): Promise<boolean> {
    const found = await db.kysely
      .selectFrom('verification')
      .select('id')
      .where('identifier', '=', marker(token))
      .executeTakeFirst();
    return found !== undefined;
  }

  async function markUsed(token: string): Promise<void> {
    const now = new Date();
    await db.kysely
      .insertInto('verification')
      .values({
        id: randomUUID(),
        identifier: marker(token),
        value: 'used',
        expiresAt: new Date(now.getTime() + KEEP_MS),
        createdAt: now,
        updatedAt: now,
      })
      .execute();
  }

  return { isUsed, markUsed };
}

export type UsedLinks = ReturnType<typeof createUsedLinks>;
