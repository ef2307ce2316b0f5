/**
 * The GGUF engine: a llama.cpp model (node-llama-cpp, prebuilt CPU binaries only) answering decision
 * questions from next-token logits, without generating text.
 *
 * Per request: the state prompt is tokenized and evaluated once into one context sequence (a
 * "slot"). Each question's prompt (plus the labels' shared lead, see labels.ts) is then evaluated on
 * top of that prefix in one forward pass, its option labels scored, and the sequence rewound to the
 * prefix length for the next question.
 *
 * One context holds several sequences: a prefix cache and parallel lanes at once. Each slot keeps
 * the KV cache of the last state it evaluated, keyed by the SHA-256 of the state's tokens and
 * checked token by token before reuse (a slot never serves another state's prefix). A request takes
 * the slot already holding its state (a hit: no prefill), waits when that slot is busy (concurrent
 * requests on one state evaluate it once), or else takes the least recently used idle slot. The slot
 * count comes from a memory budget (kvCacheBytes / KV bytes of one sequence), at least
 * `parallelism`; requests on different slots run concurrently and node-llama-cpp evaluates their
 * tokens in shared batches.
 *
 * Answers are cached too, per question: scoring is deterministic (flash attention off), so a
 * question asked again on the same state gets the same numbers without touching the model. The key
 * is the SHA-256 of the state's tokens, the question's tokens and its label tokens; a request whose
 * questions are all cached takes no slot at all. A state asked new questions still saves its
 * prefill through the slot's KV cache.
 *
 * By concern: this file loads the model and runs a request; slots.ts is the slot pool, scoring.ts
 * the prompts and label scores, answer-cache.ts the cache keys, llama.ts the CPU binary.
 */
import { basename } from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import type { DecisionEngine, EngineAnswer, EngineLimits, EngineMetrics, ModelInfo, TokenCounts } from '../engine.ts';
import { createLoadOnce } from '../load-once.ts';
import type { DecisionRequest } from '../request.ts';
import { answerKey, prefixKey } from './answer-cache.ts';
import { createFrame, type PromptFormat } from './frames.ts';
import { softmax, startsWith } from './labels.ts';
import { loadCpuLlama } from './llama.ts';
import { createScorer, type Scorer } from './scoring.ts';
import { createSlotPool, type Slot, slotCount } from './slots.ts';

export const GGUF_ENGINE_ID = 'brier-gguf-3.0.0';
export const GGUF_ENGINE_RELEASE_DATE = '2026-11-22';
/** Tokens of the context kept free of request text: room for multi-token labels' inner tokens. */
export const CONTEXT_MARGIN = 32;

export interface GgufEngineOptions {
  /** Path of the .gguf file. */
  modelPath: string;
  /**
   * How prompts are framed (frames.ts): `plain` text (default; any base or instruct model), or `chat`,
   * the same words as one user turn in the model's chat template, the label read as the reply's start.
   */
  promptFormat?: PromptFormat;
  /** Softmax temperature applied to the label logits (per model). Default 1. */
  temperature?: number;
  /** Context window in tokens (state + one question + label tokens must fit). Default 4096. */
  contextSize?: number;
  /**
   * CPU threads for evaluation. Default 2 (the dev machine has 2 shared cores). Keep it at or below
   * the cores that are really free: ggml's threads spin-wait, and on an oversubscribed machine 2
   * threads were measured 50x slower than 1 on a tiny model.
   */
  threads?: number;
  /** Versioned model id. Default GGUF_ENGINE_ID (brier-gguf-3.0.0). */
  id?: string;
  description?: string;
  /** YYYY-MM-DD. Default GGUF_ENGINE_RELEASE_DATE. */
  releaseDate?: string;
  /**
   * Keep the state's KV cache and evaluate each question on top of it (default true). When false,
   * every question is evaluated from an empty sequence on the full prompt: slower, for checks only.
   */
  reusePrefix?: boolean;
  /**
   * Requests answered at once, each on its own sequence of the one context (their tokens are
   * evaluated in shared batches). Default 1: on 2 CPU cores, 2 gave the same throughput with a
   * lower median but a higher p95 (bench:latency, gguf-parallelism), so one at a time is the
   * predictable default; the prefix cache keeps several states either way.
   */
  parallelism?: number;
  /**
   * Memory for cached state prefixes (the KV cache of all sequences), bytes. Slots =
   * max(parallelism, floor(kvCacheBytes / one sequence's KV bytes)), at most 16. Default 256 MiB.
   */
  kvCacheBytes?: number;
  /** Sequences, overriding the budget (tests). */
  sequences?: number;
  /**
   * Questions whose option scores are kept, keyed by state, question and label tokens (LRU).
   * Default 4096 (a few MiB at most); 0 disables the answer cache.
   */
  answerCacheEntries?: number;
  /** Prefix cache hits/misses, batch sizes, prefill tokens/s (optional; attachMetrics sets it too). */
  metrics?: EngineMetrics;
  /**
   * A node-llama-cpp instance to use (and not dispose). Default: the prebuilt CPU binary from npm,
   * never downloaded or built, logging errors only.
   */
  llama?: Llama;
}

interface Loaded {
  llama: Llama;
  ownsLlama: boolean;
  model: LlamaModel;
  context: LlamaContext;
  slots: Slot[];
  scorer: Scorer;
}

/** Builds a GGUF decision engine. Nothing is read from disk until load(). */
export function createGgufEngine(options: GgufEngineOptions): DecisionEngine {
  const temperature = options.temperature ?? 1;
  const contextSize = options.contextSize ?? 4096;
  const threads = options.threads ?? 2;
  const reusePrefix = options.reusePrefix ?? true;
  const parallelism = options.parallelism ?? 1;
  const promptFormat = options.promptFormat ?? 'plain';
  let metrics: EngineMetrics | undefined = options.metrics;
  const answerEntries = options.answerCacheEntries ?? 4096;
  if (!Number.isInteger(answerEntries) || answerEntries < 0) {
    throw new RangeError('answerCacheEntries must be a non-negative integer');
  }
  const answers = answerEntries > 0 ? new LRUCache<string, number[]>({ max: answerEntries }) : null;
  if (!Number.isInteger(parallelism) || parallelism < 1) throw new RangeError('parallelism must be a positive integer');
  if (!(Number.isFinite(temperature) && temperature > 0)) throw new RangeError('temperature must be a positive number');
  if (!Number.isInteger(contextSize) || contextSize < 4 * CONTEXT_MARGIN) {
    throw new RangeError(`contextSize must be an integer of at least ${4 * CONTEXT_MARGIN}`);
  }
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError('threads must be a positive integer');

  const info: ModelInfo = {
    id: options.id ?? GGUF_ENGINE_ID,
    description:
      options.description ??
      `${basename(options.modelPath)} on llama.cpp, scored from next-token logits${promptFormat === 'chat' ? ' in its chat template' : ''}`,
    releaseDate: options.releaseDate ?? GGUF_ENGINE_RELEASE_DATE,
  };
  // Questions are evaluated one at a time on the cached state, so the window bounds the state plus
  // the longest question; the request total is held to the same bound.
  const limits: EngineLimits = {
    contextTokens: contextSize - CONTEXT_MARGIN,
    inputTokens: contextSize - CONTEXT_MARGIN,
  };

  const state = createLoadOnce(open);
  const pool = createSlotPool(parallelism);

  async function open(): Promise<Loaded> {
    const ownsLlama = options.llama === undefined;
    const llama = options.llama ?? (await loadCpuLlama(threads));
    try {
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const sequences = await slotCount(model, {
        contextSize,
        parallelism,
        kvCacheBytes: options.kvCacheBytes,
        sequences: options.sequences,
      });
      const context = await model.createContext({
        contextSize,
        threads,
        sequences,
        // Full KV cache for sliding-window models, so the state prefix can be kept and rewound to.
        swaFullCache: true,
        // Without flash attention llama.cpp's CPU results do not depend on how tokens are split into
        // batches: a question scored on the cached state gives bit-identical numbers to a full
        // recompute (measured: 0 difference; with it, logits moved by up to 1e-2). Costs ~30% speed
        // on long prompts of tiny models.
        flashAttention: false,
      });
      const slots = Array.from({ length: sequences }, () => ({
        sequence: context.getSequence(),
        key: null,
        busy: false,
        lastUsed: 0,
      }));
      const scorer = createScorer(createFrame(model, promptFormat), temperature, () => metrics);
      return { llama, ownsLlama, model, context, slots, scorer };
    } catch (error) {
      if (ownsLlama) await llama.dispose();
      throw error;
    }
  }

  function requireLoaded(): Loaded {
    const loaded = state.current();
    if (loaded === null) throw new Error(`engine ${info.id} is not loaded: call load() first`);
    return loaded;
  }

  async function run(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    signal.throwIfAborted();
    const m = requireLoaded();
    const { scorer } = m;
    const prefix = scorer.stateTokens(request.state);
    const plans = request.questions.map((q) => scorer.questionPlan(q));
    plans.forEach((plan, i) => {
      const needed = prefix.length + plan.tokens.length + plan.depth - 1;
      if (needed > contextSize) {
        throw new RangeError(
          `question ${i}: the state plus this question need ${needed} tokens, the context holds ${contextSize}`,
        );
      }
    });

    const key = reusePrefix ? prefixKey(prefix) : null;
    const inputTokens = prefix.length + plans.reduce((sum, p) => sum + p.tokens.length, 0);
    const outputTokens = plans.reduce((sum, p) => sum + p.scoredTokens, 0);
    metrics?.batch('gguf', 'questions', plans.length);
    // Cached answers first: the questions left are the only work, and none means no slot is taken.
    const keys = key !== null && answers !== null ? plans.map((plan) => answerKey(key, plan)) : null;
    const scores: (number[] | undefined)[] = plans.map((_, i) => (keys ? answers?.get(keys[i] as string) : undefined));
    const missing = plans.flatMap((plan, i) => (scores[i] === undefined ? [{ plan, i }] : []));
    if (keys !== null) {
      metrics?.cacheLookup('gguf_answer', true, plans.length - missing.length);
      metrics?.cacheLookup('gguf_answer', false, missing.length);
    }
    if (missing.length === 0) {
      return { probabilities: scores.map((s) => softmax(s as number[])), inputTokens, outputTokens };
    }

    const closed = () => (state.current() !== m ? new Error(`engine ${info.id} is closed`) : null);
    const slot = await pool.acquire(m.slots, key, signal, closed);
    const sequence = slot.sequence;
    try {
      signal.throwIfAborted();
      if (reusePrefix) {
        const hit = await scorer.holdPrefix(sequence, prefix);
        metrics?.cacheLookup('gguf_prefix', hit);
      }
      const started = performance.now();
      for (const { plan, i } of missing) {
        signal.throwIfAborted();
        if (reusePrefix) {
          await scorer.rewind(sequence, prefix.length);
          scores[i] = await scorer.scoreOptions(sequence, plan.tokens, plan, signal);
        } else {
          await sequence.clearHistory();
          scores[i] = await scorer.scoreOptions(sequence, [...prefix, ...plan.tokens], plan, signal);
        }
        if (keys !== null) answers?.set(keys[i] as string, scores[i] as number[]);
      }
      const questionTokens = missing.reduce((sum, { plan }) => sum + plan.tokens.length, 0);
      metrics?.tokens('gguf', 'question', questionTokens, (performance.now() - started) / 1000);
      if (reusePrefix) await scorer.rewind(sequence, prefix.length);
      return { probabilities: scores.map((s) => softmax(s as number[])), inputTokens, outputTokens };
    } finally {
      // Keep the key only if the sequence really holds this prefix (an abort may have cut it short).
      if (key === null || !startsWith(sequence.contextTokens, prefix)) slot.key = null;
      pool.release(slot);
    }
  }

  return {
    info,
    limits,
    parallelism,
    attachMetrics(hook) {
      metrics = hook;
    },
    load: state.load,
    ready: () => state.current() !== null,
    async countTokens(request) {
      const { scorer } = requireLoaded();
      return {
        state: scorer.stateTokens(request.state).length,
        questions: request.questions.map((q) => scorer.questionPlan(q).tokens.length),
      } satisfies TokenCounts;
    },
    answer(request, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      const work = run(request, signal);
      // Reject as soon as the signal aborts; the work itself stops at its next check.
      return new Promise<EngineAnswer>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        work.then(
          (value) => {
            signal.removeEventListener('abort', onAbort);
            resolve(value);
          },
          (error: unknown) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        );
      });
    },
    async close() {
      const { pending, loaded: m } = state.reset();
      if (pending === null) return;
      const opened = m ?? (await pending.catch(() => null));
      if (opened === null) return;
      // Let running requests finish (they cannot start new work: the engine is no longer loaded);
      // requests still waiting for a slot then wake up, see that the engine is closed, and reject.
      await pool.drain(opened.slots);
      await opened.context.dispose();
      await opened.model.dispose();
      if (opened.ownsLlama) await opened.llama.dispose();
    },
  };
}
