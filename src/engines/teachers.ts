/**
 * Teachers (issue 34): engines the operator configured (BRIER_TEACHERS) that distillation jobs learn
 * from and that adapters may fall back to. Each is an engine Brier runs or reaches: an upstream System
 * One server (its key held here, in the engine's headers, and nowhere else), an OpenAI-compatible
 * completions server, or a GGUF model. Engines are built lazily, on the first call.
 *
 * A call is bounded: at most `concurrency` calls per teacher at once (the rest wait their turn), each
 * attempt cut at `timeoutMs`, and the teacher's timeouts, 429s, 503s, other 5xx and broken connections
 * retried `retries` times with a doubling backoff (or the teacher's retry-after, capped at 10 s). A
 * refusal of the request itself (400/422) is not retried. The time per call is measured: an
 * exponentially weighted mean of the calls that succeeded, which GET /control/v1/teachers shows.
 */
import type { TeacherConfig, TeacherKind } from '../config.ts';
import { fail, isDomainError } from '../lib/errors.ts';
import { type UncalibratedPolicy, withSourceCalibration } from './calibrated.ts';
import type { DecisionEngine, EngineAnswer } from './engine.ts';
import type { PromptFormat } from './gguf/frames.ts';
import type { DecisionRequest } from './request.ts';

/** Weight of the newest call in the measured time per call. */
const EWMA_ALPHA = 0.2;
/** Longest pause between two attempts (ms). */
const MAX_BACKOFF_MS = 10_000;

export interface TeacherStats {
  /** Calls answered (each may have taken several attempts). */
  calls: number;
  /** Attempts that failed and were retried, or failed the call. */
  failedAttempts: number;
  /** Measured milliseconds per answered call (EWMA), null until one was answered. */
  msPerCall: number | null;
}

export interface Teacher {
  id: string;
  kind: TeacherKind;
  /** Most calls at once. */
  concurrency: number;
  stats(): TeacherStats;
  /**
   * The teacher's answer to `request`, retried as the file comment says (`retries` overrides the
   * teacher's count: a live request's fallback retries once); rejects once `signal` aborts.
   */
  ask(request: DecisionRequest, signal?: AbortSignal, options?: { retries?: number }): Promise<EngineAnswer>;
  close(): Promise<void>;
}

export interface TeachersOptions {
  /** Builds a teacher's engine (default: the engine factories, by kind). Tests replace it. */
  build?: (config: TeacherConfig) => Promise<DecisionEngine>;
  /** GGUF teachers: CPU threads, context size and prompt format (default 1 thread, 4096 tokens, plain). */
  gguf?: { threads?: number | undefined; contextSize?: number | undefined; prompt?: PromptFormat | undefined };
  /** Base of the retry backoff (ms, default 250). */
  backoffMs?: number;
  /**
   * Where teachers' calibration files are read (`brier models calibrate` writes them, keyed as for
   * BRIER_MODEL) and what an uncalibrated teacher's answers become: no teacher teaches raw
   * probabilities unless the operator chose `raw`. Absent (tests): answers as the engine gives them.
   */
  calibration?: { dir: string; uncalibrated: UncalibratedPolicy } | undefined;
}

/** The engine factories of src/engines, by teacher kind (imported lazily, as createEngine does). */
async function defaultBuild(config: TeacherConfig, options: TeachersOptions): Promise<DecisionEngine> {
  const engine = await buildRaw(config, options.gguf);
  if (!options.calibration) return engine;
  return withSourceCalibration(
    engine,
    config.kind === 'gguf'
      ? { kind: 'gguf', path: config.target, prompt: options.gguf?.prompt }
      : {
          kind: config.kind === 'openai' ? 'openai' : 'upstream',
          baseUrl: config.target,
          model: config.upstreamModel ?? '',
        },
    options.calibration,
  );
}

async function buildRaw(config: TeacherConfig, gguf: TeachersOptions['gguf']): Promise<DecisionEngine> {
  switch (config.kind) {
    case 'systemone': {
      const { createUpstreamEngine } = await import('./upstream/system-one.ts');
      return createUpstreamEngine({
        baseUrl: config.target,
        apiKey: config.apiKey,
        ...(config.upstreamModel ? { model: config.upstreamModel } : {}),
      });
    }
    case 'openai': {
      const { createOpenAiCompletionsEngine } = await import('./upstream/openai-completions.ts');
      return createOpenAiCompletionsEngine({
        baseUrl: config.target,
        apiKey: config.apiKey,
        model: config.upstreamModel,
        parallelism: config.concurrency,
      });
    }
    case 'gguf': {
      const { createGgufEngine } = await import('./gguf/gguf-engine.ts');
      return createGgufEngine({
        modelPath: config.target,
        promptFormat: gguf?.prompt ?? 'plain',
        threads: gguf?.threads ?? 1,
        contextSize: gguf?.contextSize ?? 4096,
      });
    }
  }
}

/** Whether a failed attempt is worth another: timeouts, 429/503 (OVERLOADED), other 5xx, broken connections. */
export function retryable(error: unknown): boolean {
  if (isDomainError(error))
    return error.code === 'OVERLOADED' || error.code === 'TIMEOUT' || error.code === 'NOT_READY';
  if (!(error instanceof Error)) return false;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true;
  if (/answered (429|5\d\d)/.test(error.message)) return true;
  // fetch's network failures (refused, reset, closed mid-body)
  return error instanceof TypeError || /fetch failed|ECONNRESET|ECONNREFUSED|socket|terminated/i.test(error.message);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A counting semaphore: run() waits for one of `n` slots. */
function slots(n: number) {
  let free = n;
  const waiting: (() => void)[] = [];
  return async function run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (free > 0) free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(signal?.reason);
        };
        waiting.push(go);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

function createTeacher(config: TeacherConfig, options: TeachersOptions): Teacher {
  const build = options.build ?? ((c: TeacherConfig) => defaultBuild(c, options));
  const backoff = options.backoffMs ?? 250;
  const run = slots(config.concurrency);
  let engine: Promise<DecisionEngine> | null = null;
  const stats: TeacherStats = { calls: 0, failedAttempts: 0, msPerCall: null };

  /** The engine, built and loaded once (a failed load is tried again on the next call). */
  function ready(): Promise<DecisionEngine> {
    if (!engine) {
      const attempt = build(config).then(async (e) => {
        await e.load();
        return e;
      });
      engine = attempt;
      attempt.catch(() => {
        if (engine === attempt) engine = null;
      });
    }
    return engine;
  }

  async function attemptOnce(request: DecisionRequest, signal: AbortSignal | undefined): Promise<EngineAnswer> {
    const e = await ready();
    const timeout = AbortSignal.timeout(config.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return await e.answer(request, both);
    } catch (error) {
      if (timeout.aborted && !signal?.aborted)
        throw fail('TIMEOUT', `teacher ${config.id} did not answer within ${config.timeoutMs} ms`);
      throw error;
    }
  }

  async function ask(
    request: DecisionRequest,
    signal?: AbortSignal,
    options: { retries?: number } = {},
  ): Promise<EngineAnswer> {
    const retries = Math.min(config.retries, options.retries ?? config.retries);
    return run(async () => {
      for (let attempt = 0; ; attempt++) {
        signal?.throwIfAborted();
        const began = performance.now();
        try {
          const answer = await attemptOnce(request, signal);
          const ms = performance.now() - began;
          stats.calls++;
          stats.msPerCall = stats.msPerCall === null ? ms : stats.msPerCall + EWMA_ALPHA * (ms - stats.msPerCall);
          return answer;
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          stats.failedAttempts++;
          if (attempt >= retries || !retryable(error)) {
            const why = error instanceof Error ? error.message : String(error);
            throw fail(
              isDomainError(error) && error.code === 'BAD_REQUEST' ? 'BAD_REQUEST' : 'OVERLOADED',
              `teacher ${config.id} failed after ${attempt + 1} attempts: ${why.slice(0, 300)}`,
              { retryAfter: 1 },
            );
          }
          const after = isDomainError(error) && error.retryAfter ? error.retryAfter * 1000 : 0;
          const wait = Math.min(MAX_BACKOFF_MS, Math.max(after, backoff * 2 ** attempt * (0.75 + Math.random() / 2)));
          await sleep(wait, signal);
        }
      }
    }, signal);
  }

  return {
    id: config.id,
    kind: config.kind,
    concurrency: config.concurrency,
    stats: () => ({ ...stats }),
    ask,
    async close() {
      const e = engine;
      engine = null;
      if (e) await (await e.catch(() => null))?.close();
    },
  };
}

/** The configured teachers by id. */
export function createTeachers(configs: readonly TeacherConfig[], options: TeachersOptions = {}) {
  const byId = new Map(configs.map((c) => [c.id, createTeacher(c, options)]));
  return {
    list: (): Teacher[] => [...byId.values()],
    get: (id: string): Teacher | undefined => byId.get(id),
    async close(): Promise<void> {
      await Promise.all([...byId.values()].map((t) => t.close()));
    },
  };
}

export type Teachers = ReturnType<typeof createTeachers>;
