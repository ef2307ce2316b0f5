/**
 * The GGUF engine: a llama.cpp model (node-llama-cpp, prebuilt CPU binaries only) answering decision
 * questions from next-token logits, without generating text.
 *
 * Per request: the state prompt is tokenized and evaluated once; its KV cache stays in the one
 * context sequence. Each question's prompt (plus the labels' shared lead, see labels.ts) is then
 * evaluated on top of that prefix in one forward pass, its option labels scored, and the sequence
 * rewound to the prefix length for the next question. The state stays cached after the request, so
 * a following request with the same state skips its evaluation. Calls are serialized on one promise
 * chain: one context, one sequence.
 */
import { basename } from 'node:path';
import type {
  ControlledEvaluateInputItem,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
  Token,
} from 'node-llama-cpp';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import type { DecisionQuestion, DecisionRequest, DecisionState } from '../../domain/questions.ts';
import type { DecisionEngine, EngineAnswer, EngineLimits, ModelInfo, TokenCounts } from '../engine.ts';
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
  sequence: LlamaContextSequence;
  /** Tokens of ANSWER_CUE alone, to find a label's tokens in answer position. */
  cueTokens: Token[];
  /** Label plans by question shape (type, option count, natural labels). */
  plans: Map<string, LabelPlan<Token>>;
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
}

const MAX_PLAN_CACHE = 1024;

/** Builds a GGUF decision engine. Nothing is read from disk until load(). */
export function createGgufEngine(options: GgufEngineOptions): DecisionEngine {
  const temperature = options.temperature ?? 1;
  const contextSize = options.contextSize ?? 4096;
  const threads = options.threads ?? 2;
  const reusePrefix = options.reusePrefix ?? true;
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

  let loading: Promise<Loaded> | null = null;
  let loaded: Loaded | null = null;
  let tail: Promise<unknown> = Promise.resolve();

  /** Runs tasks one after another, whatever the previous one's outcome. */
  function enqueue<R>(task: () => Promise<R>): Promise<R> {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  }

  async function open(): Promise<Loaded> {
    const ownsLlama = options.llama === undefined;
    const llama =
      options.llama ??
      (await getLlama({
        gpu: false,
        build: 'never',
        usePrebuiltBinaries: true,
        skipDownload: true,
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        maxThreads: threads,
      }));
    try {
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const context = await model.createContext({
        contextSize,
        threads,
        sequences: 1,
        // Full KV cache for sliding-window models, so the state prefix can be kept and rewound to.
        swaFullCache: true,
        // Without flash attention llama.cpp's CPU results do not depend on how tokens are split into
        // batches: a question scored on the cached state gives bit-identical numbers to a full
        // recompute (measured: 0 difference; with it, logits moved by up to 1e-2). Costs ~30% speed
        // on long prompts of tiny models.
        flashAttention: false,
      });
      const sequence = context.getSequence();
      const cueTokens = model.tokenize(ANSWER_CUE, false, 'trimLeadingSpace');
      return { llama, ownsLlama, model, context, sequence, cueTokens, plans: new Map() };
    } catch (error) {
      if (ownsLlama) await llama.dispose();
      throw error;
    }
  }

  function requireLoaded(): Loaded {
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
    };
  }

  /**
   * Evaluates `tokens` on the sequence as it stands and returns each option's log-score (label
   * log-probability at the temperature, up to a constant shared by all options).
   */
  async function scoreOptions(m: Loaded, tokens: Token[], plan: QuestionPlan, signal: AbortSignal): Promise<number[]> {
    const scores = new Array<number>(plan.options).fill(Number.NEGATIVE_INFINITY);
    const last = tokens.length - 1;
    const lastToken = tokens[last];
    if (lastToken === undefined) throw new Error('empty question prompt');
    const input: ControlledEvaluateInputItem[] = tokens.slice(0, last);
    input.push([lastToken, { generateNext: { logits: { filter: { tokens: plan.trie.map((n) => n.token) } } } }]);
    const output = await m.sequence.controlledEvaluate(input);
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
        const start = m.sequence.nextTokenIndex;
        const [step] = await m.sequence.controlledEvaluate([[node.token, { generateNext: { logits: true } }]]);
        const full = step?.next.logits;
        if (full === undefined) throw new Error('the model returned no logits');
        const next = logSumExp(Array.from(full.values(), (v) => v / temperature));
        await visit(node.children, full, score, next);
        await m.sequence.eraseContextTokenRanges([{ start, end: m.sequence.nextTokenIndex }]);
      }
    }
    await visit(plan.trie, rootLogits, 0, 0);
    return scores;
  }

  /** Leaves exactly `prefix` in the sequence, evaluating it unless it is already cached. */
  async function holdPrefix(sequence: LlamaContextSequence, prefix: Token[]): Promise<void> {
    const cached = sequence.contextTokens;
    if (startsWith(cached, prefix)) {
      await rewind(sequence, prefix.length);
      return;
    }
    await sequence.clearHistory();
    await sequence.evaluateWithoutGeneratingNewTokens(prefix);
    if (sequence.needsCheckpoints) await sequence.takeCheckpoint();
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

    const probabilities: number[][] = [];
    if (reusePrefix) await holdPrefix(m.sequence, prefix);
    for (const plan of plans) {
      signal.throwIfAborted();
      let scores: number[];
      if (reusePrefix) {
        await rewind(m.sequence, prefix.length);
        scores = await scoreOptions(m, plan.tokens, plan, signal);
      } else {
        await m.sequence.clearHistory();
        scores = await scoreOptions(m, [...prefix, ...plan.tokens], plan, signal);
      }
      probabilities.push(softmax(scores));
    }
    if (reusePrefix) await rewind(m.sequence, prefix.length);
    return {
      probabilities,
      inputTokens: prefix.length + plans.reduce((sum, p) => sum + p.tokens.length, 0),
      outputTokens: plans.reduce((sum, p) => sum + p.scoredTokens, 0),
    };
  }

  return {
    info,
    limits,
    async load() {
      if (loading === null) {
        const attempt = open();
        loading = attempt;
        // Registered before anyone awaits `loading`, so `loaded` is set when load() resolves.
        attempt.then(
          (m) => {
            if (loading === attempt) loaded = m;
          },
          () => {
            if (loading === attempt) loading = null;
          },
        );
      }
      await loading;
    },
    ready: () => loaded !== null,
    async countTokens(request) {
      const m = requireLoaded();
      return {
        state: stateTokens(m, request.state).length,
        questions: request.questions.map((q) => questionPlan(m, q).tokens.length),
      } satisfies TokenCounts;
    },
    answer(request, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      const work = enqueue(() => run(request, signal));
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
      const pending = loading;
      loading = null;
      loaded = null;
      if (pending === null) return;
      await enqueue(async () => {
        const m = await pending.catch(() => null);
        if (m === null) return;
        await m.context.dispose();
        await m.model.dispose();
        if (m.ownsLlama) await m.llama.dispose();
      });
    },
  };
}
