/**
 * The background runner of adapter training jobs, one per server process, one job at a time. It
 * claims a job from the database queue (src/domain/jobs.ts: a lease, so that several instances on
 * one database run each job once, and a job whose process died is taken over when its lease
 * lapses), then:
 *
 * 1. featurizes the account's examples through the engine's host (the one owner of the model), one
 *    state at a time, only when no live request is waiting or running, and pausing as long as each
 *    step took: the job takes at most about half of one engine slot and never queues ahead of traffic;
 *    a choice template's option texts too, where the engine has option features (the probe's label prior);
 * 2. fits in a child process at the lowest CPU priority (src/training/adapter-worker.ts, started by
 *    path: serving never imports training), which holds out part of each template's examples and
 *    reports held-out metrics before and after;
 * 3. stores the adapter when at least one template's head is better than the base model there.
 *
 * Progress is written to the job row with each lease renewal. Stopping hands the job back to the queue.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { AdapterStore } from '../domain/adapters.ts';
import type { ExampleStore } from '../domain/examples.ts';
import type { Job, JobQueue } from '../domain/jobs.ts';
import type { Retention } from '../domain/retention.ts';
import type { AdapterFile } from '../engines/adapters/adapter.ts';
import type { FitMessage, FitReport, FitRequest, FitTemplate } from '../engines/adapters/fit-protocol.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import type { EngineHost } from '../engines/host.ts';
import type { Logger } from '../observability/logger.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import type { WireQuestion, WireState } from '../systemone/protocol.ts';
import { canonicalOrder, templateLabels, toCanonical } from '../systemone/templates.ts';

/** Fewest labelled examples a template needs to be fitted (documented). */
export const MIN_EXAMPLES_PER_TEMPLATE = 20;

/** The fitting child's module, started by path (never imported here). */
export const FIT_WORKER = fileURLToPath(new URL('../training/adapter-worker.ts', import.meta.url));

export type Fitter = (
  request: FitRequest,
  onProgress: (done: number, message: string) => void,
  signal: AbortSignal,
) => Promise<{ artifact: AdapterFile | null; reports: FitReport[] }>;

export interface JobRunnerDeps {
  jobs: JobQueue;
  examples: ExampleStore;
  adapters: AdapterStore;
  host: EngineHost;
  logger: Logger;
  /** Swept of expired retained requests now and then (absent: not swept here). */
  retention?: Retention | undefined;
  /** Lease of a claimed job, renewed every third of it (default 30 s). */
  leaseMs?: number;
  /** How often the queue is polled when idle (default 2 s). */
  pollMs?: number;
  /** Share of the time the featurizing step may use (default 0.5: pause as long as each step took). */
  share?: number;
  /** The fitting step (default: the low-priority child process). Tests replace it. */
  fit?: Fitter;
  /** Names this process as a lease owner (default host:pid:random). */
  owner?: string;
}

/** The default fitter: src/training/adapter-worker.ts in a child process at the lowest priority. */
export const forkFitter: Fitter = (request, onProgress, signal) =>
  new Promise((resolve, reject) => {
    const child = fork(FIT_WORKER, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      if (child.pid) os.setPriority(child.pid, 19);
    } catch {
      // The child lowers its own priority too.
    }
    let settled = false;
    const done = (error: Error | null, value?: Awaited<ReturnType<Fitter>>) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else if (value) resolve(value);
    };
    const onAbort = () => {
      child.kill('SIGKILL');
      done(signal.reason instanceof Error ? signal.reason : new Error('fitting aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('message', (raw) => {
      const m = raw as FitMessage;
      if (m.type === 'progress') onProgress(m.done, m.message);
      else if (m.type === 'result') done(null, { artifact: m.artifact, reports: m.reports });
      else done(new Error(m.message));
    });
    child.on('error', (error) => done(error));
    child.on('exit', (code, sig) =>
      done(new Error(`the fitting process ended (${sig ?? `exit ${code}`}) before its result`)),
    );
    child.send(request);
  });

/**
 * A choice template's option features in canonical class order (a probe's label prior), or null:
 * other question types, or an engine without option features. Training jobs and bench:adapt use it.
 * (Measured on yes/no and score templates too, bench:adapt at 200 labels: yes/no unchanged, the
 * cross-validation never chose it; score worse, sst5 0.289 -> 0.268, airline_sentiment 0.726 -> 0.710.)
 */
export async function labelStatesOf(
  engine: DecisionEngine,
  question: WireQuestion,
  signal?: AbortSignal,
): Promise<(Float32Array | null)[] | null> {
  const features = engine.features;
  if (question.type !== 'choice' || !features?.options) return null;
  const normalized = toDecisionRequest('', [question]).questions[0];
  if (!normalized) return null;
  const vectors = await features.options(normalized, signal);
  return canonicalOrder(question).map((i) => vectors[i] ?? null);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export function createJobRunner(deps: JobRunnerDeps) {
  const owner = deps.owner ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = deps.leaseMs ?? 30_000;
  const pollMs = deps.pollMs ?? 2000;
  const share = Math.min(1, Math.max(0.05, deps.share ?? 0.5));
  const fit = deps.fit ?? forkFitter;
  const { host, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let current: { job: Job; abort: AbortController; done: Promise<void> } | undefined;
  let stopping = false;
  let lastSweep = 0;

  /** Waits until no live request is waiting or running (at most 2 s, so that a busy server still progresses). */
  async function idle(signal: AbortSignal): Promise<void> {
    const until = Date.now() + 2000;
    while (!signal.aborted && Date.now() < until && (host.scheduler.running() > 0 || host.scheduler.depth() > 0)) {
      await sleep(5, signal);
    }
  }

  /** The account's labelled examples of the job's templates, featurized by the base engine (templates with rows). */
  async function featurize(
    job: Job,
    signal: AbortSignal,
    progress: (p: number, message: string) => void,
  ): Promise<FitTemplate[]> {
    const all = await deps.examples.templates(job.userId);
    const wanted = job.templates ? all.filter((t) => job.templates?.includes(t.id)) : all;
    const templates = new Map(
      wanted.map((t) => {
        const question = JSON.parse(t.question) as WireQuestion;
        return [t.id, { question, labels: templateLabels(question), rows: [] as FitTemplate['rows'] }];
      }),
    );
    // In content order, so that the same examples give the same held-out split and the same adapter.
    const examples = (await deps.examples.list(job.userId, [...templates.keys()])).sort(
      (a, b) =>
        (a.templateId < b.templateId ? -1 : a.templateId > b.templateId ? 1 : 0) ||
        (a.state < b.state ? -1 : a.state > b.state ? 1 : 0) ||
        (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
    );
    // One engine call per distinct state, with every labelled question of it.
    const byState = new Map<string, typeof examples>();
    for (const e of examples) {
      const same = byState.get(e.state);
      if (same) same.push(e);
      else byState.set(e.state, [e]);
    }
    let done = 0;
    for (const [stateJson, labelled] of byState) {
      signal.throwIfAborted();
      await idle(signal);
      const started = performance.now();
      const qs = labelled.map((e) => templates.get(e.templateId)?.question as WireQuestion);
      const request = toDecisionRequest(JSON.parse(stateJson) as WireState, qs);
      const answer = await host.answer(
        request,
        labelled.map((e) => e.templateId),
        signal,
      );
      const state = host.engine.features ? await host.engine.features.state(request, signal) : null;
      labelled.forEach((e, i) => {
        const t = templates.get(e.templateId);
        const label = t?.labels.indexOf(e.label) ?? -1;
        if (!t || label < 0) return;
        t.rows.push({ base: toCanonical(qs[i] as WireQuestion, answer.probabilities[i] ?? []), state, label });
      });
      done += labelled.length;
      progress(done / Math.max(1, examples.length), `read ${done} of ${examples.length} examples with the base model`);
      const took = performance.now() - started;
      await sleep(took * (1 / share - 1), signal);
    }
    // Templates with rows only: the others have nothing to fit (and need no option features).
    const out: FitTemplate[] = [];
    for (const [id, t] of templates) {
      if (t.rows.length === 0) continue;
      signal.throwIfAborted();
      out.push({
        template: id,
        type: t.question.type,
        labels: t.labels,
        rows: t.rows,
        labelStates: await labelStatesOf(host.engine, t.question, signal),
      });
    }
    return out;
  }

  async function run(job: Job, abort: AbortController): Promise<void> {
    const latest = { progress: 0, stage: 'reading', message: 'reading the examples' };
    const beat = setInterval(
      () => {
        void deps.jobs.heartbeat(job.id, owner, leaseMs, latest).then(
          (held) => {
            if (!held) abort.abort(new Error('the job lease was lost'));
          },
          (err: unknown) => logger.warn({ err, job: job.id }, 'training job heartbeat failed'),
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    beat.unref();
    try {
      await deps.jobs.heartbeat(job.id, owner, leaseMs, latest);
      const fitted = await featurize(job, abort.signal, (p, message) => {
        Object.assign(latest, { progress: 0.7 * p, stage: 'reading', message });
      });
      if (fitted.length === 0) throw new Error('the account has no labelled examples for these templates');
      Object.assign(latest, { progress: 0.7, stage: 'fitting', message: `fitting ${fitted.length} templates` });
      await deps.jobs.heartbeat(job.id, owner, leaseMs, latest);
      const result = await fit(
        {
          type: 'fit',
          base: host.engine.info.id,
          features: host.engine.features?.id ?? null,
          templates: fitted,
          minExamples: MIN_EXAMPLES_PER_TEMPLATE,
        },
        (done, message) => Object.assign(latest, { progress: 0.7 + 0.3 * done, stage: 'fitting', message }),
        abort.signal,
      );
      abort.signal.throwIfAborted();
      if (!(await deps.jobs.heartbeat(job.id, owner, leaseMs, latest))) throw new Error('the job lease was lost');
      const served = result.reports.filter((r) => r.served).length;
      let adapterId: string | null = null;
      if (result.artifact) {
        const created = await deps.adapters.create(job.userId, {
          base: host.engine.info.id,
          jobId: job.id,
          artifact: JSON.stringify(result.artifact),
          report: JSON.stringify(result.reports),
        });
        adapterId = created.id;
      }
      const message = adapterId
        ? `adapter ${adapterId} answers ${served} of ${result.reports.length} templates; the others fall back to the base model`
        : `no adapter: no template was better than the base model on its held-out examples (see each template's reason)`;
      const ended = await deps.jobs.finish(job.id, owner, {
        status: 'succeeded',
        message,
        result: { base: host.engine.info.id, templates: result.reports },
        adapterId,
      });
      if (!ended && adapterId) await deps.adapters.remove(job.userId, adapterId);
      logger.info({ job: job.id, adapter: adapterId, served, templates: result.reports.length }, 'training job done');
    } catch (error) {
      if (stopping) {
        await deps.jobs.release(job.id, owner);
        logger.info({ job: job.id }, 'training job handed back to the queue');
      } else {
        const message = error instanceof Error ? error.message : String(error);
        await deps.jobs.finish(job.id, owner, { status: 'failed', message: `failed: ${message}` });
        logger.warn({ job: job.id, err: error }, 'training job failed');
      }
    } finally {
      clearInterval(beat);
    }
  }

  /** Claims and runs one job if there is one; resolves when it has ended. True when a job ran. */
  async function runOnce(): Promise<boolean> {
    if (current || stopping) return false;
    if (deps.retention && Date.now() - lastSweep > 60_000) {
      lastSweep = Date.now();
      await deps.retention.sweep().catch((err: unknown) => logger.warn({ err }, 'retention sweep failed'));
    }
    const job = await deps.jobs.claim(owner, leaseMs);
    if (!job) return false;
    const abort = new AbortController();
    const done = run(job, abort);
    current = { job, abort, done };
    try {
      await done;
    } finally {
      current = undefined;
    }
    return true;
  }

  function schedule(delay: number): void {
    if (stopping) return;
    timer = setTimeout(() => {
      runOnce().then(
        (ran) => schedule(ran ? 0 : pollMs),
        (err: unknown) => {
          logger.warn({ err }, 'training job queue poll failed');
          schedule(pollMs);
        },
      );
    }, delay);
    timer.unref();
  }

  return {
    owner,
    /** Polls the queue in the background. */
    start(): void {
      stopping = false;
      schedule(0);
    },
    runOnce,
    /** The job running now, if any. */
    current: () => current?.job,
    /** Stops polling; a running job is stopped and handed back to the queue. */
    async stop(): Promise<void> {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (current) {
        current.abort.abort(new Error('the server is stopping'));
        await current.done.catch(() => undefined);
      }
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
