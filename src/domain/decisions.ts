import { type DecisionEngine, type EngineLimits, MAX_CHARS_PER_TOKEN, type TokenCounts } from '../engines/engine.ts';
import type { Scheduler } from '../engines/scheduler.ts';
import { clip } from '../lib/json-bounds.ts';
import { fail } from './errors.ts';
import type { DecisionQuestion, DecisionRequest } from './questions.ts';
import {
  MODEL_ALIASES,
  toDecisionRequest,
  toWireAnswer,
  type WireAnswer,
  type WireQuestion,
  type WireState,
} from './systemone.ts';

export interface DecideInput {
  model?: string | undefined;
  state: WireState;
  questions: Record<string, WireQuestion>;
}

export interface DecideOutput {
  model: string;
  answers: Record<string, WireAnswer>;
  usage: { input_tokens: number; output_tokens: number };
}

function questionChars(q: DecisionQuestion): number {
  let n = q.instructions?.length ?? 0;
  for (const o of q.options) n += o.label.length + (o.description?.length ?? 0);
  return n;
}

/**
 * The cheap bound: texts longer than the token limits times MAX_CHARS_PER_TOKEN are refused
 * before a tokenizer reads them, so an oversized state costs a length check, not a tokenization.
 */
export function checkCharacters(request: DecisionRequest, ids: string[], limits: EngineLimits): void {
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
    const at = ids[perQuestion.indexOf(longest)] ?? '';
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
export function checkTokens(counts: TokenCounts, ids: string[], limits: EngineLimits): void {
  const { contextTokens, inputTokens } = limits;
  const total = counts.state + counts.questions.reduce((a, b) => a + b, 0);
  const longest = Math.max(...counts.questions);
  const longestAt = counts.questions.indexOf(longest);
  if (counts.state + longest > inputTokens) {
    throw fail(
      'MAX_TOKENS',
      `state plus question ${JSON.stringify(clip(ids[longestAt] ?? '', 64))} is ${counts.state + longest} tokens, limit ${inputTokens} (the model's input_limit)`,
    );
  }
  if (total > contextTokens) {
    throw fail(
      'MAX_TOKENS',
      `state plus all questions is ${total} tokens, limit ${contextTokens} (the model's context_limit)`,
    );
  }
}

/**
 * Requests with more characters than this are tokenized one at a time, in their own queue: a count
 * this long holds the main thread for about 10 ms (USE-lite's tokenizer reads ~1.2 µs a character).
 */
export const HEAVY_COUNT_CHARS = 8192;

function requestChars(request: DecisionRequest): number {
  return request.state.text.length + request.questions.reduce((n, q) => n + questionChars(q), 0);
}

/**
 * The serving logic of POST /v1/systemone: resolve the model, enforce its token limits,
 * queue on the engine's scheduler, and shape the answers. `counting` is the queue of long token
 * counts (concurrency 1): a request with a long state waits there, so that sixteen near-limit states
 * arriving at once delay a small request by one count, not sixteen; without it, counts run inline.
 */
export function createDecisionService(engine: DecisionEngine, scheduler: Scheduler, counting?: Scheduler) {
  async function countTokens(request: DecisionRequest, signal?: AbortSignal): Promise<TokenCounts> {
    if (!counting || requestChars(request) <= HEAVY_COUNT_CHARS) return engine.countTokens(request);
    return counting.run(async (s) => {
      // Let the event loop answer what arrived while this request waited (health checks, small requests).
      await new Promise((resolve) => setImmediate(resolve));
      s.throwIfAborted();
      return engine.countTokens(request);
    }, signal);
  }

  function resolveModel(requested: string | undefined): string {
    const id = engine.info.id;
    if (requested === undefined || requested === id || (MODEL_ALIASES as readonly string[]).includes(requested))
      return id;
    throw fail(
      'UNKNOWN_MODEL',
      `model ${JSON.stringify(clip(requested, 128))} is not served here; use brier-latest or ${id}`,
    );
  }

  async function decide(input: DecideInput, signal?: AbortSignal): Promise<DecideOutput> {
    const model = resolveModel(input.model);
    if (!engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    const ids = Object.keys(input.questions);
    const wire = ids.map((id) => input.questions[id] as WireQuestion);
    const request = toDecisionRequest(input.state, wire);

    // Tokenizing is main-thread work: only on texts the character bound has already capped, and the
    // long ones one at a time in their own bounded queue.
    checkCharacters(request, ids, engine.limits);
    checkTokens(await countTokens(request, signal), ids, engine.limits);
    const result = await scheduler.run((s) => engine.answer(request, s), signal);
    const answers: Record<string, WireAnswer> = {};
    ids.forEach((id, i) => {
      answers[id] = toWireAnswer(wire[i] as WireQuestion, result.probabilities[i] ?? []);
    });
    return { model, answers, usage: { input_tokens: result.inputTokens, output_tokens: result.outputTokens } };
  }

  return { decide, resolveModel };
}

export type DecisionService = ReturnType<typeof createDecisionService>;
