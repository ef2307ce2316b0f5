/**
 * An account's adapters: fitted by training jobs, each a model id (`ft:<base model>:<12 hex>`) that
 * only the account's keys and sessions can name, list or see. Deleting one removes it from the
 * database at once; serving caches an adapter for at most a second (src/systemone/adapters.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../db/open.ts';
import { type Database, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

/** Adapters kept per account (documented). */
export const MAX_ADAPTERS_PER_ACCOUNT = 20;

export interface StoredAdapter {
  id: string;
  base: string;
  jobId: string;
  /** AdapterFile JSON. */
  artifact: string;
  /** The job's per-template report (JSON). */
  report: string;
  createdAt: number;
  /** Distilled adapters: the teacher they learnt from. */
  teacher: string | null;
  /** Opt-in fallback to the teacher: answers under `threshold` confidence go to it. */
  fallback: AdapterFallback | null;
}

export interface AdapterFallback {
  teacher: string;
  /** 0..1: an answer of the adapter whose confidence is below it is asked of the teacher instead. */
  threshold: number;
}

export function createAdapterStore(db: Db, options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;

  function toAdapter(r: {
    id: string;
    base_model: string;
    job_id: string;
    artifact: string;
    report: string;
    created_at: number | string;
    teacher?: string | null;
    fallback?: string | null;
  }): StoredAdapter {
    return {
      id: r.id,
      base: r.base_model,
      jobId: r.job_id,
      artifact: r.artifact,
      report: r.report,
      createdAt: toMs(r.created_at) ?? 0,
      teacher: r.teacher ?? null,
      fallback: r.fallback ? (JSON.parse(r.fallback) as AdapterFallback) : null,
    };
  }

  async function count(userId: string, executor: Kysely<Database> = db.kysely): Promise<number> {
    const { n } = await executor
      .selectFrom('adapter')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  let changes = 0;

  /** Refuses when the account already has MAX_ADAPTERS_PER_ACCOUNT adapters (`executor`: in a transaction). */
  async function checkRoom(userId: string, executor: Kysely<Database> = db.kysely): Promise<void> {
    if ((await count(userId, executor)) >= MAX_ADAPTERS_PER_ACCOUNT) {
      throw fail(
        'CONFLICT',
        `this account has ${MAX_ADAPTERS_PER_ACCOUNT} adapters (the limit); delete one before training another`,
      );
    }
  }

  /** Stores an adapter; `executor`: a transaction to store it in (the one that ends its job). */
  async function create(
    userId: string,
    adapter: {
      base: string;
      jobId: string;
      artifact: string;
      report: string;
      teacher?: string | null;
      fallback?: AdapterFallback | null;
    },
    executor: Kysely<Database> = db.kysely,
  ): Promise<StoredAdapter> {
    const row = {
      id: `ft:${adapter.base}:${randomBytes(6).toString('hex')}`,
      user_id: userId,
      base_model: adapter.base,
      job_id: adapter.jobId,
      artifact: adapter.artifact,
      report: adapter.report,
      created_at: now(),
      teacher: adapter.teacher ?? null,
      fallback: adapter.fallback ? JSON.stringify(adapter.fallback) : null,
    };
    await executor.insertInto('adapter').values(row).execute();
    changes++;
    return toAdapter(row);
  }

  async function find(userId: string, id: string): Promise<StoredAdapter | undefined> {
    const r = await db.kysely
      .selectFrom('adapter')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toAdapter(r) : undefined;
  }

  async function list(userId: string): Promise<StoredAdapter[]> {
    const rows = await db.kysely
      .selectFrom('adapter')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toAdapter);
  }

  async function remove(userId: string, id: string): Promise<boolean> {
    const r = await db.kysely
      .deleteFrom('adapter')
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    changes++;
    return Number(r.numDeletedRows) > 0;
  }

  /** The teachers adapters fall back to (every account's), each with the adapters that do. */
  async function fallbackTeachers(): Promise<Map<string, string[]>> {
    const rows = await db.kysely
      .selectFrom('adapter')
      .select(['id', 'fallback'])
      .where('fallback', 'is not', null)
      .orderBy('id')
      .execute();
    const out = new Map<string, string[]>();
    for (const r of rows) {
      const teacher = (JSON.parse(r.fallback ?? 'null') as AdapterFallback | null)?.teacher;
      if (teacher) out.set(teacher, [...(out.get(teacher) ?? []), r.id]);
    }
    return out;
  }

  /** Sets or clears an adapter's fallback to its teacher; false when the account has no such adapter. */
  async function setFallback(userId: string, id: string, fallback: AdapterFallback | null): Promise<boolean> {
    const r = await db.kysely
      .updateTable('adapter')
      .set({ fallback: fallback ? JSON.stringify(fallback) : null })
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    const updated = Number(r.numUpdatedRows) > 0;
    if (updated) changes++;
    return updated;
  }

  /** Counts the adapters this process stored, changed or deleted: readers' caches compare it (src/systemone/adapters.ts). */
  const generation = () => changes;

  return { create, find, list, remove, count, checkRoom, setFallback, fallbackTeachers, generation };
}

export type AdapterStore = ReturnType<typeof createAdapterStore>;
