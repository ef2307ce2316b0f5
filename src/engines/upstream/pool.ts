/**
 * One engine over several inference backends (BRIER_WORKERS): Brier workers, OpenAI-compatible
 * servers (vLLM, SGLang, llama.cpp server) or other System One servers, each itself a DecisionEngine.
 *
 * - Health: every `healthMs` each backend is probed (a backend not loaded yet is loaded instead);
 *   one that fails its probe, or fails a request on the wire, is skipped until a probe passes again.
 * - Spreading: each request goes to the healthy backend with the fewest requests in flight from this
 *   gateway, ties taken in turn.
 * - Backpressure and failover: a backend that refuses with 503 (`overloaded`, `not_ready`) or cannot
 *   be connected to is skipped for the next; one that breaks mid-request (killed, reset, a 5xx) is
 *   marked down and the request is retried once on another. When every backend is skipped the caller
 *   gets 503 with retry-after. Inference has no side effects, so a retry cannot double anything.
 * - State features (adapters' probes, training jobs): where the backends' engine has them (Brier
 *   workers on the embedded model), the pool has them too, asked of the backend that answered the
 *   request (its encoder has just read the state) with the same failover, so that an adapter answers
 *   through a gateway exactly as on one server.
 *
 * Why hand-written: the spreading needs Brier's own notion of "full" (a 503 with retry-after from the
 * worker's admission control), which no HTTP balancer library reads; connections, keep-alive and
 * their limits are undici's (the Dispatcher the backends share).
 */
import { type DomainError, fail, isDomainError } from '../../lib/errors.ts';
import type {
  DecisionEngine,
  EngineAnswer,
  EngineFeatures,
  EngineLimits,
  EngineMetrics,
  ModelInfo,
  TokenCounts,
} from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';

export interface PoolBackend {
  /** How logs, /healthz and /metrics name it: the URL, never a credential. */
  name: string;
  engine: DecisionEngine;
  /** True when the backend answers its health check. */
  probe(): Promise<boolean>;
}

/** Why a request left a backend for another. */
export type FailoverReason = 'busy' | 'refused' | 'broken';

export interface PoolEvents {
  /** A backend became healthy or was marked down (`why`: the probe, or a request's failure). */
  health?(name: string, healthy: boolean, why: string): void;
  failover?(name: string, reason: FailoverReason): void;
}

export interface PoolOptions {
  backends: PoolBackend[];
  /** Probe interval (BRIER_WORKER_HEALTH_MS). */
  healthMs: number;
  /** Requests this gateway sends at once over all backends (their own queues refuse beyond that). */
  parallelism: number;
  events?: PoolEvents;
}

export interface BackendStatus {
  name: string;
  healthy: boolean;
  inFlight: number;
}

interface Member extends PoolBackend {
  healthy: boolean;
  inFlight: number;
  loading: Promise<void> | undefined;
}

/** A connection that was refused never reached the backend: skipping it costs no retry. */
export function wasRefused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export interface EnginePool extends DecisionEngine {
  /** Each backend's health and requests in flight from this gateway. */
  backends(): BackendStatus[];
  /** Requests moved to another backend since start, by reason. */
  failovers(): Record<FailoverReason, number>;
}

export function createEnginePool(options: PoolOptions): EnginePool {
  if (options.backends.length === 0) throw new Error('an engine pool needs at least one backend');
  const members: Member[] = options.backends.map((b) => ({ ...b, healthy: false, inFlight: 0, loading: undefined }));
  const events = options.events ?? {};
  let primary: Member | undefined;
  let closed = false;
  let turn = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let firstReady: (() => void) | undefined;
  const moved: Record<FailoverReason, number> = { busy: 0, refused: 0, broken: 0 };
  const failover = (m: Member, reason: FailoverReason) => {
    moved[reason]++;
    events.failover?.(m.name, reason);
  };

  function setHealth(m: Member, healthy: boolean, why: string): void {
    if (m.healthy === healthy) return;
    m.healthy = healthy;
    events.health?.(m.name, healthy, why);
    if (healthy && !primary) {
      primary = m;
      firstReady?.();
    }
  }

  async function check(m: Member): Promise<void> {
    if (closed) return;
    if (!m.engine.ready()) {
      m.loading ??= m.engine.load().finally(() => {
        m.loading = undefined;
      });
      await m.loading.then(
        () => setHealth(m, true, 'loaded'),
        (err: unknown) => setHealth(m, false, err instanceof Error ? err.message : String(err)),
      );
      return;
    }
    setHealth(m, await m.probe(), 'health check');
  }

  const round = () => Promise.all(members.map(check));

  async function load(): Promise<void> {
    if (primary) return;
    const ready = new Promise<void>((resolve) => {
      firstReady = resolve;
    });
    timer ??= setInterval(() => void round(), options.healthMs);
    timer.unref();
    void round();
    await ready;
  }

  function pick(tried: Set<Member>, eligible: (m: Member) => boolean = () => true): Member | undefined {
    const open = members.filter((m) => m.healthy && m.engine.ready() && !tried.has(m) && eligible(m));
    if (open.length === 0) return undefined;
    const least = Math.min(...open.map((m) => m.inFlight));
    const ties = open.filter((m) => m.inFlight === least);
    return ties[turn++ % ties.length];
  }

  /**
   * Runs `work` on one backend after another until one answers (see the file comment): `first` first
   * when it is open, then the least busy of the `eligible` ones.
   */
  async function attempt<T>(
    work: (m: Member) => Promise<T>,
    signal: AbortSignal | undefined,
    eligible?: (m: Member) => boolean,
    first?: Member,
  ): Promise<T> {
    const tried = new Set<Member>();
    let broken = 0;
    let busy: DomainError | undefined;
    const next = () => {
      if (first && !tried.has(first) && first.healthy && first.engine.ready() && (eligible?.(first) ?? true)) {
        return first;
      }
      return pick(tried, eligible);
    };
    for (let m = next(); m; m = next()) {
      signal?.throwIfAborted();
      tried.add(m);
      m.inFlight++;
      try {
        return await work(m);
      } catch (error) {
        if (signal?.aborted) throw signal.reason ?? error;
        if (isDomainError(error)) {
          if (error.code !== 'OVERLOADED' && error.code !== 'NOT_READY') throw error;
          // Full or still loading: the next backend may have room.
          if (!busy || (error.retryAfter ?? 1) < (busy.retryAfter ?? 1)) busy = error;
          failover(m, 'busy');
          continue;
        }
        const refused = wasRefused(error);
        setHealth(m, false, error instanceof Error ? error.message : String(error));
        failover(m, refused ? 'refused' : 'broken');
        if (!refused && ++broken >= 2) {
          throw fail(
            'OVERLOADED',
            'an inference worker failed during the request and its one retry failed too; retry shortly',
            {
              retryAfter: 1,
              cause: error,
            },
          );
        }
      } finally {
        m.inFlight--;
      }
    }
    if (busy) {
      const retryAfter = busy.retryAfter ?? 1;
      throw fail('OVERLOADED', `every inference worker is busy; retry after ${retryAfter} s`, { retryAfter });
    }
    throw fail('NOT_READY', 'no inference worker is reachable; retry shortly', { retryAfter: 1 });
  }

  /** The backend that answered a request: its state features are asked of it (its encoder has them cached). */
  const answeredBy = new WeakMap<DecisionRequest, Member>();

  function answer(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    return attempt(async (m) => {
      const answered = await m.engine.answer(request, signal);
      answeredBy.set(request, m);
      return answered;
    }, signal);
  }

  /**
   * The backends' state features (adapters' probes read them), where the first backend to load has
   * them: asked of the backend that answered the request, else of any backend with the same features.
   */
  let pooled: { from: EngineFeatures; features: EngineFeatures } | undefined;
  function features(): EngineFeatures | undefined {
    const own = primary?.engine.features;
    if (!own) return undefined;
    if (pooled?.from.id === own.id && pooled.from.dim === own.dim) return pooled.features;
    const same = (m: Member) => m.engine.features?.id === own.id;
    const f: EngineFeatures = {
      id: own.id,
      dim: own.dim,
      ...(own.prefix ? { prefix: own.prefix } : {}),
      state: (request, signal, dims) =>
        attempt(
          (m) => (m.engine.features as EngineFeatures).state(request, signal, dims),
          signal,
          same,
          answeredBy.get(request),
        ),
      ...(own.options
        ? {
            options: (question: DecisionQuestion, signal?: AbortSignal) =>
              attempt(
                (m) => {
                  const options = m.engine.features?.options;
                  if (!options) throw new Error(`${m.name} has no option features`);
                  return options(question, signal);
                },
                signal,
                (m) => same(m) && typeof m.engine.features?.options === 'function',
              ),
          }
        : {}),
    };
    pooled = { from: own, features: f };
    return f;
  }

  const fallbackInfo: ModelInfo = {
    id: 'brier-pool',
    description: `Answers come from ${members.length} inference workers.`,
    releaseDate: '',
  };
  return {
    get info(): ModelInfo {
      return primary?.engine.info ?? fallbackInfo;
    },
    get limits(): EngineLimits {
      return primary?.engine.limits ?? { contextTokens: 1, inputTokens: 1 };
    },
    parallelism: options.parallelism,
    get features() {
      return features();
    },
    /**
     * The calibration answers come with: a loaded backend's that is not calibrated where there is one
     * (so a gateway never says calibrated while some answers are not), else the described backend's.
     */
    get calibration() {
      const loaded = members.filter((m) => m.engine.ready()).map((m) => m.engine.calibration);
      return loaded.find((c) => c != null && !c.calibrated) ?? primary?.engine.calibration;
    },
    load,
    /** Ready once one backend has loaded: a gateway whose workers are all down still serves the control plane and answers inference with 503. */
    ready: () => primary !== undefined && !closed,
    countTokens(request: DecisionRequest): Promise<TokenCounts> {
      return (primary ?? members[0])?.engine.countTokens(request) ?? Promise.reject(new Error('no backend'));
    },
    answer,
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      await Promise.all(members.map((m) => m.engine.close()));
    },
    attachMetrics(metrics: EngineMetrics) {
      for (const m of members) m.engine.attachMetrics?.(metrics);
    },
    backends: () => members.map((m) => ({ name: m.name, healthy: m.healthy, inFlight: m.inFlight })),
    failovers: () => ({ ...moved }),
  };
}
