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
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { LRUCache } from 'lru-cache';
import type {
  ControlledEvaluateInputItem,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
  Token,
} from 'node-llama-cpp';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import type { DecisionEngine, EngineAnswer, EngineLimits, EngineMetrics, ModelInfo, TokenCounts } from '../engine.ts';
import { createLoadOnce } from '../load-once.ts';
import type { DecisionQuestion, DecisionRequest, DecisionState } from '../request.ts';
import type { LabelPlan, TrieNode } from './labels.ts';
import { buildTrie, logSumExp, planLabels, softmax, startsWith } from './labels.ts';
import { ANSWER_CUE, naturalLabels, renderQuestionPrompt, renderStatePrompt } from './prompt.ts';

export const GGUF_ENGINE_ID = 'brier-gguf-3.0.0';
export const GGUF_ENGINE_RELEASE_DATE = '2026-11-22';
/** Tokens of the context kept free of request text: room for multi-token labels' inner tokens. */
export const CONTEXT_MARGIN = 32;

export interface GgufEngineOptions {
  /** Path of the .gguf file. */
  modelPath: string;
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
  /** Tokens of ANSWER_CUE alone, to find a label's tokens in answer position. */
  cueTokens: Token[];
  /** Label plans by question shape (type, option count, natural labels). */
  plans: Map<string, LabelPlan<Token>>;
}

/** One context sequence: a parallel lane and one cached state prefix. */
interface Slot {
  sequence: LlamaContextSequence;
  /** SHA-256 of the prefix tokens it holds (or is evaluating); null: nothing reusable. */
  key: string | null;
  busy: boolean;
  lastUsed: number;
}

const MAX_SLOTS = 16;
const DEFAULT_KV_CACHE_BYTES = 256 * 2 ** 20;

function prefixKey(tokens: readonly Token[]): string {
  return createHash('sha256')
    .update(new Uint32Array(tokens as readonly number[]))
    .digest('hex');
}

/** The answer-cache key of one question on one state: everything its scores depend on. */
function answerKey(statePrefixKey: string, plan: QuestionPlan): string {
  const hash = createHash('sha256')
    .update(statePrefixKey)
    .update(new Uint32Array(plan.tokens as readonly number[]));
  // Token ids are below 2^32 - 1, so the separator cannot be mistaken for a token.
  for (const label of plan.labels) hash.update(new Uint32Array([0xffffffff, ...(label as readonly number[])]));
  return hash.digest('hex');
}

interface QuestionPlan {
  /** The question prompt's tokens, then the labels' shared lead. */
  tokens: Token[];
  trie: TrieNode<Token>[];
  options: number;
  /** Label tokens scored, summed over options. */
  scoredTokens: number;
  /** Longest label (tokens after the lead). */
  depth: number;
  /** Each option's label tokens after the lead, in option order. */
  labels: readonly (readonly Token[])[];
}

const MAX_PLAN_CACHE = 1024;

/** node-llama-cpp's prebuilt CPU binary from npm: never downloaded or built, logging errors only. */
export function loadCpuLlama(threads: number): Promise<Llama> {
  return getLlama({
    gpu: false,
    build: 'never',
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    maxThreads: threads,
  });
}

/** Builds a GGUF decision engine. Nothing is read from disk until load(). */
export function createGgufEngine(options: GgufEngineOptions): DecisionEngine {
  const temperature = options.temperature ?? 1;
  const contextSize = options.contextSize ?? 4096;
  const threads = options.threads ?? 2;
  const reusePrefix = options.reusePrefix ?? true;
  const parallelism = options.parallelism ?? 1;
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
    description: options.description ?? `${basename(options.modelPath)} on llama.cpp, scored from next-token logits`,
    releaseDate: options.releaseDate ?? GGUF_ENGINE_RELEASE_DATE,
  };
  // Questions are evaluated one at a time on the cached state, so the window bounds the state plus
  // the longest question; the request total is held to the same bound.
  const limits: EngineLimits = {
    contextTokens: contextSize - CONTEXT_MARGIN,
    inputTokens: contextSize - CONTEXT_MARGIN,
  };

  const state = createLoadOnce(open);
  /** Woken whenever a slot is released. */
  let waiters: (() => void)[] = [];
  let clock = 0;

  function release(slot: Slot): void {
    slot.busy = false;
    slot.lastUsed = ++clock;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  }

  /**
   * The slot for a state, once fewer than `parallelism` slots are busy: the one holding (or
   * evaluating) `key`, waiting while it is busy; else an empty or the least recently used idle slot.
   * `key` null: any idle slot.
   */
  async function acquire(m: Loaded, key: string | null, signal: AbortSignal): Promise<Slot> {
    for (;;) {
      signal.throwIfAborted();
      if (state.current() !== m) throw new Error(`engine ${info.id} is closed`);
      const owner = key === null ? undefined : m.slots.find((s) => s.key === key);
      let slot: Slot | undefined;
      if (m.slots.filter((s) => s.busy).length >= parallelism) slot = undefined;
      else if (owner) slot = owner.busy ? undefined : owner;
      else {
        for (const s of m.slots) {
          if (s.busy) continue;
          if (
            slot === undefined ||
            (s.key === null && slot.key !== null) ||
            ((s.key !== null) === (slot.key !== null) && s.lastUsed < slot.lastUsed)
          )
            slot = s;
        }
      }
      if (slot) {
        // Claimed with its key at once, so a concurrent request for the same state finds it busy.
        slot.busy = true;
        slot.key = key;
        return slot;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  async function slotsFor(model: LlamaModel): Promise<number> {
    if (options.sequences !== undefined) return Math.max(1, Math.min(MAX_SLOTS, options.sequences));
    const budget = options.kvCacheBytes ?? DEFAULT_KV_CACHE_BYTES;
    const estimate = (sequences: number) =>
      model.fileInsights
        .estimateContextResourceRequirementsV2({
          contextSize,
          modelGpuLayers: 0,
          sequences,
          flashAttention: false,
          swaFullCache: true,
        })
        .then((r) => r.cpuRam);
    // The KV bytes of one more sequence (graph overheads cancel out).
    const perSequence = (await estimate(2)) - (await estimate(1));
    const fit = perSequence > 0 ? Math.floor(budget / perSequence) : parallelism;
    return Math.max(parallelism, Math.min(MAX_SLOTS, fit));
  }

  async function open(): Promise<Loaded> {
    const ownsLlama = options.llama === undefined;
    const llama = options.llama ?? (await loadCpuLlama(threads));
    try {
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const sequences = await slotsFor(model);
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
      const cueTokens = model.tokenize(ANSWER_CUE, false, 'trimLeadingSpace');
      return { llama, ownsLlama, model, context, slots, cueTokens, plans: new Map() };
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

  function stateTokens(m: Loaded, state: DecisionState): Token[] {
    const text = m.model.tokenize(renderStatePrompt(state), false);
    const bos = m.model.tokens.bos;
    return m.model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...text] : text;
  }

  function labelPlan(m: Loaded, question: DecisionQuestion): LabelPlan<Token> {
    const natural = naturalLabels(question);
    const key = `${question.type}\u0000${question.options.length}\u0000${natural?.join('\u0000') ?? ''}`;
    let plan = m.plans.get(key);
    if (plan === undefined) {
      plan = planLabels<Token>(question.options.length, natural, (label) => {
        const tokens = m.model.tokenize(`${ANSWER_CUE} ${label}`, false, 'trimLeadingSpace');
        return startsWith(tokens, m.cueTokens) ? tokens.slice(m.cueTokens.length) : null;
      });
      if (m.plans.size >= MAX_PLAN_CACHE) m.plans.clear();
      m.plans.set(key, plan);
    }
    return plan;
  }

  function questionPlan(m: Loaded, question: DecisionQuestion): QuestionPlan {
    const labels = labelPlan(m, question);
    const text = m.model.tokenize(renderQuestionPrompt(question, labels.labels), false, 'trimLeadingSpace');
    return {
      tokens: [...text, ...labels.lead],
      trie: buildTrie(labels.sequences),
      options: labels.sequences.length,
      scoredTokens: labels.sequences.reduce((sum, s) => sum + s.length, 0),
      depth: Math.max(...labels.sequences.map((s) => s.length)),
      labels: labels.sequences,
    };
  }

  /**
   * Evaluates `tokens` on the sequence as it stands and returns each option's log-score (label
   * log-probability at the temperature, up to a constant shared by all options).
   */
  async function scoreOptions(
    sequence: LlamaContextSequence,
    tokens: Token[],
    plan: QuestionPlan,
    signal: AbortSignal,
  ): Promise<number[]> {
    const scores = new Array<number>(plan.options).fill(Number.NEGATIVE_INFINITY);
    const last = tokens.length - 1;
    const lastToken = tokens[last];
    if (lastToken === undefined) throw new Error('empty question prompt');
    const input: ControlledEvaluateInputItem[] = tokens.slice(0, last);
    input.push([lastToken, { generateNext: { logits: { filter: { tokens: plan.trie.map((n) => n.token) } } } }]);
    const output = await sequence.controlledEvaluate(input);
    const rootLogits = output[last]?.next.logits;
    if (rootLogits === undefined) throw new Error('the model returned no logits');

    // Depth-first over the label trie; at the root the normalizer is shared by all options (0 here).
    async function visit(nodes: TrieNode<Token>[], logits: Map<Token, number>, acc: number, logZ: number) {
      for (const node of nodes) {
        const logit = logits.get(node.token);
        if (logit === undefined) throw new Error(`no logit for label token ${node.token}`);
        const score = acc + logit / temperature - logZ;
        if (node.option !== null) {
          scores[node.option] = score;
          continue;
        }
        signal.throwIfAborted();
        const start = sequence.nextTokenIndex;
        const [step] = await sequence.controlledEvaluate([[node.token, { generateNext: { logits: true } }]]);
        const full = step?.next.logits;
        if (full === undefined) throw new Error('the model returned no logits');
        const next = logSumExp(Array.from(full.values(), (v) => v / temperature));
        await visit(node.children, full, score, next);
        await sequence.eraseContextTokenRanges([{ start, end: sequence.nextTokenIndex }]);
      }
    }
    await visit(plan.trie, rootLogits, 0, 0);
    return scores;
  }

  /**
   * Leaves exactly `prefix` in the sequence, evaluating it unless it is already cached (compared
   * token by token, whatever the slot's key says). Returns whether it was cached.
   */
  async function holdPrefix(sequence: LlamaContextSequence, prefix: Token[]): Promise<boolean> {
    const cached = sequence.contextTokens;
    if (startsWith(cached, prefix)) {
      await rewind(sequence, prefix.length);
      return true;
    }
    await sequence.clearHistory();
    const started = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(prefix);
    metrics?.tokens('gguf', 'prefill', prefix.length, (performance.now() - started) / 1000);
    if (sequence.needsCheckpoints) await sequence.takeCheckpoint();
    return false;
  }

  async function rewind(sequence: LlamaContextSequence, length: number): Promise<void> {
    if (sequence.nextTokenIndex > length) {
      await sequence.eraseContextTokenRanges([{ start: length, end: sequence.nextTokenIndex }]);
    }
  }

  async function run(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer> {
    signal.throwIfAborted();
    const m = requireLoaded();
    const prefix = stateTokens(m, request.state);
    const plans = request.questions.map((q) => questionPlan(m, q));
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

    const slot = await acquire(m, key, signal);
    const sequence = slot.sequence;
    try {
      signal.throwIfAborted();
      if (reusePrefix) {
        const hit = await holdPrefix(sequence, prefix);
        metrics?.cacheLookup('gguf_prefix', hit);
      }
      const started = performance.now();
      for (const { plan, i } of missing) {
        signal.throwIfAborted();
        if (reusePrefix) {
          await rewind(sequence, prefix.length);
          scores[i] = await scoreOptions(sequence, plan.tokens, plan, signal);
        } else {
          await sequence.clearHistory();
          scores[i] = await scoreOptions(sequence, [...prefix, ...plan.tokens], plan, signal);
        }
        if (keys !== null) answers?.set(keys[i] as string, scores[i] as number[]);
      }
      const questionTokens = missing.reduce((sum, { plan }) => sum + plan.tokens.length, 0);
      metrics?.tokens('gguf', 'question', questionTokens, (performance.now() - started) / 1000);
      if (reusePrefix) await rewind(sequence, prefix.length);
      return { probabilities: scores.map((s) => softmax(s as number[])), inputTokens, outputTokens };
    } finally {
      // Keep the key only if the sequence really holds this prefix (an abort may have cut it short).
      if (key === null || !startsWith(sequence.contextTokens, prefix)) slot.key = null;
      release(slot);
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
      const m = requireLoaded();
      return {
        state: stateTokens(m, request.state).length,
        questions: request.questions.map((q) => questionPlan(m, q).tokens.length),
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
      // Let running requests finish (they cannot start new work: the engine is no longer loaded).
      while (opened.slots.some((s) => s.busy)) await new Promise<void>((resolve) => waiters.push(resolve));
      // Requests still waiting for a slot wake up, see that the engine is closed, and reject.
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
      await opened.context.dispose();
      await opened.model.dispose();
      if (opened.ownsLlama) await opened.llama.dispose();
    },
  };
}
