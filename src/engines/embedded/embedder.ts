import { LRUCache } from 'lru-cache';
import type { EngineMetrics } from '../engine.ts';
import { EMBEDDING_DIM, type TextEncoder } from './pool.ts';
import { chunkText, type EncoderTokenizer } from './tokenizer.ts';

/**
 * Texts longer than this many encoder tokens are embedded in windows and pooled (see chunkText).
 * USE-lite reads about the first 129 tokens of a text and silently ignores the rest (measured:
 * text appended after 129 tokens leaves the vector unchanged; real-encoder.test.ts checks that the
 * last token of a full window still moves it). 120 leaves a margin for the token count of a window
 * (the sum of its pieces' counts) differing from the encoder's own by a token or two.
 */
export const ENCODER_WINDOW = 120;

export interface Embedder {
  /** Unit vectors for the distinct non-empty texts given (empty texts are absent from the map). */
  embedMany(texts: Iterable<string>): Promise<Map<string, Float32Array>>;
  /** Cache statistics, for tests and metrics. */
  stats(): { hits: number; misses: number; size: number };
}

export interface EmbedderOptions {
  encoder: TextEncoder;
  tokenizer: Pick<EncoderTokenizer, 'count'>;
  /** Entries in the short-lived cache (0 disables it). Default 20,000 (~40 MiB). */
  cacheEntries?: number;
  /** How long a cached embedding lives, ms. Default 10 minutes. */
  cacheTtlMs?: number;
  /** Optional second-level store (training keeps embeddings on disk). */
  store?: { get(text: string): Float32Array | undefined; set(text: string, v: Float32Array): void };
  window?: number;
  /** Cache hit/miss and batch-size reporting (optional). */
  metrics?: () => EngineMetrics | undefined;
  /**
   * Micro-batching window, ms: texts of embedMany calls that arrive within it (concurrent
   * requests) go to the encoder in one call. 0 (default) still merges calls made in the same
   * event-loop turn.
   */
  batchWindowMs?: number;
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += (v[i] ?? 0) * (v[i] ?? 0);
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / n;
  return v;
}

/**
 * Embeds texts through a short-lived LRU cache. A text longer than the encoder window is split
 * into window-sized pieces (nothing dropped), the pieces are encoded in the same batch (and so
 * spread over the workers), and their vectors are averaged weighted by token count and
 * renormalized.
 */
export function createEmbedder(options: EmbedderOptions): Embedder {
  const window = options.window ?? ENCODER_WINDOW;
  const dim = options.encoder.dim ?? EMBEDDING_DIM;
  const entries = options.cacheEntries ?? 20_000;
  const cache =
    entries > 0 ? new LRUCache<string, Float32Array>({ max: entries, ttl: options.cacheTtlMs ?? 600_000 }) : null;
  /** Texts being encoded right now: a concurrent request for the same text waits for it (encoded once). */
  const inflight = new Map<string, Promise<Float32Array>>();
  /** Texts waiting for the next encoder call (the micro-batch). */
  let queued: { text: string; resolve: (v: Float32Array) => void; reject: (e: unknown) => void }[] = [];
  let flushScheduled = false;
  let hits = 0;
  let misses = 0;

  async function encode(todo: typeof queued): Promise<void> {
    const pieces: string[] = [];
    const plan: { text: string; from: number; weights: number[] }[] = [];
    for (const { text } of todo) {
      const chunks = chunkText(text, options.tokenizer.count, window);
      const weights = chunks.length === 1 ? [1] : chunks.map((c) => Math.max(1, options.tokenizer.count(c)));
      plan.push({ text, from: pieces.length, weights });
      pieces.push(...chunks);
    }
    options.metrics?.()?.batch('embedded', 'texts', pieces.length);
    const vectors = await options.encoder.embed(pieces);
    plan.forEach(({ text, from, weights }, k) => {
      const v = new Float32Array(dim);
      weights.forEach((w, j) => {
        const piece = vectors[from + j];
        if (!piece) return;
        for (let d = 0; d < dim; d++) v[d] = (v[d] ?? 0) + w * (piece[d] ?? 0);
      });
      normalize(v);
      cache?.set(text, v);
      options.store?.set(text, v);
      todo[k]?.resolve(v);
    });
  }

  function flush(): void {
    flushScheduled = false;
    const todo = queued;
    queued = [];
    if (todo.length === 0) return;
    encode(todo).catch((error: unknown) => {
      for (const t of todo) t.reject(error);
    });
  }

  function schedule(text: string): Promise<Float32Array> {
    const promise = new Promise<Float32Array>((resolve, reject) => queued.push({ text, resolve, reject }));
    const done = promise.finally(() => inflight.delete(text));
    done.catch(() => {});
    inflight.set(text, promise);
    if (!flushScheduled) {
      flushScheduled = true;
      if (options.batchWindowMs) setTimeout(flush, options.batchWindowMs);
      else setImmediate(flush);
    }
    return promise;
  }

  return {
    stats: () => ({ hits, misses, size: cache?.size ?? 0 }),
    async embedMany(texts) {
      const result = new Map<string, Float32Array>();
      const waits: Promise<void>[] = [];
      let h = 0;
      let m = 0;
      for (const text of new Set(texts)) {
        if (!text) continue;
        const hit = cache?.get(text) ?? options.store?.get(text);
        if (hit) {
          h++;
          result.set(text, hit);
          cache?.set(text, hit);
          continue;
        }
        // Being encoded for a concurrent request counts as a hit: it is encoded once.
        const pending = inflight.get(text);
        if (pending) h++;
        else m++;
        waits.push((pending ?? schedule(text)).then((v) => void result.set(text, v)));
      }
      hits += h;
      misses += m;
      const metrics = options.metrics?.();
      metrics?.cacheLookup('embedding', true, h);
      metrics?.cacheLookup('embedding', false, m);
      await Promise.all(waits);
      return result;
    },
  };
}
