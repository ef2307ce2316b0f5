/**
 * The background runner of adapter training jobs, one per server process, up to `concurrency` jobs at
 * once: the lease and queue core that every kind of job shares. It claims jobs from the database queue
 * (src/domain/jobs.ts: a lease, fair turns across accounts; several instances on one database run each
 * job once, and a job whose process died is taken over when its lease lapses) once the engine is
 * ready, and runs each by its kind: ./training.ts (from labelled examples) or ./distillation.ts (from a
 * teacher's answers), with what ./job-kit.ts gives them (reading with the base model in turns with live
 * traffic, waiting for the engine, storing the adapter in the transaction that ends the job).
 *
 * A job waits for what it needs and is never failed for it: while the model loads, or the workers are
 * unreachable or full, it is retried in place for a few seconds, then handed back to the queue with a
 * growing backoff (its attempt not counted). Progress is written with each lease renewal, and a renewal
 * that finds the job no longer held stops it. Stopping hands the running jobs back to the queue.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Job } from '../domain/jobs.ts';
import type { Retention } from '../domain/retention.ts';
import { runDistillation } from './distillation.ts';
import { createForkFitter, type Fitter, fitProcesses } from './fitter.ts';
import {
  createJobKit,
  type JobProgress,
  type JobRun,
  type JobStores,
  READ_BATCH,
  stop,
  stoppedFor,
  unavailable,
} from './job-kit.ts';
import { DEFAULT_MAX_EXAMPLES_PER_JOB, runTraining } from './training.ts';

export type { Fitter } from './fitter.ts';

/** Jobs at once by default: one per two cores (BRIER_TRAINING_CONCURRENCY). */
export function defaultConcurrency(cores = os.availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

export interface JobRunnerDeps extends JobStores {
  /** Swept of expired retained requests now and then (absent: not swept here). */
  retention?: Retention | undefined;
  /** Lease of a claimed job (default 30 s). */
  leaseMs?: number | undefined;
  /** How often a running job renews its lease and checks it still holds the job (default min(leaseMs / 3, 2 s)). */
  heartbeatMs?: number | undefined;
  /** How often the queue is polled when idle (default 2 s). */
  pollMs?: number | undefined;
  /** Share of the time reading may use while live traffic is about (default 0.5: pause as long as each step took). */
  share?: number | undefined;
  /** Jobs run at once (default defaultConcurrency()). */
  concurrency?: number | undefined;
  /** Examples one job reads at most: past it, the newest (default DEFAULT_MAX_EXAMPLES_PER_JOB). */
  maxExamples?: number | undefined;
  /** Distinct states read together when no live traffic is about (default READ_BATCH). */
  batch?: number | undefined;
  /** How long a job retries in place while the engine is unavailable before it goes back to the queue (default 15 s). */
  engineWaitMs?: number | undefined;
  /** The fitting step (default: child processes at the lowest priority, ./fitter.ts). Tests replace it. */
  fit?: Fitter | undefined;
  /** Names this process as a lease owner (default host:pid:random); each run holds its lease as `<owner>#<n>`. */
  owner?: string | undefined;
}

export function createJobRunner(deps: JobRunnerDeps) {
  const owner = deps.owner ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = deps.leaseMs ?? 30_000;
  const heartbeatMs = Math.max(20, deps.heartbeatMs ?? Math.min(Math.floor(leaseMs / 3), 2000));
  const pollMs = deps.pollMs ?? 2000;
  const concurrency = Math.max(1, deps.concurrency ?? defaultConcurrency());
  const kit = createJobKit(deps, {
    leaseMs,
    share: Math.min(1, Math.max(0.05, deps.share ?? 0.5)),
    batch: Math.max(1, deps.batch ?? READ_BATCH),
    engineWaitMs: Math.max(1, deps.engineWaitMs ?? 15_000),
    maxExamples: Math.max(1, deps.maxExamples ?? DEFAULT_MAX_EXAMPLES_PER_JOB),
    fit: deps.fit ?? createForkFitter(fitProcesses(concurrency)),
  });
  const { host, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  const running = new Map<string, { job: Job; abort: AbortController; done: Promise<void> }>();
  let stopping = false;
  let started = false;
  let lastSweep = 0;

  /**
   * One run of a claimed job, holding its lease as `lease` (this process's owner and the run's
   * number: a job restarted and claimed again by this process is another run, and the first one's
   * renewals, writes and store then fail as they would in another process).
   */
  async function run(job: Job, lease: string, abort: AbortController): Promise<void> {
    const latest: JobProgress = { progress: 0, stage: 'reading', message: 'reading the examples' };
    const current: JobRun = { job, lease, abort, latest, began: performance.now() };
    const beat = setInterval(() => {
      void deps.jobs.heartbeat(job.id, lease, leaseMs, latest).then(
        (held) => {
          if (!held) abort.abort(stop('not-held', 'the job is no longer held by this run'));
        },
        (err: unknown) => logger.warn({ err, job: job.id }, 'training job heartbeat failed'),
      );
    }, heartbeatMs);
    beat.unref();
    try {
      await kit.checkpoint(current, 'lost at the start');
      await (job.kind === 'distill' ? runDistillation : runTraining)(kit, current);
    } catch (error) {
      const reason = abort.signal.aborted ? abort.signal.reason : error;
      if (stopping) {
        await deps.jobs.release(job.id, lease);
        logger.info({ job: job.id }, 'training job handed back to the queue');
      } else if (stoppedFor(reason, 'not-held') || stoppedFor(error, 'not-held')) {
        logger.info(
          { job: job.id },
          'training job stopped: cancelled, restarted or taken over elsewhere; nothing stored',
        );
      } else if (unavailable(error)) {
        const why = error instanceof Error ? error.message : String(error);
        const delay = await deps.jobs.defer(job, lease, why);
        logger.info({ job: job.id, why, delay }, 'training job waits for the engine');
      } else {
        const message = error instanceof Error ? error.message : String(error);
        await deps.jobs.finish(job.id, lease, { message: `failed: ${message}` });
        logger.warn({ job: job.id, err: error }, 'training job failed');
      }
    } finally {
      clearInterval(beat);
    }
  }

  let runs = 0;
  /** The lease name of the next run. */
  const nextLease = () => `${owner}#${++runs}`;

  function launch(job: Job, lease: string): Promise<void> {
    const abort = new AbortController();
    const done = run(job, lease, abort).finally(() => {
      running.delete(lease);
      if (started && !stopping) schedule(0);
    });
    running.set(lease, { job, abort, done });
    return done;
  }

  async function sweep(): Promise<void> {
    if (deps.retention && Date.now() - lastSweep > 60_000) {
      lastSweep = Date.now();
      await deps.retention.sweep().catch((err: unknown) => logger.warn({ err }, 'retention sweep failed'));
    }
  }

  /** Claims jobs while there is room and the engine is ready; returns how many it started. */
  async function fill(): Promise<number> {
    if (stopping) return 0;
    await sweep();
    let n = 0;
    while (!stopping && running.size < concurrency && host.engine.ready()) {
      const lease = nextLease();
      const job = await deps.jobs.claim(lease, leaseMs);
      if (!job) break;
      void launch(job, lease);
      n++;
    }
    return n;
  }

  /** Claims and runs one job if there is one (the engine ready); resolves when it has ended. True when a job ran. */
  async function runOnce(): Promise<boolean> {
    if (running.size >= concurrency || stopping || !host.engine.ready()) return false;
    await sweep();
    const lease = nextLease();
    const job = await deps.jobs.claim(lease, leaseMs);
    if (!job) return false;
    await launch(job, lease);
    return true;
  }

  function schedule(delay: number): void {
    if (stopping) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fill().then(
        () => {
          if (!timer) schedule(pollMs);
        },
        (err: unknown) => {
          logger.warn({ err }, 'training job queue poll failed');
          if (!timer) schedule(pollMs);
        },
      );
    }, delay);
    timer.unref();
  }

  return {
    owner,
    concurrency,
    /** Polls the queue in the background. */
    start(): void {
      stopping = false;
      started = true;
      schedule(0);
    },
    runOnce,
    /** The jobs running now. */
    current: () => [...running.values()].map((r) => r.job),
    /** Stops polling; running jobs are stopped and handed back to the queue. */
    async stop(): Promise<void> {
      stopping = true;
      started = false;
      if (timer) clearTimeout(timer);
      const all = [...running.values()];
      for (const r of all) r.abort.abort(new Error('the server is stopping'));
      await Promise.all(all.map((r) => r.done.catch(() => undefined)));
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
