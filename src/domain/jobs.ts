/**
 * The adapter training job queue, in the database. A job is claimed by one process at a time with a
 * lease: a single UPDATE picks the oldest queued job (or a running one whose lease has lapsed: its
 * process died) and stamps its owner and lease; on PostgreSQL the pick is `FOR UPDATE SKIP LOCKED`,
 * so instances polling together never take the same job, and on SQLite the database's single writer
 * serialises the claims. The owner renews the lease while it works; progress, results and the end
 * are written only while it still holds the lease. A job that lost its process three times fails.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { type TrainingJobTable, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

/** Claims per job before it is given up (a process that dies mid-job costs one). */
export const MAX_JOB_ATTEMPTS = 3;

export type JobStatus = TrainingJobTable['status'];

export interface Job {
  id: string;
  userId: string;
  status: JobStatus;
  /** Template ids to fit, or null: every template with enough examples. */
  templates: string[] | null;
  /** 0..1 */
  progress: number;
  stage: string;
  message: string;
  /** The job's report (JSON), once it has one. */
  result: unknown;
  adapterId: string | null;
  attempts: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

type Row = {
  [K in keyof TrainingJobTable]: unknown;
};

function toJob(r: Row): Job {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    status: r.status as JobStatus,
    templates: r.templates ? (JSON.parse(String(r.templates)) as string[]) : null,
    progress: Number(r.progress) / 1000,
    stage: String(r.stage),
    message: String(r.message),
    result: r.result ? (JSON.parse(String(r.result)) as unknown) : null,
    adapterId: r.adapter_id ? String(r.adapter_id) : null,
    attempts: Number(r.attempts),
    createdAt: toMs(r.created_at as number | string) ?? 0,
    startedAt: toMs((r.started_at ?? null) as number | string | null),
    finishedAt: toMs((r.finished_at ?? null) as number | string | null),
  };
}

export interface JobQueueOptions {
  now?: () => number;
}

export function createJobQueue(db: Db, options: JobQueueOptions = {}) {
  const now = options.now ?? Date.now;

  /** Queues a job; an account has at most one queued or running job (409 otherwise). */
  async function enqueue(userId: string, templates: string[] | null): Promise<Job> {
    return db.kysely.transaction().execute(async (tx) => {
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`jobs:${userId}`}))`.execute(tx);
      const active = await tx
        .selectFrom('training_job')
        .select('id')
        .where('user_id', '=', userId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      if (active) {
        throw fail(
          'CONFLICT',
          `training job ${active.id} of this account is still queued or running; one at a time (the limit)`,
        );
      }
      const row = {
        id: `job_${randomUUID().replaceAll('-', '')}`,
        user_id: userId,
        status: 'queued' as const,
        templates: templates ? JSON.stringify(templates) : null,
        progress: 0,
        stage: 'queued',
        message: 'waiting for a worker',
        result: null,
        adapter_id: null,
        attempts: 0,
        lease_owner: null,
        lease_until: null,
        created_at: now(),
        started_at: null,
        finished_at: null,
      };
      await tx.insertInto('training_job').values(row).execute();
      return toJob(row);
    });
  }

  async function get(userId: string, id: string): Promise<Job | undefined> {
    const r = await db.kysely
      .selectFrom('training_job')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toJob(r) : undefined;
  }

  async function list(userId: string, limit = 20): Promise<Job[]> {
    const rows = await db.kysely
      .selectFrom('training_job')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }

  /**
   * Takes the oldest job that is queued, or running with a lapsed lease, for `owner` until
   * now + leaseMs. Undefined when there is none. Jobs whose lease lapsed MAX_JOB_ATTEMPTS times fail.
   */
  async function claim(owner: string, leaseMs: number): Promise<Job | undefined> {
    const at = now();
    await db.kysely
      .updateTable('training_job')
      .set({
        status: 'failed',
        stage: 'failed',
        message: `gave up: the process running it stopped ${MAX_JOB_ATTEMPTS} times`,
        lease_owner: null,
        lease_until: null,
        finished_at: at,
      })
      .where('status', '=', 'running')
      .where('lease_until', '<', at)
      .where('attempts', '>=', MAX_JOB_ATTEMPTS)
      .execute();
    const lock = db.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const result = await sql<Row>`
      update training_job
      set status = 'running', lease_owner = ${owner}, lease_until = ${at + leaseMs}, attempts = attempts + 1,
          started_at = coalesce(started_at, ${at}), stage = 'starting', message = ''
      where id = (
        select id from training_job
        where (status = 'queued' or (status = 'running' and lease_until < ${at})) and attempts < ${MAX_JOB_ATTEMPTS}
        order by created_at, id
        limit 1
        ${lock}
      )
      returning *`.execute(db.kysely);
    const row = result.rows[0];
    return row ? toJob(row) : undefined;
  }

  /** Renews the lease and records progress; false when `owner` no longer holds the job. */
  async function heartbeat(
    id: string,
    owner: string,
    leaseMs: number,
    progress?: { progress: number; stage: string; message: string },
  ): Promise<boolean> {
    const r = await db.kysely
      .updateTable('training_job')
      .set({
        lease_until: now() + leaseMs,
        ...(progress
          ? {
              progress: Math.round(Math.max(0, Math.min(1, progress.progress)) * 1000),
              stage: progress.stage,
              message: progress.message.slice(0, 500),
            }
          : {}),
      })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Ends a job `owner` holds; false when it no longer holds it (nothing is written then). */
  async function finish(
    id: string,
    owner: string,
    end: { status: 'succeeded' | 'failed'; message: string; result?: unknown; adapterId?: string | null },
  ): Promise<boolean> {
    const r = await db.kysely
      .updateTable('training_job')
      .set({
        status: end.status,
        stage: end.status,
        message: end.message.slice(0, 500),
        progress: 1000,
        result: end.result === undefined ? null : JSON.stringify(end.result),
        adapter_id: end.adapterId ?? null,
        lease_owner: null,
        lease_until: null,
        finished_at: now(),
      })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Hands a job back to the queue at once (a graceful shutdown), without counting the attempt. */
  async function release(id: string, owner: string): Promise<void> {
    await db.kysely
      .updateTable('training_job')
      .set((eb) => ({
        status: 'queued',
        stage: 'queued',
        message: 'handed back by a stopping server; waiting for a worker',
        progress: 0,
        lease_owner: null,
        lease_until: null,
        attempts: eb('attempts', '-', 1),
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .execute();
  }

  return { enqueue, get, list, claim, heartbeat, finish, release };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
