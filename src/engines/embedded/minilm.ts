/**
 * all-MiniLM-L6-v2, the embedded engine's second encoder (models/all-MiniLM-L6-v2: int8 ONNX, Apache-2.0):
 * 6-layer BERT, mean pooling over the attention mask, unit 384-d vectors. onnxruntime-node runs it on
 * its native CPU kernels (the binary ships inside the npm package); @huggingface/tokenizers reads its
 * tokenizer.json. Reproduces the reference embeddings of ../shared/models/all-MiniLM-L6-v2/golden.json
 * (token ids 14/14, cosine 1.0000; minilm.test.ts).
 *
 * It reads at most 256 tokens at once (its training length); longer texts go through the embedder's
 * windows (embedder.ts) like USE-lite's, so nothing is dropped.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import type { TextEncoder } from './pool.ts';
import type { EncoderTokenizer } from './tokenizer.ts';

export const MINILM_DIM = 384;
/** Tokens of one window, special tokens excluded (the model reads 256 with [CLS] and [SEP]). */
export const MINILM_WINDOW = 254;
const MAX_TOKENS = MINILM_WINDOW + 2;
/** Texts per ONNX call; texts are sorted by length first, so a batch pads little. */
const BATCH = 32;

export const MINILM_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'models',
  'all-MiniLM-L6-v2',
);

export interface MiniLm {
  encoder: TextEncoder;
  tokenizer: Pick<EncoderTokenizer, 'count'>;
}

export interface MiniLmOptions {
  /** Folder with model-int8.onnx, tokenizer.json and tokenizer_config.json. Default: models/all-MiniLM-L6-v2. */
  dir?: string;
  /** onnxruntime's intra-op threads. Default 1. */
  threads?: number;
}

/** The tokenizer alone (token counts and ids), without loading the ONNX session. */
export function createMiniLmTokenizer(dir = MINILM_DIR): { ids(text: string): number[]; count(text: string): number } {
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as object;
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as object;
  const tok = new Tokenizer(json, config);
  /** [CLS] ... [SEP], cut to the model's 256 tokens as sentence-transformers does. */
  const ids = (text: string): number[] => {
    const all = tok.encode(text).ids;
    return all.length <= MAX_TOKENS ? all : [...all.slice(0, MAX_TOKENS - 1), all.at(-1) ?? 102];
  };
  return { ids, count: (text) => tok.encode(text, { add_special_tokens: false }).ids.length };
}

export function createMiniLm(options: MiniLmOptions = {}): MiniLm {
  const dir = options.dir ?? MINILM_DIR;
  const tok = createMiniLmTokenizer(dir);
  let session: Promise<InferenceSession> | null = null;
  const open = (): Promise<InferenceSession> => {
    session ??= InferenceSession.create(join(dir, 'model-int8.onnx'), {
      intraOpNumThreads: Math.max(1, options.threads ?? 1),
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return session;
  };

  async function run(s: InferenceSession, batch: number[][]): Promise<Float32Array[]> {
    const n = batch.length;
    const len = Math.max(...batch.map((b) => b.length));
    const ids = new BigInt64Array(n * len);
    const mask = new BigInt64Array(n * len);
    batch.forEach((row, i) => {
      row.forEach((id, j) => {
        ids[i * len + j] = BigInt(id);
        mask[i * len + j] = 1n;
      });
    });
    const out = await s.run({
      input_ids: new Tensor('int64', ids, [n, len]),
      attention_mask: new Tensor('int64', mask, [n, len]),
      token_type_ids: new Tensor('int64', new BigInt64Array(n * len), [n, len]),
    });
    const hidden = out.last_hidden_state?.data;
    if (!(hidden instanceof Float32Array)) throw new Error('minilm: no last_hidden_state');
    return batch.map((row, i) => {
      const v = new Float32Array(MINILM_DIM);
      for (let j = 0; j < row.length; j++) {
        const at = (i * len + j) * MINILM_DIM;
        for (let d = 0; d < MINILM_DIM; d++) v[d] = (v[d] ?? 0) + (hidden[at + d] ?? 0);
      }
      let norm = 0;
      for (let d = 0; d < MINILM_DIM; d++) norm += (v[d] ?? 0) * (v[d] ?? 0);
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < MINILM_DIM; d++) v[d] = (v[d] ?? 0) / norm;
      return v;
    });
  }

  return {
    tokenizer: { count: tok.count },
    encoder: {
      dim: MINILM_DIM,
      async embed(texts) {
        const s = await open();
        const ids = texts.map(tok.ids);
        const order = ids.map((_, i) => i).sort((a, b) => (ids[a]?.length ?? 0) - (ids[b]?.length ?? 0));
        const out: Float32Array[] = new Array(texts.length);
        for (let i = 0; i < order.length; i += BATCH) {
          const slice = order.slice(i, i + BATCH);
          const vectors = await run(
            s,
            slice.map((k) => ids[k] ?? []),
          );
          slice.forEach((k, j) => {
            out[k] = vectors[j] ?? new Float32Array(MINILM_DIM);
          });
        }
        return out;
      },
      async close() {
        const s = session;
        session = null;
        if (s) await (await s).release();
      },
    },
  };
}
