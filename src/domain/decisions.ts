import type { DecisionEngine } from '../engines/engine.ts';
import type { Scheduler } from '../engines/scheduler.ts';
import { fail } from './errors.ts';
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

/**
 * The serving logic of POST /v1/systemone: resolve the model, enforce its token limits,
 * queue on the engine's scheduler, and shape the answers.
 */
export function createDecisionService(engine: DecisionEngine, scheduler: Scheduler) {
  function resolveModel(requested: string | undefined): string {
    const id = engine.info.id;
    if (requested === undefined || requested === id || (MODEL_ALIASES as readonly string[]).includes(requested))
      return id;
    throw fail('UNKNOWN_MODEL', `model ${JSON.stringify(requested)} is not served here; use brier-latest or ${id}`);
  }

  async function decide(input: DecideInput, signal?: AbortSignal): Promise<DecideOutput> {
    const model = resolveModel(input.model);
    if (!engine.ready()) throw fail('NOT_READY', 'the model is still loading; retry shortly', { retryAfter: 2 });
    const ids = Object.keys(input.questions);
    const wire = ids.map((id) => input.questions[id] as WireQuestion);
    const request = toDecisionRequest(input.state, wire);

    const counts = await engine.countTokens(request);
    const { contextTokens, inputTokens } = engine.limits;
    const total = counts.state + counts.questions.reduce((a, b) => a + b, 0);
    const longest = Math.max(...counts.questions);
    const longestAt = counts.questions.indexOf(longest);
    if (counts.state + longest > inputTokens) {
      throw fail(
        'MAX_TOKENS',
        `state plus question ${JSON.stringify(ids[longestAt])} is ${counts.state + longest} tokens, limit ${inputTokens} (the model's input_limit)`,
      );
    }
    if (total > contextTokens) {
      throw fail(
        'MAX_TOKENS',
        `state plus all questions is ${total} tokens, limit ${contextTokens} (the model's context_limit)`,
      );
    }

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
