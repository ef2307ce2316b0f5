/**
 * A gateway's client of one Brier inference worker (worker-protocol.ts): a DecisionEngine whose
 * answers come from the worker's engine, unrounded. Requests go through undici's pooled keep-alive
 * connections (a Dispatcher shared by every worker of a pool); the pool (pool.ts) adds health checks,
 * failover and backpressure across workers.
 */
import type { Dispatcher } from 'undici';
import { type ErrorCode, fail } from '../../lib/errors.ts';
import type { DecisionEngine, EngineAnswer, EngineFeatures, EngineLimits, ModelInfo, TokenCounts } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import {
  decodeVector,
  WORKER_ANSWER_PATH,
  WORKER_FEATURES_PATH,
  WORKER_MODEL_PATH,
  WorkerAnswer,
  WorkerFeatures,
  WorkerModel,
} from './worker-protocol.ts';

export interface WorkerClientOptions {
  /** The worker's base URL (http://10.0.0.5:9090). */
  baseUrl: string;
  /** BRIER_WORKER_TOKEN: sent as a bearer token, never logged. */
  token: string;
  dispatcher: Dispatcher;
}

/** Wire error types a worker refuses with that keep their meaning at the gateway. */
const PASSED_THROUGH: Record<string, ErrorCode> = {
  max_tokens_exceeded: 'MAX_TOKENS',
  overloaded: 'OVERLOADED',
  not_ready: 'NOT_READY',
  timeout: 'TIMEOUT',
  model_not_found: 'UNKNOWN_MODEL',
};

function readError(text: string): { type: string; message: string } {
  try {
    const body = JSON.parse(text) as { detail?: { error_type?: unknown }; message?: unknown };
    const type = typeof body.detail?.error_type === 'string' ? body.detail.error_type : '';
    return { type, message: typeof body.message === 'string' ? body.message : text.slice(0, 300) };
  } catch {
    return { type: '', message: text.slice(0, 300) };
  }
}

/** Characters per token of the gateway's own check: a lower bound, so the worker's exact count decides. */
const LOWER_BOUND_CHARS_PER_TOKEN = 16;

function lowerBound(text: string | null): number {
  return text ? Math.ceil(text.length / LOWER_BOUND_CHARS_PER_TOKEN) : 0;
}

export function createWorkerClient(options: WorkerClientOptions): DecisionEngine & { queueLimit: () => number } {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base);
  const headers = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' };
  let model: WorkerModel | undefined;

  async function call(method: 'GET' | 'POST', path: string, body?: string, signal?: AbortSignal) {
    const res = await options.dispatcher.request({
      origin: origin.origin,
      path: `${origin.pathname.replace(/\/+$/, '')}${path}`,
      method,
      headers,
      body,
      signal,
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async function load(): Promise<void> {
    const res = await call('GET', WORKER_MODEL_PATH, undefined, AbortSignal.timeout(5000));
    if (res.status !== 200) {
      const { message } = readError(res.text);
      throw new Error(`worker ${origin.host} answered ${res.status} to ${WORKER_MODEL_PATH}: ${message}`);
    }
    model = WorkerModel.parse(JSON.parse(res.text));
  }

  /** A refusal of the worker as the gateway's own error (503s keep their meaning and retry-after). */
  function refusal(res: Awaited<ReturnType<typeof call>>): Error {
    const { type, message } = readError(res.text);
    const code = PASSED_THROUGH[type];
    const retryAfter = Number(res.headers['retry-after']) || 1;
    if (code) return fail(code, message, code === 'MAX_TOKENS' ? {} : { retryAfter });
    if (res.status === 400 || res.status === 422) return fail('BAD_REQUEST', message);
    if (res.status === 401 || res.status === 403) {
      return new Error(`worker ${origin.host} refused this gateway's BRIER_WORKER_TOKEN (${res.status})`);
    }
    return new Error(`worker ${origin.host} answered ${res.status}: ${message}`);
  }

  async function featuresCall(body: unknown, signal?: AbortSignal) {
    const res = await call('POST', WORKER_FEATURES_PATH, JSON.stringify(body), signal);
    if (res.status !== 200) throw refusal(res);
    return WorkerFeatures.parse(JSON.parse(res.text));
  }

  /** The worker's state features, read over the internal protocol (present when its engine has them). */
  function features(): EngineFeatures | undefined {
    const f = model?.features;
    if (!f) return undefined;
    return {
      id: f.id,
      dim: f.dim,
      ...(f.prefix ? { prefix: f.prefix } : {}),
      async state(request: DecisionRequest, signal?: AbortSignal, dims?: number) {
        const out = await featuresCall(dims === undefined ? { request } : { request, dims }, signal);
        if (!('state' in out)) throw new Error(`worker ${origin.host} answered no state features`);
        return decodeVector(out.state, f.dim);
      },
      ...(f.options
        ? {
            async options(question: DecisionQuestion, signal?: AbortSignal) {
              const out = await featuresCall({ question }, signal);
              if (!('options' in out)) throw new Error(`worker ${origin.host} answered no option features`);
              return out.options.map((v) => (v === null ? null : decodeVector(v, f.dim)));
            },
          }
        : {}),
    };
  }

  async function answer(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    const res = await call('POST', WORKER_ANSWER_PATH, JSON.stringify({ request }), signal);
    if (res.status === 200) return WorkerAnswer.parse(JSON.parse(res.text));
    throw refusal(res);
  }

  const info: ModelInfo = {
    id: 'brier-worker',
    description: `Answers come from the worker at ${origin.host}.`,
    releaseDate: '',
  };
  return {
    get info() {
      return model?.info ?? info;
    },
    get limits(): EngineLimits {
      return model?.limits ?? { contextTokens: 1, inputTokens: 1 };
    },
    get parallelism() {
      return model?.parallelism ?? 1;
    },
    queueLimit: () => model?.queueLimit ?? 1,
    get features() {
      return features();
    },
    /** The worker's calibration (undefined where its training calibrates it, or before load). */
    get calibration() {
      return model?.calibration ?? undefined;
    },
    load,
    ready: () => model !== undefined,
    async countTokens(request: DecisionRequest): Promise<TokenCounts> {
      return {
        state: lowerBound(request.state.text),
        questions: request.questions.map(
          (q) =>
            lowerBound(q.instructions) +
            q.options.reduce((n, o) => n + lowerBound(o.label) + lowerBound(o.description), 0),
        ),
      };
    },
    answer,
    close: async () => {
      model = undefined;
    },
  };
}

/** GET /healthz on a worker (or the probe path of another server): true on a 2xx within the timeout. */
export async function probeHealth(dispatcher: Dispatcher, url: string, timeoutMs: number, token?: string) {
  const u = new URL(url);
  try {
    const res = await dispatcher.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: 'GET',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300;
  } catch {
    return false;
  }
}
