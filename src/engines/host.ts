/**
 * The one owner of a loaded engine: it holds the model, its bounded queue and its token limits, and
 * every request for the model goes through it (llama.cpp server's "one inference owner fed by a
 * queue"). Callers hand it a request; the host refuses what is over the limits, counts tokens
 * without stalling the event loop, and runs the answer in its turn.
 */
import { fail } from '../lib/errors.ts';
import { clip } from '../lib/json-bounds.ts';
import {
  type DecisionEngine,
  type EngineAnswer,
  type EngineLimits,
  MAX_CHARS_PER_TOKEN,
  type TokenCounts,
} from './engine.ts';
import type { DecisionQuestion, DecisionRequest } from './request.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';

/**
 * Requests with more characters than this are tokenized one at a time, in their own queue: a count
 * this long holds the main thread for about 10 ms (USE-lite's tokenizer reads ~1.2 µs a character).
 */
export const HEAVY_COUNT_CHARS = 8192;

function questionChars(q: DecisionQuestion): number {
  let n = q.instructions?.length ?? 0;
  for (const o of q.options) n += o.label.length + (o.description?.length ?? 0);
  return n;
}

function requestChars(request: DecisionRequest): number {
  return request.state.text.length + request.questions.reduce((n, q) => n + questionChars(q), 0);
}

/**
 * The cheap bound: texts longer than the token limits times MAX_CHARS_PER_TOKEN are refused
 * before a tokenizer reads them, so an oversized state costs a length check, not a tokenization.
 * `names` name the questions in messages (the caller's ids).
 */
export function checkCharacters(request: DecisionRequest, names: string[], limits: EngineLimits): void {
  const state = request.state.text.length;
  const perQuestion = request.questions.map(questionChars);
  const longest = Math.max(0, ...perQuestion);
  const inputChars = limits.inputTokens * MAX_CHARS_PER_TOKEN;
  const contextChars = limits.contextTokens * MAX_CHARS_PER_TOKEN;
  const why = (limit: number, tokens: number, name: string) =>
    `limit ${limit} characters (${MAX_CHARS_PER_TOKEN} per token of the model's ${name} of ${tokens} tokens)`;
  if (state > inputChars) {
    throw fail('MAX_TOKENS', `state is ${state} characters, ${why(inputChars, limits.inputTokens, 'input_limit')}`);
  }
  if (state + longest > inputChars) {
    const at = names[perQuestion.indexOf(longest)] ?? '';
    throw fail(
      'MAX_TOKENS',
      `state plus question ${JSON.stringify(clip(at, 64))} is ${state + longest} characters, ${why(inputChars, limits.inputTokens, 'input_limit')}`,
    );
  }
  const total = state + perQuestion.reduce((a, b) => a + b, 0);
  if (total > contextChars) {
    throw fail(
      'MAX_TOKENS',
      `state plus all questions is ${total} characters, ${why(contextChars, limits.contextTokens, 'context_limit')}`,
    );
  }
}

/** The exact bound, on the engine's own token counts. */
export function checkTokens(counts: TokenCounts, names: string[], limits: EngineLimits): void {
  const { contextTokens, inputTokens } = limits;
  const total = counts.state + counts.questions.reduce((a, b) => a + b, 0);
  const longest = Math.max(...counts.questions);
  const longestAt = counts.questions.indexOf(longest);
  if (counts.state + longest > inputTokens) {
    throw fail(
      'MAX_TOKENS',
      `state plus question ${JSON.stringify(clip(names[longestAt] ?? '', 64))} is ${counts.state + longest} tokens, limit ${inputTokens} (the model's input_limit)`,
    );
  }
  if (total > contextTokens) {
    throw fail(
      'MAX_TOKENS',
      `state plus all questions is ${total} tokens, limit ${contextTokens} (the model's context_limit)`,
    );
  }
}

export interface EngineHostOptions {
  /** Most requests waiting or running at once (BRIER_QUEUE_LIMIT). */
  queueLimit: number;
  /** Per-request deadline (BRIER_REQUEST_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * Long token counts wait in a queue of their own, one at a time (default true): sixteen near-limit
   * states arriving at once then delay a small request by one count, not sixteen. False: inline.
   */
  countingQueue?: boolean;
}

export function createEngineHost(engine: DecisionEngine, options: EngineHostOptions) {
  const scheduler = createScheduler({
    limit: options.queueLimit,
    timeoutMs: options.timeoutMs,
    concurrency: engine.parallelism ?? 1,
  });
  const counting: Scheduler | undefined =
    options.countingQueue === false
      ? undefined
      : createScheduler({ limit: options.queueLimit, timeoutMs: options.timeoutMs, concurrency: 1 });

  async function countTokens(request: DecisionRequest, signal?: AbortSignal): Promise<TokenCounts> {
    if (!counting || requestChars(request) <= HEAVY_COUNT_CHARS) return engine.countTokens(request);
    return counting.run(async (s) => {
      // Let the event loop answer what arrived while this request waited (health checks, small requests).
      await new Promise((resolve) => setImmediate(resolve));
      s.throwIfAborted();
      return engine.countTokens(request);
    }, signal);
  }

  /**
   * Answers `request` within the model's limits, in its turn. `names` name its questions in error
   * messages. Refuses with NOT_READY while the model loads, MAX_TOKENS over the limits, OVERLOADED
   * or TIMEOUT from the queue.
   */
  async function answer(request: DecisionRequest, names: string[], signal?: AbortSignal): Promise<EngineAnswer> {
    if (!engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    lastLive = Date.now();
    try {
      // Tokenizing is main-thread work: only on texts the character bound has already capped, and the
      // long ones one at a time in their own bounded queue.
      checkCharacters(request, names, engine.limits);
      // Refused under overload before its tokens are counted (main-thread work the engine's cores need).
      scheduler.admit();
      checkTokens(await countTokens(request, signal), names, engine.limits);
      return await scheduler.run((s) => engine.answer(request, s), signal);
    } finally {
      lastLive = Date.now();
    }
  }

  let lastLive = 0;

  /**
   * Answers for background work (training jobs reading examples): the same readiness and limits, but
   * outside the live queue, so that it neither fills the queue nor counts as live traffic (the job
   * yields to live traffic itself: idleMs). Concurrent calls reach the engine together, as a batch.
   */
  async function background(request: DecisionRequest, names: string[], signal: AbortSignal): Promise<EngineAnswer> {
    if (!engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    checkCharacters(request, names, engine.limits);
    checkTokens(await engine.countTokens(request), names, engine.limits);
    return engine.answer(request, signal);
  }

  /** Milliseconds since a live request last started or ended (0 while one is waiting or running). */
  function idleMs(): number {
    if (scheduler.running() > 0 || scheduler.depth() > 0) return 0;
    return Date.now() - lastLive;
  }

  return { engine, scheduler, answer, background, idleMs };
}

export type EngineHost = ReturnType<typeof createEngineHost>;
