/**
 * What every kind of job uses (./training.ts, ./distillation.ts), given by the runner (./runner.ts):
 * reading states with the base model through the engine's host, in turns with live traffic; waiting
 * for an engine that cannot serve now; renewing the lease at a stage's end; storing the adapter in the
 * transaction that ends the job; and the reasons a run stops without failing its job.
 */
import type { AdapterFallback, AdapterStore } from '../domain/adapters.ts';
import type { DistillStore } from '../domain/distill.ts';
import type { ExampleStore } from '../domain/examples.ts';
import type { Job, JobQueue } from '../domain/jobs.ts';
import type { UsageRecorder } from '../domain/usage.ts';
import type { FitRequest, FitTemplate } from '../engines/adapters/fit-protocol.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import type { EngineHost } from '../engines/host.ts';
import type { Teachers } from '../engines/teachers.ts';
import { isDomainError } from '../lib/errors.ts';
import { counted } from '../lib/plural.ts';
import type { Logger } from '../observability/logger.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import type { WireQuestion, WireState } from '../systemone/protocol.ts';
import { canonicalOrder, toCanonical } from '../systemone/templates.ts';
import type { Fitter } from './fitter.ts';

type FitResult = Awaited<ReturnType<Fitter>>;

/** Fewest labelled examples a template needs to be fitted (documented). */
export const MIN_EXAMPLES_PER_TEMPLATE = 20;
/**
 * Distinct states read together when no live traffic is about (default of `batch`). Measured on the
 * embedded engine (2 encoder threads, 250 states of bench:jobs' job): one at a time 9.9 states/s, 2 at
 * once 11.1, 4 at once 12.4, 8 at once 10.3 (a batch pads its texts to its longest, and USE-lite's
 * cost grows with the padded length).
 */
export const READ_BATCH = 4;
/** Live traffic this recent (ms) makes the job read one state at a time and pause. */
const QUIET_MS = 1000;

/** What the runner is given; each kind of job reads what it needs. */
export interface JobStores {
  jobs: JobQueue;
  examples: ExampleStore;
  adapters: AdapterStore;
  host: EngineHost;
  logger: Logger;
  /** Distillation jobs (issue 34): the configured teachers and the soft labels' store. */
  teachers?: Teachers | undefined;
  distill?: DistillStore | undefined;
  /** Where distillation jobs' teacher calls are metered (absent: not metered). */
  usage?: UsageRecorder | undefined;
}

/** A running job's progress, written with each lease renewal. */
export interface JobProgress {
  progress: number;
  stage: string;
  message: string;
  examples?: number;
}

/** One run of a claimed job, holding its lease as `lease`. */
export interface JobRun {
  job: Job;
  lease: string;
  abort: AbortController;
  latest: JobProgress;
  /** performance.now() when the run began. */
  began: number;
}

/**
 * A template's option features in canonical class order, or null (an engine without option
 * features). Training jobs and bench:adapt use it. A choice template's own probe reads them as its
 * label prior; a yes/no or score template's own candidates do not (adapter-fit.ts ownData: bench:adapt
 * at 200 labels, yes/no unchanged, score worse, sst5 0.289 -> 0.268), but the account's shared model
 * reads every type's (a yes/no question's instruction as its yes option, a level's description):
 * CalDec as an account, two runs with cross-fitting, accuracy 0.614 -> 0.632 and 0.598 -> 0.616, Brier
 * 0.1010 -> 0.0984 and 0.1012 -> 0.0986 against choice options only (before cross-fitting: 0.539 ->
 * 0.546, not a measurable help).
 */
export async function labelStatesOf(
  engine: DecisionEngine,
  question: WireQuestion,
  signal?: AbortSignal,
): Promise<(Float32Array | null)[] | null> {
  const features = engine.features;
  if (!features?.options) return null;
  const normalized = toDecisionRequest('', [question]).questions[0];
  if (!normalized) return null;
  const vectors = await features.options(normalized, signal);
  return canonicalOrder(question).map((i) => vectors[i] ?? null);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
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
export const stop = (why: Stop, message: string) => Object.assign(new Error(message), { stop: why });
export const stoppedFor = (error: unknown, why: Stop) =>
  error instanceof Error && 'stop' in error && error.stop === why;

/** Refusals that mean "not now": the job waits for the engine instead of failing. */
export function unavailable(error: unknown): boolean {
  return (
    stoppedFor(error, 'unavailable') ||
    (isDomainError(error) && (error.code === 'NOT_READY' || error.code === 'OVERLOADED' || error.code === 'TIMEOUT'))
  );
}

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

export interface JobKitSettings {
  leaseMs: number;
  share: number;
  batch: number;
  engineWaitMs: number;
  maxExamples: number;
  fit: Fitter;
}

export function createJobKit(stores: JobStores, settings: JobKitSettings) {
  const { host } = stores;
  const { leaseMs, share, batch, engineWaitMs } = settings;

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

  /**
   * Reads `states` (each a state's JSON and what it carries) with the base model, outside its live
   * queue: distinct states in batches (`batch` at once, answered together, so that the encoder embeds
   * them in shared calls), with the engine's state features; while live traffic is about (a request in
   * the last second), one state at a time, only when no live request is waiting or running, pausing as
   * long as each step took, so that the job never queues ahead of traffic. `done` gets each chunk's
   * results in the states' order, whatever order the engine answered in (the same states give the same
   * rows, so the same held-out split and the same adapter, on one server or through workers); a result
   * is null for a state over the model's limits.
   */
  async function readStates<T>(
    states: readonly [string, T][],
    templateIds: (item: T) => string[],
    questionOf: (templateId: string) => WireQuestion | undefined,
    signal: AbortSignal,
    done: (chunk: readonly [string, T][], results: (Awaited<ReturnType<typeof readWithBase>> | null)[]) => void,
  ): Promise<void> {
    for (let i = 0; i < states.length; ) {
      signal.throwIfAborted();
      const quiet = await yieldToTraffic(signal);
      const chunk = states.slice(i, i + (quiet ? batch : 1));
      const began = performance.now();
      const results = await withEngine(
        () =>
          Promise.all(chunk.map(([state, item]) => readWithBase(host, state, templateIds(item), questionOf, signal))),
        signal,
      );
      i += chunk.length;
      done(chunk, results);
      if (!quiet) await sleep((performance.now() - began) * (1 / share - 1), signal);
    }
  }

  /** The templates with rows, as the fitting step takes them (a choice template with its option features). */
  async function fitTemplates(
    templates: Iterable<[string, { question: WireQuestion; labels: string[]; rows: FitTemplate['rows'] }]>,
    signal: AbortSignal,
  ): Promise<FitTemplate[]> {
    const out: FitTemplate[] = [];
    for (const [id, t] of templates) {
      // The others have nothing to fit (and need no option features).
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
    return out;
  }

  /**
   * The fitting step of a run (after a lease renewal that finds the job still its own), its progress
   * from `from` to 1 written to the run's progress; the fitter's messages name each template by its
   * question's words instead of its id. Returns the fit and the seconds it took.
   */
  async function fitJob(
    run: JobRun,
    templates: FitTemplate[],
    from: number,
    questionOf: (templateId: string) => WireQuestion | undefined,
    distill?: FitRequest['distill'],
  ): Promise<{ fitted: FitResult; seconds: number }> {
    Object.assign(run.latest, {
      progress: from,
      stage: 'fitting',
      message: `fitting ${counted(templates.length, 'template')}`,
    });
    await checkpoint(run, 'lost before fitting');
    const began = performance.now();
    const named = templateNamer(questionOf);
    const fitted = await settings.fit(
      {
        type: 'fit',
        base: host.engine.info.id,
        features: host.engine.features?.id ?? null,
        prefix: host.engine.features?.prefix ?? null,
        templates,
        minExamples: MIN_EXAMPLES_PER_TEMPLATE,
        ...(distill ? { distill } : {}),
      },
      (done, message) =>
        Object.assign(run.latest, { progress: from + (1 - from) * done, stage: 'fitting', message: named(message) }),
      run.abort.signal,
    );
    run.abort.signal.throwIfAborted();
    return { fitted, seconds: (performance.now() - began) / 1000 };
  }

  /** Renews the lease with the progress so far; stops the run when the job is no longer its own. */
  async function checkpoint(run: JobRun, where: string): Promise<void> {
    if (!(await stores.jobs.heartbeat(run.job.id, run.lease, leaseMs, run.latest))) throw stop('not-held', where);
  }

  /**
   * Ends a run with its fit: the job succeeds with `end.message` (given the adapter's id, or null, and
   * how many templates it serves) and its report, and the adapter, where a template was served, is
   * stored in the same transaction, only while the run still holds the job; logs `end.done`.
   */
  async function completeJob(
    run: JobRun,
    fitted: FitResult,
    end: {
      message: (adapterId: string | null, served: number) => string;
      report: Record<string, unknown>;
      distilled?: { teacher: string; fallback: AdapterFallback | null };
      done: string;
      fields: Record<string, unknown>;
    },
  ): Promise<void> {
    const base = host.engine.info.id;
    const served = fitted.reports.filter((r) => r.served).length;
    const stored = await stores.jobs.complete(
      run.job.id,
      run.lease,
      {
        message: (adapterId) => end.message(adapterId, served),
        result: { base, templates: fitted.reports, ...end.report },
        runMs: performance.now() - run.began,
      },
      (tx) => storeAdapter(tx, run.job, base, fitted, end.distilled ?? null),
    );
    if (!stored) throw stop('not-held', 'lost before storing');
    stores.logger.info({ job: run.job.id, adapter: stored.adapterId, served, ...end.fields }, end.done);
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
    await stores.adapters.checkRoom(job.userId, tx);
    const adapter = {
      base,
      jobId: job.id,
      artifact: JSON.stringify(result.artifact),
      report: JSON.stringify(result.reports),
      ...distilled,
    };
    return (await stores.adapters.create(job.userId, adapter, tx)).id;
  }

  return { ...stores, ...settings, withEngine, readStates, fitTemplates, fitJob, checkpoint, completeJob };
}

export type JobKit = ReturnType<typeof createJobKit>;

/** A template as a person knows it: its question's instructions (quoted, cut at 60 characters), else its type. */
export function templateName(question: WireQuestion): string {
  const given = question.instructions;
  const words = (typeof given === 'string' ? given : given ? JSON.stringify(given) : '').trim().replace(/\s+/g, ' ');
  if (!words) return `the ${question.type} question without instructions`;
  return `"${words.length > 60 ? `${words.slice(0, 59)}…` : words}"`;
}

/** Rewrites the template ids (tpl_...) in a progress message as their questions' words (templateName). */
export function templateNamer(questionOf: (templateId: string) => WireQuestion | undefined) {
  return (message: string) =>
    message.replace(/\btpl_[0-9a-f]+\b/g, (id) => {
      const question = questionOf(id);
      return question ? templateName(question) : id;
    });
}

/** Seconds to one decimal, for a job's timing. */
export const tenths = (seconds: number) => Math.round(seconds * 10) / 10;
