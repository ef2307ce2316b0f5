import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.ts';

export interface Account {
  id: string;
  email: string;
}

/**
 * Accounts as the local CLI needs them until the control plane owns sign-up: find by email,
 * or create a verified account (the operator vouches for the address).
 */
export function createAccountService(db: Db) {
  async function ensure(email: string): Promise<Account> {
    const normalized = email.trim().toLowerCase();
    const found = await db.kysely
      .selectFrom('user')
      .select(['id', 'email'])
      .where('email', '=', normalized)
      .executeTakeFirst();
    if (found) return found;
    const now = new Date();
    const row = {
      id: randomUUID().replaceAll('-', ''),
      name: normalized.split('@')[0] ?? normalized,
      email: normalized,
      emailVerified: true,
      image: null,
      createdAt: now,
      updatedAt: now,
    };
    await db.kysely
      .insertInto('user')
      .values(row)
      .onConflict((oc) => oc.column('email').doNothing())
      .execute();
    return db.kysely
      .selectFrom('user')
      .select(['id', 'email'])
      .where('email', '=', normalized)
      .executeTakeFirstOrThrow();
  }
  return { ensure };
}

export type AccountService = ReturnType<typeof createAccountService>;
