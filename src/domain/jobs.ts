/**
 * The adapter training job queue, in the database (issues 23 and 33). A job is claimed by one process
 * at a time with a lease: one UPDATE takes the next job and stamps its owner and lease; the owner
 * renews the lease while it works, and progress, results and the end are written only while it still
 * holds it. A job whose process died is taken over when its lease lapses.
 *
 * Which job is next (fair scheduling): accounts take turns (the account whose jobs were claimed longest
 * ago goes first, so accounts are served round-robin), an account's jobs run oldest first and one at a
 * time, and a job waiting for the engine (`defer`) is not claimed before its backoff ends. On
 * PostgreSQL claims are serialised by an advisory lock for the claim's transaction (so that two
 * instances cannot both start a job of one account); on SQLite the single writer does it.
 *
 * `attempts` counts real failures only: a claim counts one until the run ends; a success, a hand-back
 * (a stopping server), a wait for the engine or a restart gives it back; a process that dies keeps it,
 * and a job whose process died MAX_JOB_ATTEMPTS times fails.
 *
 * A job never outlives the examples it reads: deleting examples (a template, or the outcomes of revoked
 * retention) restarts the jobs that read them without those templates, or cancels them when none is
 * left, in the deleting transaction; the adapter is stored in the same transaction that ends the job
 * only while the job is still running under its owner, so a delete that lands first leaves no adapter.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { type Database, type TrainingJobTable, toMs } from '../db/schema.ts';
import { fail } from '../lib/errors.ts';

/** Real failures a job may have: a process that dies with it this many times fails it. */
export const MAX_JOB_ATTEMPTS = 3;
/** Queued or running jobs an account may have at once (documented). */
export const MAX_ACTIVE_JOBS_PER_ACCOUNT = 5;
/** The longest wait for the engine before a job is offered again (its backoff doubles up to this). */
export const MAX_JOB_BACKOFF_MS = 60_000;

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
  /** Real failures (see the file comment). */
  attempts: number;
  /** Labelled examples it reads. */
  examples: number;
  /** Times it waited for the engine. */
  waits: number;
  notBefore: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** How long its successful run took (ms). */
  runMs: number | null;
  /** 'adapter': from labelled examples; 'distill': from a teacher's answers (issue 34). */
  kind: 'adapter' | 'distill';
  /** A distillation job's spec (src/domain/distill.ts DistillSpec), null for other jobs. */
  spec: unknown;
  /** Calls made to the teacher so far. */
  teacherCalls: number;
}

type Row = {
  [K in keyof TrainingJobTable]: unknown;
};

const num = (v: unknown): number | null => toMs((v ?? null) as number | string | null);

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
    examples: Number(r.examples ?? 0),
    waits: Number(r.waits ?? 0),
    notBefore: num(r.not_before),
    createdAt: num(r.created_at) ?? 0,
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
    runMs: num(r.run_ms),
    kind: r.kind === 'distill' ? 'distill' : 'adapter',
    spec: r.spec ? (JSON.parse(String(r.spec)) as unknown) : null,
    teacherCalls: Number(r.teacher_calls ?? 0),
  };
}

/** Where a queued or running job stands: its place in the queue and the time it should still take. */
export interface JobOutlook {
  /** 1: the next job to start; null when it is not queued. */
  position: number | null;
  /** Seconds until it should be done, from the measured throughput; null when nothing was measured yet. */
  seconds: number | null;
  /** Labelled examples read per second per running job, measured on recent jobs (null: none yet). */
  examplesPerSecond: number | null;
}

/** Something that runs queries: the database or one of its transactions. */
export type Executor = Kysely<Database>;

export interface JobQueueOptions {
  now?: () => number;
}

/** What serving knows of a teacher's speed now: its measured time per call (null before one) and its calls at once. */
export type TeacherTiming = (teacher: string) => { msPerCall: number | null; concurrency: number } | undefined;

/**
 * Seconds a distillation job's teacher calls still take: from the estimate it was started with
 * (`spec.estimate`: its calls and seconds at the teacher's measured time per call), or, when the
 * teacher had not been measured then, from its time per call measured since (`timing`); null when
 * neither is known (unknown, rather than a guess from other jobs' rates).
 */
export function teacherSecondsLeft(spec: unknown, callsMade: number, timing?: TeacherTiming): number | null {
  const s = spec as {
    teacher?: unknown;
    concurrency?: unknown;
    estimate?: { teacher_calls?: unknown; estimated_seconds?: unknown };
  } | null;
  const calls = s?.estimate?.teacher_calls;
  const seconds = s?.estimate?.estimated_seconds;
  if (typeof calls !== 'number') return null;
  if (typeof seconds === 'number') return calls > 0 ? seconds * Math.max(0, 1 - callsMade / calls) : 0;
  const now = typeof s?.teacher === 'string' ? timing?.(s.teacher) : undefined;
  if (!now || now.msPerCall === null) return null;
  const parallel = Math.max(1, Math.min(typeof s?.concurrency === 'number' ? s.concurrency : 1, now.concurrency));
  return (Math.max(0, calls - callsMade) * now.msPerCall) / 1000 / parallel;
}

export function createJobQueue(db: Db, options: JobQueueOptions = {}) {
  const now = options.now ?? Date.now;
  /** Creation times strictly increase within a process: jobs enqueued in one millisecond keep their order. */
  let lastCreated = 0;
  const createdAt = () => {
    lastCreated = Math.max(now(), lastCreated + 1);
    return lastCreated;
  };

  /**
   * Queues a job of `examples` labelled examples; an account has at most MAX_ACTIVE_JOBS_PER_ACCOUNT
   * queued or running jobs (409 beyond).
   */
  async function enqueue(
    userId: string,
    templates: string[] | null,
    examples = 0,
    distill?: { spec: unknown },
  ): Promise<Job> {
    return db.kysely.transaction().execute(async (tx) => {
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`jobs:${userId}`}))`.execute(tx);
      const active = await tx
        .selectFrom('training_job')
        .select('id')
        .where('user_id', '=', userId)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      if (active.length >= MAX_ACTIVE_JOBS_PER_ACCOUNT) {
        throw fail(
          'CONFLICT',
          `this account has ${active.length} training jobs queued or running: at most ${MAX_ACTIVE_JOBS_PER_ACCOUNT} (the limit); wait for one to end or cancel one (POST /control/v1/training-jobs/{id}/cancel)`,
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
        created_at: createdAt(),
        started_at: null,
        finished_at: null,
        not_before: null,
        waits: 0,
        claimed_at: null,
        examples,
        run_ms: null,
        kind: distill ? ('distill' as const) : ('adapter' as const),
        spec: distill ? JSON.stringify(distill.spec) : null,
        teacher_calls: 0,
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
   * Takes the next job (see the file comment) for `owner` until now + leaseMs: a queued one whose
   * backoff has ended, or a running one whose lease lapsed (its process died). Undefined when there is
   * none. Jobs whose process died MAX_JOB_ATTEMPTS times fail here.
   */
  async function claim(owner: string, leaseMs: number): Promise<Job | undefined> {
    const at = now();
    // PostgreSQL: in a transaction holding the claim lock. SQLite: single statements, each atomic (its
    // writer is single; a transaction here could hold the file across an await).
    const claimWith = async (tx: Executor) => {
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('brier:jobs:claim'))`.execute(tx);
      await tx
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
      const lock = db.dialect === 'postgres' ? sql`for update of j skip locked` : sql``;
      const result = await sql<Row>`
        update training_job
        set status = 'running', lease_owner = ${owner}, lease_until = ${at + leaseMs}, attempts = attempts + 1,
            started_at = coalesce(started_at, ${at}), claimed_at = ${at}, not_before = null, stage = 'starting', message = ''
        where id = (
          select j.id from training_job j
          where ((j.status = 'queued' and (j.not_before is null or j.not_before <= ${at}))
                 or (j.status = 'running' and j.lease_until < ${at}))
            and j.attempts < ${MAX_JOB_ATTEMPTS}
            and not exists (
              select 1 from training_job r
              where r.user_id = j.user_id and r.id <> j.id and r.status = 'running' and r.lease_until >= ${at}
            )
          order by coalesce((select max(s.claimed_at) from training_job s where s.user_id = j.user_id), 0), j.created_at, j.id
          limit 1
          ${lock}
        )
        returning *`.execute(tx);
      const row = result.rows[0];
      return row ? toJob(row) : undefined;
    };
    return db.dialect === 'postgres' ? db.kysely.transaction().execute(claimWith) : claimWith(db.kysely);
  }

  /** Renews the lease and records progress; false when `owner` no longer holds the job. */
  async function heartbeat(
    id: string,
    owner: string,
    leaseMs: number,
    progress?: { progress: number; stage: string; message: string; examples?: number },
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
              ...(progress.examples === undefined ? {} : { examples: progress.examples }),
            }
          : {}),
      })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Fails a job `owner` holds (a real failure: its attempt counts); false when it no longer holds it. */
  async function finish(id: string, owner: string, end: { message: string; result?: unknown }): Promise<boolean> {
    const r = await db.kysely
      .updateTable('training_job')
      .set({
        status: 'failed',
        stage: 'failed',
        message: end.message.slice(0, 500),
        progress: 1000,
        result: end.result === undefined ? null : JSON.stringify(end.result),
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

  /**
   * Ends a job `owner` holds as succeeded and stores its adapter (`store`, run in the same
   * transaction; it returns the adapter's id, or null for none). Nothing is written, and undefined is
   * returned, when `owner` no longer holds the job (cancelled, restarted because its examples were
   * deleted, its account deleted, or taken over): the adapter is never stored then.
   */
  async function complete(
    id: string,
    owner: string,
    end: { message: (adapterId: string | null) => string; result: unknown; runMs: number },
    store: (tx: Executor) => Promise<string | null>,
  ): Promise<{ adapterId: string | null } | undefined> {
    const gone = new Error('not held');
    try {
      return await db.kysely.transaction().execute(async (tx) => {
        // Taken first: on PostgreSQL this locks the row, so a delete that restarts the job waits for us (or we for it).
        const held = await tx
          .updateTable('training_job')
          .set({ lease_until: now() })
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(held.numUpdatedRows) === 0) throw gone;
        const adapterId = await store(tx);
        await tx
          .updateTable('training_job')
          .set((eb) => ({
            status: 'succeeded',
            stage: 'succeeded',
            message: end.message(adapterId).slice(0, 500),
            progress: 1000,
            result: JSON.stringify(end.result),
            adapter_id: adapterId,
            attempts: eb('attempts', '-', 1),
            run_ms: Math.round(end.runMs),
            lease_owner: null,
            lease_until: null,
            finished_at: now(),
          }))
          .where('id', '=', id)
          .execute();
        return { adapterId };
      });
    } catch (error) {
      if (error === gone) return undefined;
      throw error;
    }
  }

  /** Back to the queue without counting the attempt; `delayMs` before it may be claimed again. */
  async function requeue(id: string, owner: string, message: string, delayMs: number, waited: boolean) {
    const r = await db.kysely
      .updateTable('training_job')
      .set((eb) => ({
        status: 'queued',
        stage: 'queued',
        message: message.slice(0, 500),
        progress: 0,
        lease_owner: null,
        lease_until: null,
        not_before: delayMs > 0 ? now() + delayMs : null,
        attempts: eb('attempts', '-', 1),
        ...(waited ? { waits: eb('waits', '+', 1) } : {}),
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Hands a job back to the queue at once (a graceful shutdown), without counting the attempt. */
  async function release(id: string, owner: string): Promise<void> {
    await requeue(id, owner, 'handed back by a stopping server; waiting for a worker', 0, false);
  }

  /**
   * Hands a job back to wait for what it needs (the model loading, the workers unreachable or full)
   * without counting the attempt; it is offered again after a backoff that doubles with each wait
   * (2 s, 4 s, ... up to MAX_JOB_BACKOFF_MS). Returns the delay.
   */
  async function defer(job: Job, owner: string, why: string): Promise<number> {
    const delay = Math.min(MAX_JOB_BACKOFF_MS, 2000 * 2 ** Math.min(10, job.waits));
    await requeue(job.id, owner, `waiting: ${why}; offered again in ${Math.round(delay / 1000)} s`, delay, true);
    return delay;
  }

  /**
   * Cancels an account's queued or running job (a running one stops at its next lease renewal, within a
   * few seconds, and stores nothing). 404 for another account's job, 409 once it has ended.
   */
  async function cancel(userId: string, id: string): Promise<Job> {
    const r = await db.kysely
      .updateTable('training_job')
      .set((eb) => ({
        status: 'cancelled',
        stage: 'cancelled',
        message: 'cancelled by the account',
        lease_owner: null,
        lease_until: null,
        finished_at: now(),
        attempts: eb
          .case()
          .when('status', '=', 'running')
          .then(eb('attempts', '-', 1))
          .else(eb.ref('attempts'))
          .end(),
      }))
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    const job = await get(userId, id);
    if (!job) throw fail('NOT_FOUND', `no training job ${id} in this account`);
    if (Number(r.numUpdatedRows) === 0) {
      throw fail(
        'CONFLICT',
        `training job ${id} has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}; only a queued or running job can be cancelled`,
      );
    }
    return job;
  }

  /**
   * A queued or running job (`running`: its attempt is given back) goes back to the queue at once
   * (`to` queued), to read `templates` (null: every template), or is cancelled; a running one stops at
   * its next lease renewal, and its guarded writes (`complete`, `recordTeacherCall`) fail from now on.
   */
  async function restartOrCancelIn(
    tx: Executor,
    id: string,
    running: boolean,
    templates: string[] | null,
    to: 'queued' | 'cancelled',
    message: string,
  ) {
    await tx
      .updateTable('training_job')
      .set((eb) => ({
        lease_owner: null,
        lease_until: null,
        progress: 0,
        templates: templates ? JSON.stringify(templates) : null,
        status: to,
        stage: to,
        message,
        ...(to === 'queued' ? { not_before: null } : { finished_at: now() }),
        attempts: running ? eb('attempts', '-', 1) : eb.ref('attempts'),
      }))
      .where('id', '=', id)
      .execute();
  }

  /** An account's queued and running jobs, locked in `tx` on PostgreSQL (a job write waits for the delete, or it for them). */
  async function activeJobs(tx: Executor, userId: string) {
    let q = tx
      .selectFrom('training_job')
      .select(['id', 'templates', 'status', 'kind', 'spec'])
      .where('user_id', '=', userId)
      .where('status', 'in', ['queued', 'running']);
    if (db.dialect === 'postgres') q = q.forUpdate();
    return q.execute();
  }

  /**
   * Examples of `templates` of an account were deleted (in `tx`, the deleting transaction): each of its
   * queued or running jobs that reads one of them drops those templates and starts again from the queue
   * (a running one stops at its next lease renewal and stores nothing), or is cancelled when no template
   * is left. Returns how many jobs were restarted and cancelled.
   */
  async function examplesDeleted(
    tx: Executor,
    userId: string,
    templates: readonly string[],
    why: string,
  ): Promise<{ restarted: number; cancelled: number }> {
    const out = { restarted: 0, cancelled: 0 };
    if (templates.length === 0) return out;
    const gone = new Set(templates);
    for (const j of await activeJobs(tx, userId)) {
      const list = j.templates ? (JSON.parse(j.templates) as string[]) : null;
      if (list && !list.some((t) => gone.has(t))) continue;
      const left = list ? list.filter((t) => !gone.has(t)) : null;
      const running = j.status === 'running';
      if (left && left.length === 0) {
        await restartOrCancelIn(
          tx,
          j.id,
          running,
          left,
          'cancelled',
          `cancelled: ${why}, and it had no other template`,
        );
        out.cancelled++;
      } else {
        await restartOrCancelIn(tx, j.id, running, left, 'queued', `restarted without them: ${why}`);
        out.restarted++;
      }
    }
    return out;
  }

  /**
   * States a distillation job reads were deleted (in `tx`, the deleting transaction): the account's
   * uploaded states (`states`: every one of them, so its jobs reading them are cancelled) or some of its
   * retained requests (`retained`: its jobs reading them start again from the queue, on those left). A
   * running one stops at its next lease renewal and, from now on, asks the teacher nothing and stores no
   * soft label. Returns how many jobs were restarted and cancelled.
   */
  async function statesDeleted(
    tx: Executor,
    userId: string,
    source: 'states' | 'retained',
    why: string,
  ): Promise<{ restarted: number; cancelled: number }> {
    const out = { restarted: 0, cancelled: 0 };
    for (const j of await activeJobs(tx, userId)) {
      if (j.kind !== 'distill' || (JSON.parse(j.spec ?? '{}') as { source?: string }).source !== source) continue;
      const templates = j.templates ? (JSON.parse(j.templates) as string[]) : null;
      const to = source === 'states' ? 'cancelled' : 'queued';
      await restartOrCancelIn(
        tx,
        j.id,
        j.status === 'running',
        templates,
        to,
        `${to === 'queued' ? 'restarted' : to}: ${why}`,
      );
      if (to === 'cancelled') out.cancelled++;
      else out.restarted++;
    }
    return out;
  }

  /** Whether `owner` still holds the job (checked before each teacher call, so that a delete stops them at once). */
  async function held(id: string, owner: string): Promise<boolean> {
    const r = await db.kysely
      .selectFrom('training_job')
      .select('id')
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return r !== undefined;
  }

  /**
   * A distillation job's teacher call ended (answered or failed): `write` (its soft labels) and the
   * call charged to the job's budget (`teacher_calls`) in one transaction, only while `owner` still
   * holds the job. False, with nothing written, when it no longer does: a delete that restarted or
   * cancelled the job, or deleted its account, landed first, and no soft label lands after it.
   * (`write` goes first: on PostgreSQL a delete of the account then waits for this transaction, or it
   * for the delete, instead of the two locking the user and the job rows in opposite orders.)
   */
  async function recordTeacherCall(
    id: string,
    owner: string,
    write: (tx: Executor) => Promise<void> = async () => {},
  ): Promise<boolean> {
    const gone = new Error('not held');
    try {
      return await db.kysely.transaction().execute(async (tx) => {
        await write(tx);
        const r = await tx
          .updateTable('training_job')
          .set((eb) => ({ teacher_calls: eb('teacher_calls', '+', 1) }))
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) throw gone;
        return true;
      });
    } catch (error) {
      // A write refused because the account is gone (its foreign key) is the same case.
      if (error === gone || !(await held(id, owner))) return false;
      throw error;
    }
  }

  /** Examples read per second per running job, over the last 20 successful runs (null: none yet). */
  async function throughput(): Promise<number | null> {
    const rows = await db.kysely
      .selectFrom('training_job')
      .select(['examples', 'run_ms'])
      .where('status', '=', 'succeeded')
      // Distillation jobs' runs are mostly the teacher's time: not a measure of reading and fitting.
      .where('kind', '=', 'adapter')
      .where('run_ms', 'is not', null)
      .where('examples', '>', 0)
      .orderBy('finished_at', 'desc')
      .limit(20)
      .execute();
    const examples = rows.reduce((n, r) => n + Number(r.examples), 0);
    const seconds = rows.reduce((n, r) => n + Number(r.run_ms) / 1000, 0);
    return seconds > 0 ? examples / seconds : null;
  }

  /**
   * The queue position of a queued job (the order `claim` would take the queued jobs in, accounts in
   * turn) and the seconds it should still take: the examples of the running jobs still to read and of
   * the jobs ahead of it, shared by the jobs running now, then its own, at the measured throughput.
   */
  async function outlook(job: Job, timing?: TeacherTiming): Promise<JobOutlook> {
    if (job.status !== 'queued' && job.status !== 'running') {
      return { position: null, seconds: null, examplesPerSecond: null };
    }
    const rate = await throughput();
    /**
     * Seconds a job still takes: a distillation job's teacher calls left at the teacher's time per call
     * (unknown until it was measured: its examples are a handful of fits, no measure of its time), any
     * other job's examples left at `rate`.
     */
    const remaining = (j: Job) => {
      if (j.kind === 'distill') return teacherSecondsLeft(j.spec, j.teacherCalls, timing);
      return rate ? (j.examples * (1 - j.progress)) / rate : null;
    };
    if (job.status === 'running') {
      const left = remaining(job);
      return { position: null, seconds: left === null ? null : Math.round(left), examplesPerSecond: rate };
    }
    const active = (
      await db.kysely.selectFrom('training_job').selectAll().where('status', 'in', ['queued', 'running']).execute()
    ).map(toJob);
    const served = new Map<string, number>();
    for (const r of await db.kysely
      .selectFrom('training_job')
      .select((eb) => ['user_id', eb.fn.max('claimed_at').as('last')])
      .where('claimed_at', 'is not', null)
      .groupBy('user_id')
      .execute()) {
      served.set(r.user_id, toMs(r.last as number | string | null) ?? 0);
    }
    const running = active.filter((j) => j.status === 'running');
    const busy = new Set(running.map((j) => j.userId));
    // The claim order, replayed: accounts in turn (least recently claimed first), each account's oldest first.
    const queued = active
      .filter((j) => j.status === 'queued')
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    let position = 0;
    let ahead: number | null = 0;
    let turn = now();
    const waiting = [...queued];
    while (waiting.length > 0) {
      const heads = new Map<string, (typeof waiting)[number]>();
      for (const j of waiting) if (!heads.has(j.userId)) heads.set(j.userId, j);
      const next = [...heads.values()].sort(
        (a, b) =>
          Number(busy.has(a.userId)) - Number(busy.has(b.userId)) ||
          (served.get(a.userId) ?? 0) - (served.get(b.userId) ?? 0) ||
          a.createdAt - b.createdAt ||
          (a.id < b.id ? -1 : 1),
      )[0];
      if (!next) break;
      position++;
      if (next.id === job.id) break;
      const its = remaining(next);
      ahead = ahead === null || its === null ? null : ahead + its;
      served.set(next.userId, ++turn);
      busy.delete(next.userId);
      waiting.splice(waiting.indexOf(next), 1);
    }
    const left = running.reduce<number | null>((n, j) => {
      const its = remaining(j);
      return n === null || its === null ? null : n + its;
    }, 0);
    const own = remaining(job);
    const slots = Math.max(1, running.length);
    return {
      position,
      seconds: left === null || ahead === null || own === null ? null : Math.round((left + ahead) / slots + own),
      examplesPerSecond: rate,
    };
  }

  return {
    enqueue,
    get,
    list,
    claim,
    heartbeat,
    finish,
    complete,
    release,
    defer,
    cancel,
    examplesDeleted,
    /** The account's uploaded states were deleted: the distillation jobs reading them are cancelled. */
    statesDeleted: (tx: Executor, userId: string, why: string) => statesDeleted(tx, userId, 'states', why),
    /** Some of the account's retained requests were deleted: the distillation jobs reading them restart. */
    retainedDeleted: (tx: Executor, userId: string, why: string) => statesDeleted(tx, userId, 'retained', why),
    held,
    recordTeacherCall,
    throughput,
    outlook,
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
/** What deleting examples tells the job queue (src/domain/examples.ts, retention.ts). */
export type ExamplesDeleted = JobQueue['examplesDeleted'];
