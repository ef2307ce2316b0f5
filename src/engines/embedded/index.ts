/**
 * brier-lite: the embedded default decision engine. Runs anywhere Node runs: no download, no GPU.
 * USE-lite (onnxruntime, converted from its TF.js graph) embeds the state, the instructions and the options in worker threads; a
 * small head trained by src/training (models/brier-lite) turns them into calibrated
 * probabilities. See models/brier-lite/MODEL_CARD.md for what it can and cannot do.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DecisionEngine,
  type EngineAnswer,
  type EngineLimits,
  type EngineMetrics,
  MAX_CHARS_PER_TOKEN,
  type ModelInfo,
  type TokenCounts,
} from '../engine.ts';
import type { DecisionRequest } from '../request.ts';
import { linkQuestions, reconcile } from './coherence.ts';
import { createEmbedder, type Embedder } from './embedder.ts';
import type { UseRuntime } from './encoder-worker.ts';
import { buildInput, stateFacts, type VectorLookup, ZERO_VECTOR } from './features.ts';
import { createMiniLm, createMiniLmTokenizer, MINILM_WINDOW, type MiniLm } from './minilm.ts';
import { loadModel, type Model, predict } from './model.ts';
import { createEncoderPool, createSharedEncoderPool, type SharedEncoderPool, type TextEncoder } from './pool.ts';
import { skillOf } from './skill.ts';
import { miniTexts, requestTexts, textsToEmbed } from './texts.ts';
import { createEncoderTokenizer, type EncoderTokenizer } from './tokenizer.ts';

export const EMBEDDED_MODEL_ID = 'brier-lite-4.2.0';
export const EMBEDDED_MODEL_ALIAS = 'brier-latest';

/**
 * Limits, in USE-lite tokens (counted with the encoder's own tokenizer). The state is never
 * truncated: past 120 tokens it is embedded in balanced windows of at most 120, spread over both
 * workers and pooled. 4,096 tokens of state + longest question admit a 255-option question with
 * short descriptions, and bound a cold state to a few seconds on two cores (measured: 1.9 s for
 * 3,352 tokens, 28 windows); 16,384 context tokens bound a request with many such questions.
 * Question texts are cached, so repeated schemas cost only their state.
 */
export const EMBEDDED_LIMITS: EngineLimits = { contextTokens: 16_384, inputTokens: 4_096 };
/** A JSON state renders to `path: value` lines; longer than this it cannot be within input_limit. */
const MAX_STATE_CHARS = EMBEDDED_LIMITS.inputTokens * MAX_CHARS_PER_TOKEN;

export const DEFAULT_MODEL_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'models',
  'brier-lite',
);

export interface EmbeddedEngineOptions {
  /** Folder holding weights.json and calibration.json. Default: models/brier-lite of this repo. */
  modelDir?: string;
  /** Encoder worker threads (one core each). Default 2. */
  threads?: number;
  /**
   * USE-lite's runtime in those workers (encoder-worker.ts): 'onnx' (default: use-onnx.ts, int8
   * products, what the shipped model was fitted on), 'onnx-float32' or 'tfjs' (float32, for comparisons).
   */
  encoderRuntime?: UseRuntime | undefined;
  /** Short-lived embedding cache: entries (default 20,000, ~40 MiB) and time to live (default 10 min). */
  cacheEntries?: number;
  cacheTtlMs?: number;
  /** A ready encoder to use instead of the worker pool (tests). Closed by close() only if created here. */
  encoder?: TextEncoder;
  /** Cache and batch metrics (optional; attachMetrics sets it later too). */
  metrics?: EngineMetrics;
  /**
   * Requests answered at once (the scheduler's concurrency). Above 1, the texts of concurrent
   * requests are encoded in shared encoder calls. Default 4.
   */
  parallelism?: number;
  /** Micro-batching window of the embedder, ms (default 0: merge calls of the same event-loop turn). */
  batchWindowMs?: number;
  /**
   * The second encoder (MiniLM) to use instead of models/all-MiniLM-L6-v2 (tests). Used only by models
   * with a zero-shot part (zeroshot.json); closed by close() only if created here.
   */
  miniLm?: MiniLm;
  /**
   * MiniLM in this thread with this many onnxruntime threads, instead of the default: one MiniLM
   * per encoder worker thread (`threads`), which keeps its inference off the server's event loop
   * (onnxruntime-node runs a session synchronously on the calling thread).
   */
  miniLmThreads?: number;
}

/**
 * The encoders an engine makes for what `options` does not give it: USE-lite and (`withMiniLm`)
 * MiniLM in one pool whose worker threads, one per core, each hold both; MiniLM in this thread where
 * `miniLmThreads` says so; a pool of its own for the one not given where the other is. Each is made
 * when asked (the featurized engine asks at the first encoding).
 */
export function ownEncoders(
  options: EmbeddedEngineOptions,
  withMiniLm: boolean,
): { use(): TextEncoder; minilm(): TextEncoder } {
  const threads = options.threads ?? 2;
  const runtime = options.encoderRuntime;
  const share = withMiniLm && !options.encoder && !options.miniLm && options.miniLmThreads === undefined;
  let shared: SharedEncoderPool | null = null;
  const pool = (): SharedEncoderPool => {
    shared ??= createSharedEncoderPool({ threads, runtime, models: ['use', 'minilm'] });
    return shared;
  };
  return {
    use: () => (share ? pool().encoder('use') : createEncoderPool({ threads, runtime })),
    minilm: () =>
      options.miniLmThreads !== undefined
        ? createMiniLm({ threads: options.miniLmThreads }).encoder
        : share
          ? pool().encoder('minilm')
          : createEncoderPool({ threads, model: 'minilm' }),
  };
}

export function createEmbeddedEngine(options: EmbeddedEngineOptions = {}): DecisionEngine {
  const info: ModelInfo = {
    id: EMBEDDED_MODEL_ID,
    description:
      'Embedded default: USE-lite and MiniLM-L6 sentence embeddings + a small calibrated decision head. No download, no GPU. ' +
      'Strong on tasks like its training sets; reads topic, spam, sentiment and sentence-pair yes/no questions and topic choices zero-shot ' +
      '(negated wordings as the complement); abstains (uniform, x_abstained) on other unseen yes/no and score questions.',
    releaseDate: '2026-11-28',
  };
  let model: Model | null = null;
  let tokenizer: EncoderTokenizer | null = null;
  let encoder: TextEncoder | null = null;
  let embedder: Embedder | null = null;
  /** The second encoder's embedder, for models with a zero-shot part. */
  let miniEmbedder: Embedder | null = null;
  let miniLm: MiniLm | null = null;
  let loading: Promise<void> | null = null;
  /** True once the encoder has answered its warm-up call (model, workers and WASM all loaded). */
  let warm = false;
  let closed = false;
  let metrics: EngineMetrics | undefined = options.metrics;

  function tok(): EncoderTokenizer {
    tokenizer ??= createEncoderTokenizer();
    return tokenizer;
  }

  async function load(): Promise<void> {
    if (closed) throw new Error('engine is closed');
    loading ??= (async () => {
      const loaded = loadModel(options.modelDir ?? DEFAULT_MODEL_DIR);
      model = loaded;
      const own = ownEncoders(options, loaded.zeroShot !== null);
      encoder = options.encoder ?? own.use();
      if (loaded.zeroShot) {
        miniLm = options.miniLm ?? { encoder: own.minilm(), tokenizer: createMiniLmTokenizer() };
        miniEmbedder = createEmbedder({
          encoder: miniLm.encoder,
          tokenizer: miniLm.tokenizer,
          cacheEntries: options.cacheEntries,
          cacheTtlMs: options.cacheTtlMs,
          window: MINILM_WINDOW,
          batchWindowMs: options.batchWindowMs,
        });
      }
      embedder = createEmbedder({
        encoder,
        tokenizer: tok(),
        cacheEntries: options.cacheEntries,
        cacheTtlMs: options.cacheTtlMs,
        window: model.window,
        metrics: () => metrics,
        batchWindowMs: options.batchWindowMs,
      });
      await Promise.all([encoder.embed(['warm up']), miniLm?.encoder.embed(['warm up'])]);
      warm = true;
    })();
    loading.catch(() => {
      loading = null;
    });
    return loading;
  }

  /** A request's counts, asked by the host before answering and by answer() for usage: counted once. */
  const counted = new WeakMap<DecisionRequest, TokenCounts>();
  function counts(request: DecisionRequest): TokenCounts {
    let c = counted.get(request);
    if (!c) {
      c = countOf(request);
      counted.set(request, c);
    }
    return c;
  }

  function countOf(request: DecisionRequest): TokenCounts {
    const t = tok();
    const rt = requestTexts(request, MAX_STATE_CHARS);
    return {
      state: t.count(rt.state),
      questions: rt.questions.map((q) => {
        const own = new Set<string>();
        if (q.instruction) own.add(q.instruction);
        for (const o of q.options) if (o) own.add(o);
        let n = 0;
        for (const text of own) n += t.count(text);
        return n;
      }),
    };
  }

  return {
    info,
    limits: EMBEDDED_LIMITS,
    parallelism: options.parallelism ?? 4,
    attachMetrics(m) {
      metrics = m;
    },
    load,
    ready: () => warm && model !== null && embedder !== null && !closed,
    async countTokens(request) {
      return counts(request);
    },
    async answer(request, signal) {
      signal.throwIfAborted();
      if (!model || !embedder) await load();
      const m = model;
      const e = embedder;
      if (!m || !e) throw new Error('engine is not loaded');
      const zeroShot = m.zeroShot !== null;
      const rt = requestTexts(request, MAX_STATE_CHARS, zeroShot);
      const aborted = new Promise<never>((_, reject) => {
        const onAbort = (): void => reject(signal.reason);
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => {});
      const mini = miniEmbedder;
      // brier-lite 4.1: a question whose kind has no measured skill is answered uniform, so the second
      // encoder reads nothing for it (its frame is a short text, usually cached: asked first)
      const skill = m.skill;
      const frames = skill
        ? await Promise.race([e.embedMany(rt.questions.map((q) => q.frame).filter((f) => f !== '')), aborted])
        : null;
      const read =
        skill && frames
          ? rt.questions.map((q) => skillOf(skill, q.type, frames.get(q.frame) ?? null) >= skill.floor)
          : undefined;
      // the frames are not asked again (an embedder without a cache would encode them twice)
      const rest = frames ? textsToEmbed(rt).filter((t) => !frames.has(t)) : textsToEmbed(rt);
      const [own, miniVectors] = await Promise.race([
        Promise.all([e.embedMany(rest), mini ? mini.embedMany(miniTexts(rt, read)) : null]),
        aborted,
      ]);
      const vectors: VectorLookup = frames ? { get: (t) => own.get(t) ?? frames.get(t) } : own;
      signal.throwIfAborted();
      const stateVec = vectors.get(rt.state) ?? ZERO_VECTOR;
      const facts = stateFacts(rt);
      const second = miniVectors ? { state: miniVectors.get(rt.state) ?? null, vectors: miniVectors } : undefined;
      const answered = rt.questions.map(
        (q) => predict(buildInput(q, stateVec, vectors, facts, m.polarity, second), m).probabilities,
      );
      // brier-lite 4: a yes/no question naming an option of another question agrees with it
      const probabilities = zeroShot ? reconcile(linkQuestions(request.questions), answered) : answered;
      const c = counts(request);
      const answer: EngineAnswer = {
        probabilities,
        inputTokens: c.state + c.questions.reduce((a, b) => a + b, 0),
        outputTokens: 0,
      };
      return answer;
    },
    async close() {
      if (closed) return;
      closed = true;
      warm = false;
      model = null;
      if (encoder && !options.encoder) await encoder.close();
      if (miniLm && !options.miniLm) await miniLm.encoder.close();
      encoder = null;
      embedder = null;
      miniLm = null;
      miniEmbedder = null;
    },
  };
}
