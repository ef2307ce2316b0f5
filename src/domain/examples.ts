/**
 * An account's labelled examples: one row per labelled question about one state, grouped by question
 * template. Uploads are stored all or nothing, in one transaction that also enforces the per-account
 * limits; outcomes of retained requests land here too (src/domain/outcomes.ts). No HTTP here.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Db } from '../db/open.ts';
import { type Database, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';
import { exampleHash } from '../lib/example-hash.ts';
import type { ParsedRow } from '../systemone/examples.ts';

/** Per-account limits (documented in docs/guide/teach-your-task.md). */
export const EXAMPLE_LIMITS = {
  /** Labelled questions kept per account, uploads and outcomes together. */
  perAccount: 20_000,
  /** Distinct question templates per account. */
  templatesPerAccount: 50,
} as const;

export type ExampleSource = 'upload' | 'outcome';

/** One labelled question, as the caller validated it (src/systemone/examples.ts). */
export interface NewExample {
  templateId: string;
  type: string;
  /** The template's question in canonical JSON. */
  question: string;
  /** The state as compact JSON. */
  state: string;
  /** The canonical label. */
  label: string;
}

/** What an upload stored: examples added and skipped as duplicates of earlier uploads, per template too. */
export interface UploadOutcome {
  added: number;
  duplicates: number;
  /** The account's labelled questions after the upload. */
  total: number;
  /** Per template id, in the upload's order. */
  templates: Map<string, { added: number; duplicates: number }>;
}

/** The labelled questions of parsed upload rows, in row order, as the store takes them. */
export function examplesOf(rows: readonly ParsedRow[]): NewExample[] {
  return rows.flatMap((r) =>
    r.questions.map((q) => ({
      templateId: q.template.id,
      type: q.template.type,
      question: q.template.canonical,
      state: r.state,
      label: q.label,
    })),
  );
}

export interface TemplateSummary {
  id: string;
  type: string;
  /** The question in canonical JSON. */
  question: string;
  examples: number;
  outcomes: number;
  /** Examples per canonical label. */
  labels: Record<string, number>;
  /** A teacher's soft labels of this template (distillation jobs), apart from the examples. */
  teacherLabels: number;
  createdAt: number;
  lastAddedAt: number;
}

export interface StoredExample {
  id: string;
  templateId: string;
  state: string;
  label: string;
  source: ExampleSource;
  createdAt: number;
}

/** A recorded outcome with the answer that was served for it. */
export interface ServedOutcome {
  templateId: string;
  label: string;
  /** Canonical class order. */
  served: number[];
  servedBy: string;
  createdAt: number;
}

const BATCH = 400;

export interface ExampleStoreOptions {
  limits?: { perAccount: number; templatesPerAccount: number };
  now?: () => number;
  /**
   * Told, inside the deleting transaction, which templates lost examples (the job queue restarts or
   * cancels the jobs that read them: src/domain/jobs.ts examplesDeleted).
   */
  onDeleted?: (tx: Kysely<Database>, userId: string, templates: readonly string[], why: string) => Promise<unknown>;
}

export function createExampleStore(db: Db, options: ExampleStoreOptions = {}) {
  const limits = options.limits ?? EXAMPLE_LIMITS;
  const now = options.now ?? Date.now;

  /**
   * Holds the account's examples lock until `tx` ends (PostgreSQL; SQLite's one connection runs one
   * transaction at a time). Taking it again in the same transaction is harmless.
   */
  async function lockAccount(tx: Transaction<Database>, userId: string): Promise<void> {
    if (db.dialect === 'postgres')
      await sql`select pg_advisory_xact_lock(hashtext(${`examples:${userId}`}))`.execute(tx);
  }

  /**
   * Checks the account's limits for `incoming` more examples over `templates` (ids) inside `tx`, which
   * holds the account's lock: two concurrent uploads cannot both see room for their rows.
   */
  async function checkRoom(
    tx: Transaction<Database>,
    userId: string,
    incoming: number,
    templates: ReadonlySet<string>,
  ): Promise<{ total: number }> {
    await lockAccount(tx, userId);
    const { n } = await tx
      .selectFrom('example')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const total = Number(n);
    if (total + incoming > limits.perAccount) {
      throw fail(
        'EXAMPLE_LIMIT',
        `this account has ${total} labelled examples and the upload adds ${incoming}: at most ${limits.perAccount} per account (the limit); nothing was stored. Delete a template's examples first`,
      );
    }
    const known = await tx.selectFrom('example_template').select('id').where('user_id', '=', userId).execute();
    const ids = new Set(known.map((r) => r.id));
    const fresh = [...templates].filter((t) => !ids.has(t)).length;
    if (ids.size + fresh > limits.templatesPerAccount) {
      throw fail(
        'EXAMPLE_LIMIT',
        `this account has ${ids.size} question templates and the upload adds ${fresh}: at most ${limits.templatesPerAccount} per account (the limit); nothing was stored`,
      );
    }
    return { total };
  }

  async function insertTemplates(tx: Transaction<Database>, userId: string, examples: readonly NewExample[]) {
    const seen = new Map<string, NewExample>();
    for (const e of examples) if (!seen.has(e.templateId)) seen.set(e.templateId, e);
    const rows = [...seen.values()].map((e) => ({
      user_id: userId,
      id: e.templateId,
      type: e.type,
      question: e.question,
      created_at: now(),
    }));
    for (let i = 0; i < rows.length; i += BATCH) {
      await tx
        .insertInto('example_template')
        .values(rows.slice(i, i + BATCH))
        .onConflict((oc) => oc.columns(['user_id', 'id']).doNothing())
        .execute();
    }
  }

  /**
   * Stores uploaded examples all or nothing, less those the account already has from earlier uploads:
   * a labelled question (template, state and label) stored n times by uploads is a duplicate in an
   * upload the first n times it comes, so an upload repeated stores nothing, and one that repeats a
   * row of its own stores it as often as the account has it less. Only new examples count against
   * the limits. Returns how many were added and skipped, by template, and the account's total after.
   */
  async function add(userId: string, examples: readonly NewExample[]): Promise<UploadOutcome> {
    return db.kysely.transaction().execute(async (tx) => {
      // The account's lock first: a concurrent upload of the same rows must see these ones stored.
      await lockAccount(tx, userId);
      const hashed = examples.map((e) => ({ e, hash: exampleHash(e.templateId, e.state, e.label) }));
      const stored = await tx
        .selectFrom('example')
        .select((eb) => ['content_hash', eb.fn.countAll<number | string>().as('n')])
        .where('user_id', '=', userId)
        .where('content_hash', 'is not', null)
        .groupBy('content_hash')
        .execute();
      const left = new Map(stored.map((r) => [r.content_hash ?? '', Number(r.n)]));
      const fresh: typeof hashed = [];
      const templates = new Map<string, { added: number; duplicates: number }>();
      for (const h of hashed) {
        const t = templates.get(h.e.templateId) ?? { added: 0, duplicates: 0 };
        templates.set(h.e.templateId, t);
        const already = left.get(h.hash) ?? 0;
        if (already > 0) {
          left.set(h.hash, already - 1);
          t.duplicates++;
        } else {
          fresh.push(h);
          t.added++;
        }
      }
      const { total } = await checkRoom(tx, userId, fresh.length, new Set(fresh.map((h) => h.e.templateId)));
      await insertTemplates(
        tx,
        userId,
        fresh.map((h) => h.e),
      );
      const at = now();
      const rows = fresh.map(({ e, hash }) => ({
        id: `ex_${randomUUID().replaceAll('-', '')}`,
        user_id: userId,
        template_id: e.templateId,
        state: e.state,
        label: e.label,
        source: 'upload' as const,
        request_id: null,
        question_id: null,
        content_hash: hash,
        created_at: at,
      }));
      for (let i = 0; i < rows.length; i += BATCH)
        await tx
          .insertInto('example')
          .values(rows.slice(i, i + BATCH))
          .execute();
      return { added: rows.length, duplicates: examples.length - rows.length, total: total + rows.length, templates };
    });
  }

  /**
   * Stores (or corrects) the outcome of one question of a retained request as an example. Returns
   * whether it replaced an earlier outcome of the same request and question.
   */
  async function addOutcome(
    userId: string,
    example: NewExample & { requestId: string; questionId: string; served: number[] | null; servedBy: string },
  ): Promise<{ id: string; replaced: boolean }> {
    return db.kysely.transaction().execute(async (tx) => {
      const existing = await tx
        .selectFrom('example')
        .select(['id'])
        .where('user_id', '=', userId)
        .where('request_id', '=', example.requestId)
        .where('question_id', '=', example.questionId)
        .executeTakeFirst();
      if (existing) {
        await tx
          .updateTable('example')
          .set({ label: example.label, created_at: now() })
          .where('id', '=', existing.id)
          .execute();
        return { id: existing.id, replaced: true };
      }
      await checkRoom(tx, userId, 1, new Set([example.templateId]));
      await insertTemplates(tx, userId, [example]);
      const id = `ex_${randomUUID().replaceAll('-', '')}`;
      await tx
        .insertInto('example')
        .values({
          id,
          user_id: userId,
          template_id: example.templateId,
          state: example.state,
          label: example.label,
          source: 'outcome',
          request_id: example.requestId,
          question_id: example.questionId,
          served: example.served ? JSON.stringify(example.served) : null,
          served_by: example.servedBy,
          created_at: now(),
        })
        .execute();
      return { id, replaced: false };
    });
  }

  /** The account's templates with their example counts, newest first. */
  async function summary(userId: string): Promise<{ total: number; templates: TemplateSummary[] }> {
    const templates = await listTemplates(userId);
    const counts = await db.kysely
      .selectFrom('example')
      .select((eb) => [
        'template_id',
        'label',
        'source',
        eb.fn.countAll<number | string>().as('n'),
        eb.fn.max('created_at').as('last'),
      ])
      .where('user_id', '=', userId)
      .groupBy(['template_id', 'label', 'source'])
      .execute();
    const byId = new Map<string, TemplateSummary>(
      templates.map((t) => [
        t.id,
        {
          id: t.id,
          type: t.type,
          question: t.question,
          examples: 0,
          outcomes: 0,
          labels: {},
          teacherLabels: 0,
          createdAt: toMs(t.created_at) ?? 0,
          lastAddedAt: 0,
        },
      ]),
    );
    let total = 0;
    for (const c of counts) {
      const s = byId.get(c.template_id);
      if (!s) continue;
      const n = Number(c.n);
      total += n;
      s.examples += n;
      if (c.source === 'outcome') s.outcomes += n;
      s.labels[c.label] = (s.labels[c.label] ?? 0) + n;
      s.lastAddedAt = Math.max(s.lastAddedAt, toMs(c.last as number | string | null) ?? 0);
    }
    const soft = await db.kysely
      .selectFrom('soft_label')
      .select((eb) => ['template_id', eb.fn.countAll<number | string>().as('n')])
      .where('user_id', '=', userId)
      .groupBy('template_id')
      .execute();
    for (const c of soft) {
      const s = byId.get(c.template_id);
      if (s) s.teacherLabels = Number(c.n);
    }
    const list = [...byId.values()].sort((a, b) => b.lastAddedAt - a.lastAddedAt || a.id.localeCompare(b.id));
    return { total, templates: list };
  }

  function listTemplates(userId: string) {
    return db.kysely.selectFrom('example_template').selectAll().where('user_id', '=', userId).execute();
  }

  /** One template of the account, or undefined (another account's template is not found either). */
  async function template(userId: string, templateId: string) {
    return db.kysely
      .selectFrom('example_template')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', templateId)
      .executeTakeFirst();
  }

  /** The examples of some templates of the account (all when `templateIds` is undefined), oldest first. */
  async function list(userId: string, templateIds?: readonly string[]): Promise<StoredExample[]> {
    if (templateIds && templateIds.length === 0) return [];
    let q = db.kysely.selectFrom('example').selectAll().where('user_id', '=', userId);
    if (templateIds) q = q.where('template_id', 'in', [...templateIds]);
    const rows = await q.orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({
      id: r.id,
      templateId: r.template_id,
      state: r.state,
      label: r.label,
      source: r.source,
      createdAt: toMs(r.created_at) ?? 0,
    }));
  }

  /** The account's outcomes since `since` (ms) that carry the answer served for them, oldest first. */
  async function outcomes(userId: string, since: number): Promise<ServedOutcome[]> {
    const rows = await db.kysely
      .selectFrom('example')
      .select(['template_id', 'label', 'served', 'served_by', 'created_at'])
      .where('user_id', '=', userId)
      .where('source', '=', 'outcome')
      .where('served', 'is not', null)
      .where('created_at', '>=', since)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      templateId: r.template_id,
      label: r.label,
      served: JSON.parse(r.served ?? '[]') as number[],
      servedBy: r.served_by ?? '',
      createdAt: toMs(r.created_at) ?? 0,
    }));
  }

  /** Deletes a template and its examples; false when the account has no such template. */
  async function removeTemplate(userId: string, templateId: string): Promise<boolean> {
    return db.kysely.transaction().execute(async (tx) => {
      const gone = await tx
        .deleteFrom('example_template')
        .where('user_id', '=', userId)
        .where('id', '=', templateId)
        .executeTakeFirst();
      const found = Number(gone.numDeletedRows) > 0;
      // Before the rows go: a job writing soft labels of the template stops first (on PostgreSQL its row is
      // locked here, so its write lands before this transaction's deletes or not at all).
      if (found)
        await options.onDeleted?.(tx, userId, [templateId], `the examples of template ${templateId} were deleted`);
      await tx.deleteFrom('example').where('user_id', '=', userId).where('template_id', '=', templateId).execute();
      // A teacher's soft labels of the template (issue 34) go with it.
      await tx.deleteFrom('soft_label').where('user_id', '=', userId).where('template_id', '=', templateId).execute();
      return found;
    });
  }

  /**
   * Registers question templates without examples (a distillation job's: its teacher labels them),
   * within the account's template limit. Templates already there are kept.
   */
  async function ensureTemplates(
    userId: string,
    templates: readonly { templateId: string; type: string; question: string }[],
  ): Promise<void> {
    await db.kysely.transaction().execute(async (tx) => {
      await checkRoom(tx, userId, 0, new Set(templates.map((t) => t.templateId)));
      await insertTemplates(
        tx,
        userId,
        templates.map((t) => ({ ...t, state: '', label: '' })),
      );
    });
  }

  return {
    add,
    addOutcome,
    ensureTemplates,
    outcomes,
    summary,
    template,
    templates: listTemplates,
    list,
    removeTemplate,
    limits,
  };
}

export type ExampleStore = ReturnType<typeof createExampleStore>;
