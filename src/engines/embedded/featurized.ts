/**
 * The embedded engine with its state features exposed for adapters (EngineFeatures): the same
 * engine (src/engines/embedded/index.ts), built over an encoder pool whose recent outputs are kept
 * for a moment, so that the state embedding an adapter's probe reads right after the engine has
 * answered costs no second encoding. The features are computed exactly as the engine computes its
 * own state vector (requestTexts, then the windowed, pooled embedding); a choice question's option
 * texts likewise, for the probe's label prior.
 */
import { LRUCache } from 'lru-cache';
import { type DecisionEngine, type EngineFeatures, MAX_CHARS_PER_TOKEN } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { readArtifactFiles } from './artifacts.ts';
import { createEmbedder, type Embedder, ENCODER_WINDOW } from './embedder.ts';
import { ZERO_VECTOR } from './features.ts';
import { createEmbeddedEngine, DEFAULT_MODEL_DIR, EMBEDDED_LIMITS, type EmbeddedEngineOptions } from './index.ts';
import { createEncoderPool, EMBEDDING_DIM, type TextEncoder } from './pool.ts';
import { questionTexts, requestTexts } from './texts.ts';
import { createEncoderTokenizer } from './tokenizer.ts';

const MAX_STATE_CHARS = EMBEDDED_LIMITS.inputTokens * MAX_CHARS_PER_TOKEN;

/** An encoder that remembers its last outputs for a short while (texts are window-sized pieces). */
export function rememberingEncoder(inner: TextEncoder, entries = 4096, ttlMs = 60_000): TextEncoder {
  const recent = new LRUCache<string, Float32Array>({ max: entries, ttl: ttlMs });
  return {
    async embed(texts) {
      const missing = [...new Set(texts.filter((t) => !recent.has(t)))];
      if (missing.length > 0) {
        const vectors = await inner.embed(missing);
        missing.forEach((t, i) => {
          const v = vectors[i];
          if (v) recent.set(t, v);
        });
      }
      return texts.map((t) => recent.get(t) ?? new Float32Array(EMBEDDING_DIM));
    },
    close: () => inner.close(),
  };
}

export function createFeaturizedEmbeddedEngine(options: EmbeddedEngineOptions = {}): DecisionEngine {
  const modelDir = options.modelDir ?? DEFAULT_MODEL_DIR;
  // The pool starts with the first encoding (the engine's load), as the engine's own would.
  let pool: TextEncoder | null = null;
  const lazy: TextEncoder = {
    embed(texts) {
      pool ??= options.encoder ?? createEncoderPool({ threads: options.threads ?? 2, runtime: options.encoderRuntime });
      return pool.embed(texts);
    },
    async close() {
      if (pool && !options.encoder) await pool.close();
      pool = null;
    },
  };
  const encoder = rememberingEncoder(lazy);
  const engine = createEmbeddedEngine({ ...options, modelDir, encoder });
  let embedder: Embedder | null = null;
  let window = ENCODER_WINDOW;

  function stateEmbedder(): Embedder {
    if (!embedder) {
      window = readArtifactFiles(modelDir).weights.window;
      embedder = createEmbedder({ encoder, tokenizer: createEncoderTokenizer(), window, cacheEntries: 2000 });
    }
    return embedder;
  }

  const features: EngineFeatures = {
    id: `use-lite-${EMBEDDING_DIM}`,
    dim: EMBEDDING_DIM,
    async state(request: DecisionRequest, signal?: AbortSignal) {
      signal?.throwIfAborted();
      const text = requestTexts(request, MAX_STATE_CHARS).state;
      const vectors = await stateEmbedder().embedMany([text]);
      return vectors.get(text) ?? ZERO_VECTOR;
    },
    async options(question: DecisionQuestion, signal?: AbortSignal) {
      signal?.throwIfAborted();
      // The option texts the engine itself embeds (`name: description`), the state left out.
      const texts = questionTexts(question, '', null).options;
      const vectors = await stateEmbedder().embedMany(texts.filter((t): t is string => Boolean(t)));
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
      await encoder.close();
    },
  };
}
