/**
 * Distillation's data (issue 34), no HTTP here: an account's unlabelled states (uploaded for a
 * teacher to label), the teacher's distributions as soft labels (kept apart from human labels, in
 * their own table, per template and teacher), and the spec a distillation job runs. Soft labels go
 * with their template (deleting a template's examples deletes them too: src/domain/examples.ts) and
 * with their account; `removeSoftLabels` deletes a template's alone.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { type Database, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

/** Per-account limits of unlabelled states (documented; uploads share UPLOAD_LIMITS with examples). */
export const STATE_LIMITS = { perAccount: 20_000 } as const;

/** What a distillation job runs (stored as the job's spec). */
export interface DistillSpec {
  teacher: string;
  /** The templates' questions: template id -> the question in canonical JSON. */
  questions: Record<string, string>;
  /** Where its states come from: uploaded unlabelled states, or the account's retained requests. */
  source: 'states' | 'retained';
  /** States it reads at most (the newest). */
  maxStates: number;
  /** Teacher calls it may make at most (one call per state asks every template missing there). */
  budget: number;
  /** Teacher calls at once for this job (within the teacher's own bound). */
  concurrency: number;
  /** Weight of the account's true labels in the fit, against the teacher's 1. */
  humanWeight: number;
  /** Opt-in fallback for the adapter it stores: answers under this confidence go to the teacher. */
  fallbackThreshold: number | null;
}

export interface SoftLabel {
  templateId: string;
  state: string;
  /** Canonical class order. */
  distribution: number[];
}

export const stateHash = (state: string) => createHash('sha256').update(state).digest('hex');

const BATCH = 400;

export interface DistillStoreOptions {
  now?: () => number;
  maxStates?: number;
  /**
   * Told, inside the transaction that deletes the account's states, before they go (the job queue
   * cancels the distillation jobs that read them: src/domain/jobs.ts statesDeleted).
   */
  onStatesDeleted?: (tx: Kysely<Database>, userId: string, why: string) => Promise<unknown>;
}

export function createDistillStore(db: Db, options: DistillStoreOptions = {}) {
  const now = options.now ?? Date.now;
  const maxStates = options.maxStates ?? STATE_LIMITS.perAccount;

  async function countStates(userId: string, executor: Kysely<Database> = db.kysely): Promise<number> {
    const { n } = await executor
      .selectFrom('unlabelled_state')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** Stores unlabelled states all or nothing, within the account's limit. */
  async function addStates(userId: string, states: readonly string[]): Promise<{ added: number; total: number }> {
    return db.kysely.transaction().execute(async (tx) => {
      if (db.dialect === 'postgres')
        await sql`select pg_advisory_xact_lock(hashtext(${`states:${userId}`}))`.execute(tx);
      const total = await countStates(userId, tx);
      if (total + states.length > maxStates) {
        throw fail(
          'EXAMPLE_LIMIT',
          `this account has ${total} unlabelled states and the upload adds ${states.length}: at most ${maxStates} per account (the limit); nothing was stored. Delete them first (DELETE /control/v1/states)`,
        );
      }
      const at = now();
      // Ids sort in upload order (time, then line), so that a job's newest states are always the same ones.
      const rows = states.map((state, i) => ({
        id: `st_${String(at).padStart(14, '0')}_${String(i).padStart(5, '0')}_${randomUUID().slice(0, 8)}`,
        user_id: userId,
        state,
        created_at: at,
      }));
      for (let i = 0; i < rows.length; i += BATCH)
        await tx
          .insertInto('unlabelled_state')
          .values(rows.slice(i, i + BATCH))
          .execute();
      return { added: rows.length, total: total + rows.length };
    });
  }

  /** The account's distinct unlabelled states, the newest `limit`, oldest first. */
  async function states(userId: string, limit: number): Promise<string[]> {
    const rows = await db.kysely
      .selectFrom('unlabelled_state')
      .select(['state', 'created_at', 'id'])
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit * 2)
      .execute();
    const seen = new Set<string>();
    const out: string[] = [];
    for (const r of rows) {
      if (seen.has(r.state)) continue;
      seen.add(r.state);
      out.push(r.state);
      if (out.length >= limit) break;
    }
    return out.reverse();
  }

  /** The distinct states of the account's retained requests not yet expired, the newest `limit`. */
  async function retainedStates(userId: string, limit: number): Promise<string[]> {
    const rows = await db.kysely
      .selectFrom('retained_request')
      .select(['state'])
      .where('user_id', '=', userId)
      .where('expires_at', '>', now())
      .orderBy('created_at', 'desc')
      .limit(limit * 2)
      .execute();
    return [...new Set(rows.map((r) => r.state))].slice(0, limit).reverse();
  }

  /** Deletes the account's unlabelled states, and stops the distillation jobs reading them in the same transaction. */
  async function removeStates(userId: string): Promise<number> {
    return db.kysely.transaction().execute(async (tx) => {
      await options.onStatesDeleted?.(tx, userId, 'its states were deleted (DELETE /control/v1/states)');
      const r = await tx.deleteFrom('unlabelled_state').where('user_id', '=', userId).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }

  /** State hashes already labelled by `teacher`, per template. */
  async function labelled(userId: string, teacher: string, templates: readonly string[]) {
    const out = new Map<string, Set<string>>(templates.map((t) => [t, new Set<string>()]));
    if (templates.length === 0) return out;
    const rows = await db.kysely
      .selectFrom('soft_label')
      .select(['template_id', 'state_hash'])
      .where('user_id', '=', userId)
      .where('teacher', '=', teacher)
      .where('template_id', 'in', [...templates])
      .execute();
    for (const r of rows) out.get(r.template_id)?.add(r.state_hash);
    return out;
  }

  /** Stores soft labels (one already there for the same template, teacher and state is kept), in `executor` (a job's guarded write). */
  async function addSoftLabels(
    userId: string,
    teacher: string,
    jobId: string,
    labels: readonly SoftLabel[],
    executor: Kysely<Database> = db.kysely,
  ): Promise<void> {
    const at = now();
    const rows = labels.map((l) => ({
      id: `sl_${randomUUID().replaceAll('-', '')}`,
      user_id: userId,
      template_id: l.templateId,
      teacher,
      state_hash: stateHash(l.state),
      state: l.state,
      distribution: JSON.stringify(l.distribution),
      job_id: jobId,
      created_at: at,
    }));
    for (let i = 0; i < rows.length; i += BATCH)
      await executor
        .insertInto('soft_label')
        .values(rows.slice(i, i + BATCH))
        .onConflict((oc) => oc.columns(['user_id', 'template_id', 'teacher', 'state_hash']).doNothing())
        .execute();
  }

  /** The soft labels of `templates` by `teacher`, in content order. */
  async function softLabels(userId: string, teacher: string, templates: readonly string[]): Promise<SoftLabel[]> {
    if (templates.length === 0) return [];
    const rows = await db.kysely
      .selectFrom('soft_label')
      .select(['template_id', 'state', 'distribution'])
      .where('user_id', '=', userId)
      .where('teacher', '=', teacher)
      .where('template_id', 'in', [...templates])
      .orderBy('template_id')
      .orderBy('state_hash')
      .execute();
    return rows.map((r) => ({
      templateId: r.template_id,
      state: r.state,
      distribution: JSON.parse(r.distribution) as number[],
    }));
  }

  /** Soft labels per template and teacher, and the unlabelled states, of an account. */
  async function summary(userId: string) {
    const rows = await db.kysely
      .selectFrom('soft_label')
      .select((eb) => [
        'template_id',
        'teacher',
        eb.fn.countAll<number | string>().as('n'),
        eb.fn.max('created_at').as('last'),
      ])
      .where('user_id', '=', userId)
      .groupBy(['template_id', 'teacher'])
      .execute();
    return {
      states: await countStates(userId),
      softLabels: rows.map((r) => ({
        template: r.template_id,
        teacher: r.teacher,
        count: Number(r.n),
        lastAddedAt: toMs(r.last as number | string | null) ?? 0,
      })),
    };
  }

  /** Deletes a template's soft labels (all teachers); false when it had none. */
  async function removeSoftLabels(userId: string, templateId: string, executor: Kysely<Database> = db.kysely) {
    const r = await executor
      .deleteFrom('soft_label')
      .where('user_id', '=', userId)
      .where('template_id', '=', templateId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  return {
    addStates,
    countStates,
    states,
    retainedStates,
    removeStates,
    labelled,
    addSoftLabels,
    softLabels,
    summary,
    removeSoftLabels,
    maxStates,
  };
}

export type DistillStore = ReturnType<typeof createDistillStore>;
