import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.ts';

export interface Account {
  id: string;
  email: string;
}

/** An account as its owner sees it. */
export interface AccountProfile extends Account {
  name: string;
  emailVerified: boolean;
  createdAt: Date;
}

/**
 * Accounts: read one by id (the console's account page), and, for the local CLI, find by email or
 * create a verified account (the operator vouches for the address).
 */
export function createAccountService(db: Db) {
  /** The account with this id, or null when it no longer exists. */
  async function find(userId: string): Promise<AccountProfile | null> {
    const row = await db.kysely.selectFrom('user').selectAll().where('id', '=', userId).executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      email: row.email,
      name: row.name,
      // SQLite stores booleans as 0/1 and dates as text; PostgreSQL as booleans and timestamps.
      emailVerified: row.emailVerified === true || Number(row.emailVerified) === 1,
      createdAt: new Date(row.createdAt),
    };
  }

  /** The account of this email (compared trimmed and lower-cased), or null. */
  async function byEmail(email: string): Promise<Account | null> {
    const found = await db.kysely
      .selectFrom('user')
      .select(['id', 'email'])
      .where('email', '=', email.trim().toLowerCase())
      .executeTakeFirst();
    return found ?? null;
  }

  async function ensure(email: string): Promise<Account> {
    const normalized = email.trim().toLowerCase();
    const found = await byEmail(normalized);
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
  return { find, byEmail, ensure };
}

export type AccountService = ReturnType<typeof createAccountService>;
