/**
 * The background runner of adapter training jobs, one per server process, up to `concurrency` jobs at
 * once. It claims jobs from the database queue (src/domain/jobs.ts: a lease, fair turns across
 * accounts; several instances on one database run each job once, and a job whose process died is
 * taken over when its lease lapses) once the engine is ready, then, per job:
 *
 * 1. reads the account's examples with the base model through the engine's host (the one owner of
 *    the model), outside its live queue: distinct states in batches (`batch` at once, answered
 *    together, so the encoder embeds them in shared calls), with the engine's state features; while
 *    live traffic is about (a request in the last second), one state at a time, only when no live
 *    request is waiting or running, pausing as long as each step took, so that the job never queues
 *    ahead of traffic; a choice template's option texts too, where the engine has option features;
 * 2. fits in child processes at the lowest CPU priority (./fitter.ts), the templates shared among
 *    them, each holding out part of its examples and reporting held-out metrics before and after;
 * 3. stores the adapter, when at least one template's head is better than the base model there, in
 *    the transaction that ends the job, only if the job is still its own (not cancelled, restarted by a
 *    delete of its examples, nor its account deleted).
 *
 * A job waits for what it needs and is never failed for it: while the model loads, or the workers are
 * unreachable or full, it is retried in place for a few seconds, then handed back to the queue with a
 * growing backoff (its attempt not counted). Progress is written with each lease renewal, and a renewal
 * that finds the job no longer held stops it. Stopping hands the running jobs back to the queue.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { AdapterFallback, AdapterStore } from '../domain/adapters.ts';
import { type DistillSpec, type DistillStore, stateHash } from '../domain/distill.ts';
import type { ExampleStore, StoredExample } from '../domain/examples.ts';
import type { Job, JobQueue } from '../domain/jobs.ts';
import type { Retention } from '../domain/retention.ts';
import type { FitTemplate } from '../engines/adapters/fit-protocol.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import type { EngineHost } from '../engines/host.ts';
import type { Teachers } from '../engines/teachers.ts';
import { isDomainError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import type { WireQuestion, WireState } from '../systemone/protocol.ts';
import { canonicalOrder, templateLabels, toCanonical } from '../systemone/templates.ts';
import { createForkFitter, type Fitter, fitProcesses } from './fitter.ts';

export type { Fitter } from './fitter.ts';

/** Fewest labelled examples a template needs to be fitted (documented). */
export const MIN_EXAMPLES_PER_TEMPLATE = 20;
/** Examples one job reads at most, by default (BRIER_TRAINING_MAX_EXAMPLES; documented). */
export const DEFAULT_MAX_EXAMPLES_PER_JOB = 20_000;
/**
 * Distinct states read together when no live traffic is about (default of `batch`). Measured on the
 * embedded engine (2 encoder threads, 250 states of bench:jobs' job): one at a time 9.9 states/s, 2 at
 * once 11.1, 4 at once 12.4, 8 at once 10.3 (a batch pads its texts to its longest, and USE-lite's
 * cost grows with the padded length).
 */
export const READ_BATCH = 4;
/** Live traffic this recent (ms) makes the job read one state at a time and pause. */
const QUIET_MS = 1000;

/** Jobs at once by default: one per two cores (BRIER_TRAINING_CONCURRENCY). */
export function defaultConcurrency(cores = os.availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

export interface JobRunnerDeps {
  jobs: JobQueue;
  examples: ExampleStore;
  adapters: AdapterStore;
  host: EngineHost;
  logger: Logger;
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
  /** Distillation jobs (issue 34): the configured teachers and the soft labels' store. */
  teachers?: Teachers | undefined;
  distill?: DistillStore | undefined;
}

/** Weight of an account's true label against a teacher's soft label in distillation (default; documented). */
export const DEFAULT_HUMAN_WEIGHT = 3;
/** Teacher calls that may fail (after their retries) before a distillation job fails: this share of them. */
const MAX_FAILED_SHARE = 0.5;

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
    if (ms <= 0 || signal?.aborted) return resolve();
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

/**
 * Why a run stops without failing its job: `unavailable`, the engine cannot serve it now (loading,
 * workers unreachable or full: the job waits for it); `not-held`, the job is no longer this run's
 * (cancelled, restarted by a delete, its account deleted, taken over).
 */
type Stop = 'unavailable' | 'not-held';
const stop = (why: Stop, message: string) => Object.assign(new Error(message), { stop: why });
const stoppedFor = (error: unknown, why: Stop) => error instanceof Error && 'stop' in error && error.stop === why;

/** Refusals that mean "not now": the job waits for the engine instead of failing. */
/**
 * One state read by the base model for a job: the base model's answer to each template's question in
 * canonical label order and, where the engine has them, the state's features; null when the state is
 * over the model's limits (left out).
 */
async function readWithBase(
  host: EngineHost,
  stateJson: string,
  templateIds: string[],
  questionOf: (templateId: string) => WireQuestion | undefined,
  signal: AbortSignal,
) {
  const questions = templateIds.map((id) => questionOf(id) as WireQuestion);
  const request = toDecisionRequest(JSON.parse(stateJson) as WireState, questions);
  let answer: Awaited<ReturnType<EngineHost['background']>>;
  try {
    answer = await host.background(request, templateIds, signal);
  } catch (error) {
    if (isDomainError(error) && error.code === 'MAX_TOKENS') return null;
    throw error;
  }
  const features = host.engine.features;
  const state = features ? await features.state(request, signal) : null;
  const bases = questions.map((q, i) => toCanonical(q, answer.probabilities[i] ?? []));
  return { bases, state };
}

function unavailable(error: unknown): boolean {
  return (
    stoppedFor(error, 'unavailable') ||
    (isDomainError(error) && (error.code === 'NOT_READY' || error.code === 'OVERLOADED' || error.code === 'TIMEOUT'))
  );
}

/** In content order, so that the same examples give the same held-out split and the same adapter. */
function contentOrder(a: StoredExample, b: StoredExample): number {
  return (
    (a.templateId < b.templateId ? -1 : a.templateId > b.templateId ? 1 : 0) ||
    (a.state < b.state ? -1 : a.state > b.state ? 1 : 0) ||
    (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)
  );
}

export function createJobRunner(deps: JobRunnerDeps) {
  const owner = deps.owner ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = deps.leaseMs ?? 30_000;
  const heartbeatMs = Math.max(20, deps.heartbeatMs ?? Math.min(Math.floor(leaseMs / 3), 2000));
  const pollMs = deps.pollMs ?? 2000;
  const share = Math.min(1, Math.max(0.05, deps.share ?? 0.5));
  const concurrency = Math.max(1, deps.concurrency ?? defaultConcurrency());
  const maxExamples = Math.max(1, deps.maxExamples ?? DEFAULT_MAX_EXAMPLES_PER_JOB);
  const batch = Math.max(1, deps.batch ?? READ_BATCH);
  const engineWaitMs = Math.max(1, deps.engineWaitMs ?? 15_000);
  const fit = deps.fit ?? createForkFitter(fitProcesses(concurrency));
  const { host, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  const running = new Map<string, { job: Job; abort: AbortController; done: Promise<void> }>();
  let stopping = false;
  let started = false;
  let lastSweep = 0;

  /**
   * Waits until no live request is waiting or running (at most 2 s, so that a busy server still
   * progresses). True when live traffic has been quiet for a second: the job may read a batch.
   */
  async function yieldToTraffic(signal: AbortSignal): Promise<boolean> {
    const until = Date.now() + 2000;
    while (!signal.aborted && Date.now() < until && host.idleMs() === 0) await sleep(5, signal);
    return host.idleMs() >= QUIET_MS;
  }

  /** Runs `step` against the engine, retrying in place while it is unavailable (engineWaitMs), then gives up waiting. */
  async function withEngine<T>(step: () => Promise<T>, signal: AbortSignal): Promise<T> {
    let waited = 0;
    for (let wait = Math.min(500, engineWaitMs); ; wait *= 2) {
      signal.throwIfAborted();
      try {
        if (!host.engine.ready()) throw stop('unavailable', 'the model is still loading');
        return await step();
      } catch (error) {
        if (signal.aborted || !unavailable(error)) throw error;
        waited += wait;
        if (waited > engineWaitMs) {
          throw stoppedFor(error, 'unavailable')
            ? error
            : stop('unavailable', error instanceof Error ? error.message : String(error));
        }
        await sleep(wait, signal);
      }
    }
  }

  interface Read {
    templates: FitTemplate[];
    examples: number;
    states: number;
    /** Examples over the job's bound, left out (the oldest). */
    dropped: number;
    /** Examples over the model's limits, left out. */
    skipped: number;
  }

  /** The account's labelled examples of the job's templates, read by the base engine (templates with rows). */
  async function featurize(
    job: Job,
    signal: AbortSignal,
    progress: (p: number, message: string, examples?: number) => void,
  ): Promise<Read> {
    const all = await deps.examples.templates(job.userId);
    const wanted = job.templates ? all.filter((t) => job.templates?.includes(t.id)) : all;
    const templates = new Map(
      wanted.map((t) => {
        const question = JSON.parse(t.question) as WireQuestion;
        return [t.id, { question, labels: templateLabels(question), rows: [] as FitTemplate['rows'] }];
      }),
    );
    let examples = await deps.examples.list(job.userId, [...templates.keys()]);
    const dropped = Math.max(0, examples.length - maxExamples);
    // Past the bound, the newest (list is oldest first).
    if (dropped > 0) examples = examples.slice(dropped);
    examples.sort(contentOrder);
    // One engine call per distinct state, with every labelled question of it.
    const byState = new Map<string, StoredExample[]>();
    for (const e of examples) {
      const same = byState.get(e.state);
      if (same) same.push(e);
      else byState.set(e.state, [e]);
    }
    let done = 0;
    let skipped = 0;
    type StateRows = { template: string; row: FitTemplate['rows'][number] }[] | null;
    /** One state's rows (null: over the model's limits, so left out). */
    const read = async ([stateJson, labelled]: [string, StoredExample[]]): Promise<StateRows> => {
      const answered = await readWithBase(
        host,
        stateJson,
        labelled.map((e) => e.templateId),
        (id) => templates.get(id)?.question,
        signal,
      );
      if (!answered) return null;
      const { bases, state } = answered;
      const rows: NonNullable<StateRows> = [];
      labelled.forEach((e, i) => {
        const label = templates.get(e.templateId)?.labels.indexOf(e.label) ?? -1;
        if (label < 0) return;
        rows.push({
          template: e.templateId,
          row: { base: bases[i] ?? [], state, label },
        });
      });
      return rows;
    };
    const states = [...byState];
    progress(0, `reading ${examples.length} examples with the base model`, examples.length);
    for (let i = 0; i < states.length; ) {
      signal.throwIfAborted();
      const quiet = await yieldToTraffic(signal);
      const chunk = states.slice(i, i + (quiet ? batch : 1));
      const began = performance.now();
      const results = await withEngine(() => Promise.all(chunk.map(read)), signal);
      // In the states' order, whatever order the engine answered in: the same examples give the same
      // rows, so the same held-out split and the same adapter, on one server or through workers.
      results.forEach((rows, j) => {
        if (rows === null) skipped += chunk[j]?.[1].length ?? 0;
        for (const r of rows ?? []) templates.get(r.template)?.rows.push(r.row);
      });
      i += chunk.length;
      done += chunk.reduce((n, [, labelled]) => n + labelled.length, 0);
      progress(done / Math.max(1, examples.length), `read ${done} of ${examples.length} examples with the base model`);
      if (!quiet) await sleep((performance.now() - began) * (1 / share - 1), signal);
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
        labelStates: await withEngine(() => labelStatesOf(host.engine, t.question, signal), signal),
      });
    }
    return { templates: out, examples: examples.length, states: states.length, dropped, skipped };
  }

  /**
   * One run of a claimed job, holding its lease as `lease` (this process's owner and the run's
   * number: a job restarted and claimed again by this process is another run, and the first one's
   * renewals, writes and store then fail as they would in another process).
   */
  async function run(job: Job, lease: string, abort: AbortController): Promise<void> {
    const began = performance.now();
    const latest = { progress: 0, stage: 'reading', message: 'reading the examples' } as {
      progress: number;
      stage: string;
      message: string;
      examples?: number;
    };
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
      if (!(await deps.jobs.heartbeat(job.id, lease, leaseMs, latest))) throw stop('not-held', 'lost at the start');
      if (job.kind === 'distill') {
        await distill(job, lease, abort, latest, began);
        return;
      }
      const read = await featurize(job, abort.signal, (p, message, examples) => {
        Object.assign(
          latest,
          { progress: 0.7 * p, stage: 'reading', message },
          examples === undefined ? {} : { examples },
        );
      });
      if (read.templates.length === 0) throw new Error('the account has no labelled examples for these templates');
      const readingSeconds = (performance.now() - began) / 1000;
      delete latest.examples;
      Object.assign(latest, { progress: 0.7, stage: 'fitting', message: `fitting ${read.templates.length} templates` });
      if (!(await deps.jobs.heartbeat(job.id, lease, leaseMs, latest))) throw stop('not-held', 'lost before fitting');
      const fitStarted = performance.now();
      const result = await fit(
        {
          type: 'fit',
          base: host.engine.info.id,
          features: host.engine.features?.id ?? null,
          templates: read.templates,
          minExamples: MIN_EXAMPLES_PER_TEMPLATE,
        },
        (done, message) => Object.assign(latest, { progress: 0.7 + 0.3 * done, stage: 'fitting', message }),
        abort.signal,
      );
      abort.signal.throwIfAborted();
      const served = result.reports.filter((r) => r.served).length;
      const notes = [
        read.dropped > 0
          ? `read the newest ${read.examples} examples (the bound per job); ${read.dropped} older ones left out`
          : '',
        read.skipped > 0 ? `${read.skipped} examples over the model's limits left out` : '',
      ].filter(Boolean);
      const timing = {
        reading_s: Math.round(readingSeconds * 10) / 10,
        fitting_s: Math.round(((performance.now() - fitStarted) / 1000) * 10) / 10,
        examples: read.examples,
        states: read.states,
      };
      const base = host.engine.info.id;
      const stored = await deps.jobs.complete(
        job.id,
        lease,
        {
          message: (adapterId) =>
            [
              adapterId
                ? `adapter ${adapterId} answers ${served} of ${result.reports.length} templates; the others fall back to the base model`
                : "no adapter: no template was better than the base model on its held-out examples (see each template's reason)",
              ...notes,
            ].join('; '),
          result: { base, templates: result.reports, timing },
          runMs: performance.now() - began,
        },
        (tx) => storeAdapter(tx, job, base, result),
      );
      if (!stored) throw stop('not-held', 'lost before storing');
      logger.info(
        { job: job.id, adapter: stored.adapterId, served, templates: result.reports.length, ...timing },
        'training job done',
      );
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

  /**
   * A distillation job (issue 34): asks the teacher about the job's states (each state once, with
   * every template it has no soft label for yet, `spec.concurrency` calls at once, at most
   * `spec.budget` calls), storing its distributions as soft labels as they come (a restarted job does
   * not ask again); reads every labelled state with the base model; fits to the teacher's
   * distributions (src/training/adapter-fit.ts fitDistilledTemplate) and stores the adapter with its
   * teacher (and its fallback) where it is closer to the teacher than the base model.
   */
  async function distill(
    job: Job,
    lease: string,
    abort: AbortController,
    latest: { progress: number; stage: string; message: string; examples?: number; teacherCalls?: number },
    began: number,
  ): Promise<void> {
    const spec = job.spec as DistillSpec;
    const signal = abort.signal;
    const teacher = deps.teachers?.get(spec.teacher);
    const store = deps.distill;
    if (!teacher || !store) throw new Error(`teacher ${spec.teacher} is not configured on this server`);
    const questions = new Map(
      Object.entries(spec.questions)
        .filter(([id]) => !job.templates || job.templates.includes(id))
        .map(([id, q]) => {
          const question = JSON.parse(q) as WireQuestion;
          return [id, { question, labels: templateLabels(question) }] as const;
        }),
    );
    const ids = [...questions.keys()];
    if (ids.length === 0) throw new Error('the job has no question template left');
    const states =
      spec.source === 'states'
        ? await store.states(job.userId, spec.maxStates)
        : await store.retainedStates(job.userId, spec.maxStates);
    // 1. The teacher's labels, for the states and templates that have none yet.
    const have = await store.labelled(job.userId, spec.teacher, ids);
    const todo = states
      .map((state) => {
        const h = stateHash(state);
        return { state, missing: ids.filter((id) => !have.get(id)?.has(h)) };
      })
      .filter((t) => t.missing.length > 0);
    let calls = job.teacherCalls;
    const asked = todo.slice(0, Math.max(0, spec.budget - calls));
    let failed = 0;
    let lastFailure = '';
    let next = 0;
    let answered = 0;
    Object.assign(latest, {
      stage: 'labelling',
      message: `asking teacher ${spec.teacher} about ${asked.length} states`,
      teacherCalls: calls,
    });
    const labelStarted = performance.now();
    const worker = async () => {
      while (next < asked.length) {
        signal.throwIfAborted();
        const item = asked[next++] as (typeof asked)[number];
        const qs = item.missing.map((id) => questions.get(id)?.question as WireQuestion);
        try {
          const request = toDecisionRequest(JSON.parse(item.state) as WireState, qs);
          calls++;
          const answer = await teacher.ask(request, signal);
          await store.addSoftLabels(
            job.userId,
            spec.teacher,
            job.id,
            item.missing.map((templateId, i) => ({
              templateId,
              state: item.state,
              distribution: toCanonical(qs[i] as WireQuestion, answer.probabilities[i] ?? []),
            })),
          );
        } catch (error) {
          if (signal.aborted) throw error;
          failed++;
          lastFailure = error instanceof Error ? error.message : String(error);
          if (failed > Math.max(2, MAX_FAILED_SHARE * asked.length)) {
            next = asked.length; // the other workers take no more states
            throw new Error(`the teacher failed on ${failed} states (${lastFailure})`);
          }
        }
        answered++;
        Object.assign(latest, {
          progress: 0.4 * (answered / Math.max(1, asked.length)),
          message: `teacher ${spec.teacher} answered ${answered - failed} of ${asked.length} states (${calls} calls of a budget of ${spec.budget})`,
          teacherCalls: calls,
        });
      }
    };
    const parallel = Math.max(1, Math.min(spec.concurrency, teacher.concurrency, asked.length));
    await Promise.all(Array.from({ length: parallel }, worker));
    const labellingSeconds = (performance.now() - labelStarted) / 1000;
    if (!(await deps.jobs.heartbeat(job.id, lease, leaseMs, latest))) throw stop('not-held', 'lost after labelling');

    // 2. Every labelled state read by the base model: the teacher's rows, with the account's true labels.
    const soft = await store.softLabels(job.userId, spec.teacher, ids);
    const inJob = new Set(states);
    const human = new Map<string, number>();
    for (const e of await deps.examples.list(job.userId, ids)) {
      const label = questions.get(e.templateId)?.labels.indexOf(e.label) ?? -1;
      if (label >= 0) human.set(`${e.templateId}\u0000${e.state}`, label);
    }
    type Item = { templateId: string; target: number[] | null; truth: number | null };
    const byState = new Map<string, Item[]>();
    const push = (state: string, item: Item) => {
      const list = byState.get(state);
      if (list) list.push(item);
      else byState.set(state, [item]);
    };
    const taught = new Set<string>();
    for (const l of soft) {
      if (!inJob.has(l.state) && spec.source === 'retained') continue;
      const key = `${l.templateId}\u0000${l.state}`;
      taught.add(key);
      push(l.state, { templateId: l.templateId, target: l.distribution, truth: human.get(key) ?? null });
    }
    for (const [key, label] of human) {
      if (taught.has(key)) continue;
      const [templateId, state] = key.split('\u0000') as [string, string];
      push(state, { templateId, target: null, truth: label });
    }
    const rows = new Map<string, FitTemplate['rows']>(ids.map((id) => [id, []]));
    const entries = [...byState].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const readStarted = performance.now();
    let read = 0;
    let skipped = 0;
    Object.assign(latest, {
      progress: 0.4,
      stage: 'reading',
      message: `reading ${entries.length} states with the base model`,
    });
    const readOne = async ([stateJson, items]: [string, Item[]]) => {
      const answered = await readWithBase(
        host,
        stateJson,
        items.map((it) => it.templateId),
        (id) => questions.get(id)?.question,
        signal,
      );
      if (!answered) return null;
      const { bases, state } = answered;
      return items.map((it, i) => {
        const base = bases[i] ?? [];
        const row: FitTemplate['rows'][number] = it.target
          ? {
              base,
              state,
              label: it.target.indexOf(Math.max(...it.target)),
              target: it.target,
              source: 'teacher',
              truth: it.truth,
            }
          : { base, state, label: it.truth ?? 0, source: 'human' };
        return { templateId: it.templateId, row };
      });
    };
    for (let i = 0; i < entries.length; ) {
      signal.throwIfAborted();
      const quiet = await yieldToTraffic(signal);
      const chunk = entries.slice(i, i + (quiet ? batch : 1));
      const t0 = performance.now();
      const results = await withEngine(() => Promise.all(chunk.map(readOne)), signal);
      results.forEach((r) => {
        if (r === null) skipped++;
        for (const x of r ?? []) rows.get(x.templateId)?.push(x.row);
      });
      i += chunk.length;
      read += chunk.length;
      Object.assign(latest, {
        progress: 0.4 + 0.4 * (read / Math.max(1, entries.length)),
        message: `read ${read} of ${entries.length} states with the base model`,
      });
      if (!quiet) await sleep((performance.now() - t0) * (1 / share - 1), signal);
    }
    const readingSeconds = (performance.now() - readStarted) / 1000;
    const templates: FitTemplate[] = [];
    for (const [id, t] of questions) {
      const r = rows.get(id) ?? [];
      if (r.length === 0) continue;
      templates.push({
        template: id,
        type: t.question.type,
        labels: t.labels,
        rows: r,
        labelStates: await withEngine(() => labelStatesOf(host.engine, t.question, signal), signal),
      });
    }
    if (templates.length === 0) throw new Error('the teacher labelled no state of these templates');

    // 3. The fit, and the adapter where it is closer to the teacher than the base model.
    Object.assign(latest, { progress: 0.8, stage: 'fitting', message: `fitting ${templates.length} templates` });
    if (!(await deps.jobs.heartbeat(job.id, lease, leaseMs, latest))) throw stop('not-held', 'lost before fitting');
    const fitStarted = performance.now();
    const result = await fit(
      {
        type: 'fit',
        base: host.engine.info.id,
        features: host.engine.features?.id ?? null,
        templates,
        minExamples: MIN_EXAMPLES_PER_TEMPLATE,
        distill: { teacher: spec.teacher, humanWeight: spec.humanWeight },
      },
      (done, message) => Object.assign(latest, { progress: 0.8 + 0.2 * done, stage: 'fitting', message }),
      signal,
    );
    signal.throwIfAborted();
    const served = result.reports.filter((r) => r.served).length;
    const stats = teacher.stats();
    const summary = {
      teacher: spec.teacher,
      states: states.length,
      labelled_states: entries.length,
      teacher_calls: calls,
      failed_calls: failed,
      budget: spec.budget,
      teacher_ms_per_call: stats.msPerCall === null ? null : Math.round(stats.msPerCall * 10) / 10,
      labelling_s: Math.round(labellingSeconds * 10) / 10,
    };
    const timing = {
      reading_s: Math.round(readingSeconds * 10) / 10,
      fitting_s: Math.round(((performance.now() - fitStarted) / 1000) * 10) / 10,
      examples: templates.reduce((n, t) => n + t.rows.length, 0),
      states: entries.length,
    };
    const base = host.engine.info.id;
    latest.teacherCalls = calls;
    await deps.jobs.heartbeat(job.id, lease, leaseMs, latest);
    const stored = await deps.jobs.complete(
      job.id,
      lease,
      {
        message: (adapterId) =>
          [
            adapterId
              ? `adapter ${adapterId} answers ${served} of ${result.reports.length} templates as teacher ${spec.teacher} would; the others fall back to the base model`
              : `no adapter: no template came closer to teacher ${spec.teacher} than the base model on its held-out states (see each template's reason)`,
            `${calls} teacher calls`,
            failed > 0 ? `${failed} states the teacher failed on left out (${lastFailure.slice(0, 120)})` : '',
            asked.length < todo.length ? `${todo.length - asked.length} states left unlabelled by the budget` : '',
            skipped > 0 ? `${skipped} states over the model's limits left out` : '',
          ]
            .filter(Boolean)
            .join('; '),
        result: { base, templates: result.reports, timing, distill: summary },
        runMs: performance.now() - began,
      },
      (tx) =>
        storeAdapter(tx, job, base, result, {
          teacher: spec.teacher,
          fallback:
            spec.fallbackThreshold === null ? null : { teacher: spec.teacher, threshold: spec.fallbackThreshold },
        }),
    );
    if (!stored) throw stop('not-held', 'lost before storing');
    logger.info({ job: job.id, adapter: stored.adapterId, served, ...summary, ...timing }, 'distillation job done');
  }

  /**
   * Stores a job's adapter in the completing transaction (null when no template was served). The
   * account's room is checked again here: its other jobs may have stored adapters since this one was queued.
   */
  async function storeAdapter(
    tx: Parameters<Parameters<JobQueue['complete']>[3]>[0],
    job: Job,
    base: string,
    result: { artifact: unknown; reports: unknown },
    distilled: { teacher: string; fallback: AdapterFallback | null } | null = null,
  ): Promise<string | null> {
    if (!result.artifact) return null;
    await deps.adapters.checkRoom(job.userId, tx);
    const adapter = {
      base,
      jobId: job.id,
      artifact: JSON.stringify(result.artifact),
      report: JSON.stringify(result.reports),
      ...distilled,
    };
    return (await deps.adapters.create(job.userId, adapter, tx)).id;
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
