/**
 * Serving System One, free of HTTP: one validated request in, the wire response and what it consumed
 * out. Both POST /v1/systemone and the console playground call `serve`.
 */
import type { EngineHost } from '../engines/host.ts';
import { fail } from '../lib/errors.ts';
import { clip } from '../lib/json-bounds.ts';
import { toWireAnswer } from './answers.ts';
import { MODEL_ALIASES } from './models.ts';
import { toDecisionRequest } from './normalize.ts';
import type { SystemOneRequest, SystemOneResponse, WireAnswer, WireQuestion } from './protocol.ts';

/** What one answered request consumed of the model, as usage metering records it. */
export interface Consumption {
  model: string;
  questions: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Brier's response header naming the abstained question ids: each percent-encoded (a lone surrogate
 * as U+FFFD), comma-separated,
 * up to ABSTAINED_HEADER_MAX characters; `*` when they do not all fit (the answers' `abstained`
 * flags then say which). Absent when no answer abstained.
 */
export const ABSTAINED_HEADER = 'x-brier-abstained';
export const ABSTAINED_HEADER_MAX = 2048;

/** The value of ABSTAINED_HEADER for a response, or undefined when no answer abstained. */
export function abstainedHeader(response: SystemOneResponse): string | undefined {
  const ids = Object.entries(response.answers).flatMap(([id, a]) =>
    a.abstained ? [encodeURIComponent(id.replace(/\p{Cs}/gu, '\uFFFD'))] : [],
  );
  if (ids.length === 0) return undefined;
  const value = ids.join(',');
  return value.length <= ABSTAINED_HEADER_MAX ? value : '*';
}

export function createSystemOne(host: EngineHost) {
  const { engine } = host;

  function resolveModel(requested: string | undefined): string {
    const id = engine.info.id;
    if (requested === undefined || requested === id || (MODEL_ALIASES as readonly string[]).includes(requested))
      return id;
    throw fail(
      'UNKNOWN_MODEL',
      `model ${JSON.stringify(clip(requested, 128))} is not served here; use brier-latest or ${id}`,
    );
  }

  /** Resolves the model, asks the engine's host, and shapes the answers. */
  async function serve(
    body: SystemOneRequest,
    signal?: AbortSignal,
  ): Promise<{ response: SystemOneResponse; consumed: Consumption }> {
    const model = resolveModel(body.model);
    const ids = Object.keys(body.questions);
    const wire = ids.map((id) => body.questions[id] as WireQuestion);
    const result = await host.answer(toDecisionRequest(body.state, wire), ids, signal);
    const answers: Record<string, WireAnswer> = {};
    ids.forEach((id, i) => {
      answers[id] = toWireAnswer(wire[i] as WireQuestion, result.probabilities[i] ?? []);
    });
    const usage = { input_tokens: result.inputTokens, output_tokens: result.outputTokens };
    return {
      response: { model, answers, usage },
      consumed: { model, questions: ids.length, inputTokens: usage.input_tokens, outputTokens: usage.output_tokens },
    };
  }

  return { serve, resolveModel };
}

export type SystemOne = ReturnType<typeof createSystemOne>;
