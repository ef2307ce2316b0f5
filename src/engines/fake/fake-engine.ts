import { createHash } from 'node:crypto';
import type { DecisionEngine, EngineLimits } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';

export interface FakeEngineOptions {
  limits?: EngineLimits;
  /** Milliseconds each answer takes (honouring the abort signal), for queue and timeout tests. */
  delayMs?: number;
  id?: string;
}

/** Words, as this engine's tokenizer counts them. */
function words(text: string | null): number {
  return text ? text.split(/\s+/).filter(Boolean).length : 0;
}

/** words() of a state: countTokens and answer both count the same one, so the last is remembered. */
function stateWords(text: string | null): number {
  if (text !== lastState) {
    lastState = text;
    lastStateWords = words(text);
  }
  return lastStateWords;
}
let lastState: string | null = null;
let lastStateWords = 0;

function questionTokens(q: DecisionQuestion): number {
  return words(q.instructions) + q.options.reduce((n, o) => n + 1 + words(o.description), 0);
}

/**
 * A deterministic, zero-cost engine for route tests and gateway benchmarks: each distribution is
 * a softmax of hash-derived logits of the state and question, so equal requests get equal answers.
 * A question whose instructions start with `abstain:` gets the uniform answer (abstention tests).
 */
export function createFakeEngine(options: FakeEngineOptions = {}): DecisionEngine {
  const limits = options.limits ?? { contextTokens: 8192, inputTokens: 4096 };
  let loaded = false;
  return {
    info: {
      id: options.id ?? 'brier-fake-3.0.0',
      description: 'Deterministic test engine: hash-derived probabilities, no model. For tests and benchmarks only.',
      releaseDate: '2026-11-22',
    },
    limits,
    async load() {
      loaded = true;
    },
    ready: () => loaded,
    async countTokens(request: DecisionRequest) {
      return { state: stateWords(request.state.text), questions: request.questions.map(questionTokens) };
    },
    async answer(request: DecisionRequest, signal: AbortSignal) {
      if (options.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, options.delayMs);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(t);
              reject(signal.reason);
            },
            { once: true },
          );
        });
      }
      signal.throwIfAborted();
      // The state's part of every option's hash, hashed once and copied per option.
      const stateHash = createHash('sha256').update(`${request.state.text}\u0000`);
      const probabilities = request.questions.map((q) => {
        // Tests of abstention: instructions starting with "abstain:" get the uniform answer.
        if (q.instructions?.startsWith('abstain:')) return q.options.map(() => 1 / q.options.length);
        const logits = q.options.map((o) => {
          const h = stateHash.copy().update(`${q.instructions}\u0000${o.label}\u0000${o.description}`).digest();
          return (h.readUInt32BE(0) / 0xffffffff) * 4 - 2;
        });
        const max = Math.max(...logits);
        const e = logits.map((l) => Math.exp(l - max));
        const sum = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / sum);
      });
      const state = stateWords(request.state.text);
      const qs = request.questions.map(questionTokens);
      return {
        probabilities,
        inputTokens: state + qs.reduce((a, b) => a + b, 0),
        outputTokens: request.questions.reduce((n, q) => n + q.options.length, 0),
      };
    },
    async close() {
      loaded = false;
    },
  };
}
