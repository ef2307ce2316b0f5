/**
 * The embedded engine with its state features exposed for adapters (EngineFeatures): the same
 * engine (src/engines/embedded/index.ts), built over encoders whose recent outputs are kept for a
 * moment, so that the state embeddings an adapter's probe reads right after the engine has answered
 * cost no second encoding. The features are both encoders' state embeddings side by side,
 * [USE-lite 512 | MiniLM 384], each computed exactly as the engine computes its own (requestTexts,
 * then the windowed, pooled embedding; MiniLM in its own windows, MINILM_WINDOW) and each a unit
 * vector; a choice question's option texts likewise, for the probe's label prior (see labelFeatures).
 */
import { LRUCache } from 'lru-cache';
import { type DecisionEngine, type EngineFeatures, type FeaturePrefix, MAX_CHARS_PER_TOKEN } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { readArtifactFiles } from './artifacts.ts';
import { createEmbedder, type Embedder } from './embedder.ts';
import {
  createEmbeddedEngine,
  DEFAULT_MODEL_DIR,
  EMBEDDED_LIMITS,
  type EmbeddedEngineOptions,
  ownEncoders,
} from './index.ts';
import { createMiniLmTokenizer, MINILM_DIM, MINILM_WINDOW, type MiniLm } from './minilm.ts';
import { EMBEDDING_DIM, type TextEncoder } from './pool.ts';
import { questionTexts, requestTexts } from './texts.ts';
import { createEncoderTokenizer } from './tokenizer.ts';

const MAX_STATE_CHARS = EMBEDDED_LIMITS.inputTokens * MAX_CHARS_PER_TOKEN;

/**
 * The adapters' feature space: an adapter fitted on another (brier-lite 4.1's adapters read
 * `use-lite-512`, USE-lite alone) is not served by this engine (src/systemone/adapters.ts) and has
 * to be refit.
 */
export const FEATURES_ID = `use-lite-${EMBEDDING_DIM}+minilm-${MINILM_DIM}`;
export const FEATURES_DIM = EMBEDDING_DIM + MINILM_DIM;
/**
 * USE-lite's part alone: a head reading only it (fitted where MiniLM's part did not measurably help,
 * src/training/adapter-fit.ts) is served without a MiniLM encoding.
 */
export const FEATURES_PREFIX: FeaturePrefix = { dim: EMBEDDING_DIM, name: 'USE-lite' };

/** [use | mini], each scaled to a unit vector (a missing one, or one of norm 0, is zeros). */
export function joinFeatures(use: ArrayLike<number> | null, mini: ArrayLike<number> | null): Float32Array {
  const out = new Float32Array(FEATURES_DIM);
  const put = (v: ArrayLike<number> | null, at: number, dim: number) => {
    if (!v) return;
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += (v[i] ?? 0) * (v[i] ?? 0);
    if (!(norm > 0)) return;
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dim; i++) out[at + i] = (v[i] ?? 0) * inv;
  };
  put(use, 0, EMBEDDING_DIM);
  put(mini, EMBEDDING_DIM, MINILM_DIM);
  return out;
}

/**
 * An encoder that remembers its last outputs for a short while (texts are window-sized pieces), and
 * encodes a text asked again while its first encoding runs only once: the state features may be asked
 * while the engine is still encoding the same state.
 */
export function rememberingEncoder(inner: TextEncoder, entries = 4096, ttlMs = 60_000): TextEncoder {
  const recent = new LRUCache<string, Float32Array>({ max: entries, ttl: ttlMs });
  const running = new Map<string, Promise<Map<string, Float32Array>>>();
  const dim = inner.dim ?? EMBEDDING_DIM;
  return {
    dim,
    async embed(texts) {
      const missing = [...new Set(texts.filter((t) => !recent.has(t) && !running.has(t)))];
      if (missing.length > 0) {
        const run = inner.embed(missing).then((vectors) => {
          const out = new Map<string, Float32Array>();
          missing.forEach((t, i) => {
            const v = vectors[i];
            if (v) {
              recent.set(t, v);
              out.set(t, v);
            }
          });
          return out;
        });
        const settled = run.finally(() => {
          for (const t of missing) if (running.get(t) === run) running.delete(t);
        });
        settled.catch(() => {});
        for (const t of missing) running.set(t, run);
      }
      const found = new Map<string, Float32Array>();
      for (const t of texts) {
        const v = recent.get(t);
        if (v) found.set(t, v);
      }
      const waits = [...new Set(texts.filter((t) => !found.has(t)).map((t) => running.get(t)))];
      for (const got of await Promise.all(waits)) for (const [t, v] of got ?? []) found.set(t, v);
      return texts.map((t) => found.get(t) ?? new Float32Array(dim));
    },
    close: () => inner.close(),
  };
}

/** An encoder created by its first call (as the engine's own start with its load), closed if created. */
function lazyEncoder(create: () => TextEncoder, dim: number): TextEncoder {
  let inner: TextEncoder | null = null;
  return {
    dim,
    embed(texts) {
      inner ??= create();
      return inner.embed(texts);
    },
    async close() {
      const e = inner;
      inner = null;
      if (e) await e.close();
    },
  };
}

export function createFeaturizedEmbeddedEngine(options: EmbeddedEngineOptions = {}): DecisionEngine {
  const modelDir = options.modelDir ?? DEFAULT_MODEL_DIR;
  const given = options.encoder;
  const givenMini = options.miniLm;
  // the engine's own encoders (both in one pool where neither is given), made at the first encoding
  const own = ownEncoders(options, true);
  const encoder = rememberingEncoder(given ?? lazyEncoder(own.use, EMBEDDING_DIM));
  // The engine's second encoder, given to it (it reads MiniLM for its zero-shot families): the state
  // embedding it computes for a topic or polarity question is then the one the features read.
  const miniLm: MiniLm = {
    tokenizer: givenMini?.tokenizer ?? createMiniLmTokenizer(),
    encoder: rememberingEncoder(givenMini?.encoder ?? lazyEncoder(own.minilm, MINILM_DIM)),
  };
  const engine = createEmbeddedEngine({ ...options, modelDir, encoder, miniLm });
  let embedders: { use: Embedder; mini: Embedder } | null = null;

  function stateEmbedders() {
    if (!embedders) {
      const window = readArtifactFiles(modelDir).weights.window;
      embedders = {
        use: createEmbedder({ encoder, tokenizer: createEncoderTokenizer(), window, cacheEntries: 2000 }),
        mini: createEmbedder({
          encoder: miniLm.encoder,
          tokenizer: miniLm.tokenizer,
          window: MINILM_WINDOW,
          cacheEntries: 2000,
        }),
      };
    }
    return embedders;
  }

  /**
   * Each text's joined features (both encoders at once: their workers run side by side); `withMini`
   * false: USE-lite's alone, MiniLM's part zeros (no MiniLM encoding).
   */
  async function featuresOf(texts: readonly string[], withMini = true): Promise<Map<string, Float32Array>> {
    const e = stateEmbedders();
    const [use, mini] = await Promise.all([e.use.embedMany(texts), withMini ? e.mini.embedMany(texts) : null]);
    return new Map(texts.map((t) => [t, joinFeatures(use.get(t) ?? null, mini?.get(t) ?? null)]));
  }

  const features: EngineFeatures = {
    id: FEATURES_ID,
    dim: FEATURES_DIM,
    prefix: FEATURES_PREFIX,
    async state(request: DecisionRequest, signal?: AbortSignal, dims = FEATURES_DIM) {
      signal?.throwIfAborted();
      const text = requestTexts(request, MAX_STATE_CHARS).state;
      return (await featuresOf([text], dims > EMBEDDING_DIM)).get(text) ?? new Float32Array(FEATURES_DIM);
    },
    async options(question: DecisionQuestion, signal?: AbortSignal) {
      signal?.throwIfAborted();
      // The option texts the engine itself embeds (`name: description`), the state left out.
      const texts = questionTexts(question, '', null).options;
      const vectors = await featuresOf(texts.filter((t): t is string => Boolean(t)));
      return texts.map((t) => (t ? (vectors.get(t) ?? null) : null));
    },
  };

  return {
    info: engine.info,
    limits: engine.limits,
    parallelism: engine.parallelism,
    features,
    attachMetrics: (m) => engine.attachMetrics?.(m),
    load: () => engine.load(),
    ready: () => engine.ready(),
    countTokens: (r) => engine.countTokens(r),
    answer: (r, s) => engine.answer(r, s),
    async close() {
      await engine.close();
      // the engine closes neither (they were given to it); a caller's own encoders stay open
      if (!given) await encoder.close();
      if (!givenMini) await miniLm.encoder.close();
    },
  };
}
