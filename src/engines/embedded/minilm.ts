/**
 * all-MiniLM-L6-v2, the embedded engine's second encoder (models/all-MiniLM-L6-v2, Apache-2.0):
 * 6-layer BERT, mean pooling over the attention mask, unit 384-d vectors. onnxruntime-node runs it on
 * its native CPU kernels (the binary ships inside the npm package); @huggingface/tokenizers reads its
 * tokenizer.json. The shipped graph (model-int8-dynamic.onnx, built by scripts/models/minilm-int8.py
 * from the int8-weight file) runs its matrix products in int8; it agrees with the reference
 * embeddings of ../shared/models/all-MiniLM-L6-v2/golden.json (computed in float32) at cosine >= 0.999
 * per text (token ids 14/14; minilm.test.ts).
 *
 * Texts run one per call: the int8 graph quantizes each product's activations over the whole
 * tensor, so a text batched with others (and their padding) would get a slightly different vector
 * (measured for USE-lite: cosine 0.998 alone vs in a batch). One at a time, a text's vector depends on
 * the text alone, wherever and with whatever it is embedded.
 *
 * It reads at most 256 tokens at once (its training length); longer texts go through the embedder's
 * windows (embedder.ts) like USE-lite's, so nothing is dropped.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { encoderSessionOptions } from './onnx-options.ts';
import { ENCODER_DIMS, type TextEncoder } from './pool.ts';
import type { EncoderTokenizer } from './tokenizer.ts';

export const MINILM_DIM = ENCODER_DIMS.minilm;
/** Tokens of one window, special tokens excluded (the model reads 256 with [CLS] and [SEP]). */
export const MINILM_WINDOW = 254;
const MAX_TOKENS = MINILM_WINDOW + 2;
/** The int8 graph (see above); model-int8.onnx, the source file, computes in float32. */
export const MINILM_FILE = 'model-int8-dynamic.onnx';

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
  /** Folder with the model file, tokenizer.json and tokenizer_config.json. Default: models/all-MiniLM-L6-v2. */
  dir?: string;
  /** The ONNX file in `dir`. Default MINILM_FILE. */
  file?: string;
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
    session ??= InferenceSession.create(join(dir, options.file ?? MINILM_FILE), encoderSessionOptions(options.threads));
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
        const out: Float32Array[] = [];
        for (const text of texts) out.push((await run(s, [tok.ids(text)]))[0] ?? new Float32Array(MINILM_DIM));
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
