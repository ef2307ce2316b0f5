/**
 * The upstream System One engine: forwards each request to another System One server (another
 * Brier, or a hosted Jev endpoint) and reads its answers back as distributions. For scale-out and
 * for putting Brier's keys, metering and limits in front of a stronger model elsewhere.
 *
 * What is lost in transit: the upstream rounds probabilities to 2 decimals, so distributions come
 * back at that precision (renormalised). Token counts for the limits are estimated locally
 * (~4 characters a token, rounded up); the upstream enforces its own exact limits and its 4xx
 * messages are passed through.
 */

import { fail } from '../../lib/errors.ts';
import type { DecisionEngine, EngineAnswer, EngineLimits, TokenCounts } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest, Json } from '../request.ts';

export interface UpstreamEngineOptions {
  /** Base URL of the upstream server, without /v1 (e.g. http://10.0.0.5:8080). */
  baseUrl: string;
  apiKey: string | undefined;
  /** The upstream model to ask for; default its brier-latest / jev-latest alias. */
  model?: string;
  fetch?: typeof fetch;
}

const CHARS_PER_TOKEN = 4;

/**
 * Local token estimate for upstream engines, which have no tokenizer here: ~4 characters a token,
 * rounded up. The upstream enforces its own exact limits.
 */
export const estimateTokens = (text: string | null): number => (text ? Math.ceil(text.length / CHARS_PER_TOKEN) : 0);

function questionTokens(q: DecisionQuestion): number {
  return (
    estimateTokens(q.instructions) +
    q.options.reduce((n, o) => n + 1 + estimateTokens(o.label) + estimateTokens(o.description), 0)
  );
}

/**
 * The human message in an upstream's error body: System One's `{message}`, the OpenAI-style
 * `{error: {message}}` (vLLM, SGLang, llama.cpp server) or `{error: "..."}`, else the text itself.
 */
function upstreamMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
    if (typeof parsed.error === 'string' && parsed.error) return parsed.error;
    const nested = parsed.error as { message?: unknown } | null | undefined;
    if (typeof nested === 'object' && nested !== null && typeof nested.message === 'string') return nested.message;
  } catch {}
  return text.slice(0, 500);
}

/**
 * The error for an upstream's non-2xx answer, shared by the upstream engines: 400/422 pass through
 * as BAD_REQUEST (the caller's request was refused), 429/503 become OVERLOADED with the upstream's
 * retry-after (1 s when it gives none), anything else a plain error (500 to the caller).
 */
export function upstreamFailure(res: Response, text: string): Error {
  const message = upstreamMessage(text);
  if (res.status === 400 || res.status === 422) return fail('BAD_REQUEST', `upstream refused the request: ${message}`);
  if (res.status === 503 || res.status === 429) {
    return fail('OVERLOADED', `upstream is busy: ${message}`, {
      retryAfter: Number(res.headers.get('retry-after')) || 1,
    });
  }
  return new Error(`upstream answered ${res.status}: ${message}`);
}

/** The engine request back in wire form (ids are positional: q0, q1, ...). */
function toWire(q: DecisionQuestion): Record<string, Json> {
  switch (q.type) {
    case 'noul':
      return {
        type: 'noul',
        instructions: q.instructions,
        criteria: { false: q.options[0]?.description ?? null, true: q.options[1]?.description ?? null },
      };
    case 'choice':
      return {
        type: 'choice',
        instructions: q.instructions,
        criteria: Object.fromEntries(q.options.map((o) => [o.label, o.description])),
      };
    case 'score':
      return { type: 'score', instructions: q.instructions, criteria: q.options.map((o) => o.description ?? o.label) };
  }
}

interface UpstreamAnswer {
  type: string;
  noul?: number;
  probabilities?: Record<string, number>;
}

function toDistribution(q: DecisionQuestion, a: UpstreamAnswer | undefined): number[] {
  if (!a || a.type !== q.type) throw new Error(`upstream answered ${a?.type ?? 'nothing'} to a ${q.type} question`);
  if (q.type === 'noul') {
    const p = Math.min(1, Math.max(0, Number(a.noul)));
    return [1 - p, p];
  }
  const probs = a.probabilities ?? {};
  const raw = q.options.map((o, i) => Math.max(0, Number(probs[q.type === 'choice' ? o.label : String(i)] ?? 0)));
  const sum = raw.reduce((x, y) => x + y, 0);
  return sum > 0 ? raw.map((x) => x / sum) : raw.map(() => 1 / raw.length);
}

export function createUpstreamEngine(options: UpstreamEngineOptions): DecisionEngine {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const headers = {
    'content-type': 'application/json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };
  const info = {
    id: 'brier-upstream-3.0.0',
    description: `Answers come from the upstream System One server at ${new URL(base).host}.`,
    releaseDate: '2026-11-22',
  };
  let limits: EngineLimits = { contextTokens: 32_768, inputTokens: 8_192 };
  let loaded = false;

  async function load(): Promise<void> {
    const res = await doFetch(`${base}/v1/models`, { headers });
    if (!res.ok)
      throw new Error(`upstream ${base}/v1/models answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const body = (await res.json()) as {
      models?: Array<{
        id?: string;
        name?: string;
        description?: string;
        context_limit?: number;
        input_limit?: number;
      }>;
    };
    const m =
      body.models?.find((x) => !options.model || x.id === options.model || x.name === options.model) ??
      body.models?.[0];
    if (!m) throw new Error(`upstream ${base} lists no models`);
    info.description =
      `Answers come from ${m.id ?? m.name ?? 'the model'} on the upstream System One server at ${new URL(base).host}. ${m.description ?? ''}`.trim();
    if (m.context_limit && m.input_limit) limits = { contextTokens: m.context_limit, inputTokens: m.input_limit };
    loaded = true;
  }

  async function countTokens(request: DecisionRequest): Promise<TokenCounts> {
    return { state: estimateTokens(request.state.text), questions: request.questions.map(questionTokens) };
  }

  async function answer(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    const questions = Object.fromEntries(request.questions.map((q, i) => [`q${i}`, toWire(q)]));
    const res = await doFetch(`${base}/v1/systemone`, {
      method: 'POST',
      headers,
      signal,
      body: JSON.stringify({ model: options.model, state: request.state.json ?? request.state.text, questions }),
    });
    const text = await res.text();
    if (!res.ok) throw upstreamFailure(res, text);
    const body = JSON.parse(text) as {
      answers?: Record<string, UpstreamAnswer>;
      usage?: { input_tokens?: number; output_tokens?: number };
    };
    return {
      probabilities: request.questions.map((q, i) => toDistribution(q, body.answers?.[`q${i}`])),
      inputTokens: body.usage?.input_tokens ?? 0,
      outputTokens: body.usage?.output_tokens ?? 0,
    };
  }

  return {
    info,
    get limits() {
      return limits;
    },
    load,
    ready: () => loaded,
    countTokens,
    answer,
    close: async () => {
      loaded = false;
    },
  };
}
