/**
 * The arithmetic limit of the embedded engine on this machine, for bench:latency: what a request's
 * state costs each encoder (FLOPs, from the graphs: arithmetic.ts) and what these cores sustain on
 * the same matrix shapes in the fastest runtime from npm (matmul.ts), so that a measured latency or
 * throughput can be printed as a fraction of what the hardware could do.
 */
import os from 'node:os';
import { DEFAULT_MODEL_DIR } from '../../src/engines/embedded/index.ts';
import { createMiniLmTokenizer, MINILM_WINDOW } from '../../src/engines/embedded/minilm.ts';
import { loadModel } from '../../src/engines/embedded/model.ts';
import { miniTexts, requestTexts } from '../../src/engines/embedded/texts.ts';
import { chunkText, createEncoderTokenizer } from '../../src/engines/embedded/tokenizer.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import type { WireQuestion, WireState } from '../../src/systemone/protocol.ts';
import { type EncoderArithmetic, miniLmArithmetic, useLiteArithmetic, windowFlops } from './arithmetic.ts';
import { type MatMulResult, onnxMatMul, tfjsMatMul } from './matmul.ts';

export interface Limit {
  use: EncoderArithmetic;
  minilm: EncoderArithmetic;
  /** Best sustained GFLOP/s of one core on each encoder's feed-forward shape (onnxruntime, 1 thread). */
  perCoreGflops: { use: number; minilm: number };
  /** The same in int8 (DynamicQuantizeMatMul, activations quantized as it runs: brier-lite 4.2's kernels), GOP/s. */
  perCoreGops8: { use: number; minilm: number };
  /** TF.js WASM on USE-lite's shape: the runtime USE-lite runs on today. */
  tfjsGflops: number;
  tfjsBackend: string;
  cores: number;
  microbenchmarks: MatMulResult[];
}

/** Runs the microbenchmarks (a few seconds). */
export async function measureLimit(): Promise<Limit> {
  const use = useLiteArithmetic();
  const minilm = miniLmArithmetic();
  const useShape = { m: 120, k: 512, n: 1536 };
  const miniShape = { m: 160, k: 384, n: 1536 };
  const runs: MatMulResult[] = [];
  for (let round = 0; round < 2; round++) {
    runs.push(await onnxMatMul(useShape, 1), await onnxMatMul(miniShape, 1));
  }
  const tfjs = await tfjsMatMul(useShape);
  runs.push(tfjs);
  // The bare int8 kernel (VNNI), and the product as the int8 encoders run it (quantizing included).
  runs.push(await onnxMatMul(useShape, 1, 3, 'int8'), await onnxMatMul(miniShape, 1, 3, 'int8'));
  for (let round = 0; round < 2; round++) {
    runs.push(await onnxMatMul(useShape, 1, 3, 'dynamic-int8'), await onnxMatMul(miniShape, 1, 3, 'dynamic-int8'));
  }
  const best = (k: number, runtime: string) =>
    Math.max(...runs.filter((r) => r.runtime.endsWith(runtime) && r.shape.k === k).map((r) => r.gflops));
  return {
    use,
    minilm,
    perCoreGflops: { use: best(512, 'MatMul f32'), minilm: best(384, 'MatMul f32') },
    perCoreGops8: { use: best(512, 'DynamicQuantizeMatMul'), minilm: best(384, 'DynamicQuantizeMatMul') },
    tfjsGflops: tfjs.gflops,
    tfjsBackend: tfjs.backend,
    cores: os.cpus().length,
    microbenchmarks: runs,
  };
}

export interface RequestArithmetic {
  /** FLOPs of the state's windows in USE-lite and (when a zero-shot family reads it) MiniLM. */
  useFlops: number;
  minilmFlops: number;
  useWindows: number[];
  minilmWindows: number[];
}

/**
 * What the engine's encoders compute for a request whose question texts are already cached (a
 * steady server): the state's windows, as the engine cuts them.
 */
export function requestArithmetic(limit: Limit) {
  const useTok = createEncoderTokenizer();
  const miniTok = createMiniLmTokenizer();
  const model = loadModel(DEFAULT_MODEL_DIR);
  return (state: WireState, questions: Record<string, WireQuestion>): RequestArithmetic => {
    const request = toDecisionRequest(state, Object.values(questions));
    const rt = requestTexts(request, undefined, model.zeroShot !== null);
    const useWindows = chunkText(rt.state, useTok.count, model.window).map((c) => useTok.count(c) + 2);
    const readsMini = model.zeroShot !== null && miniTexts(rt).includes(rt.state);
    const minilmWindows = readsMini
      ? chunkText(rt.state, miniTok.count, MINILM_WINDOW).map((c) => Math.min(MINILM_WINDOW, miniTok.count(c)) + 2)
      : [];
    return {
      useFlops: windowFlops(limit.use, useWindows),
      minilmFlops: windowFlops(limit.minilm, minilmWindows),
      useWindows,
      minilmWindows,
    };
  };
}

/**
 * Seconds the arithmetic of `a` needs at the limit: each encoder's FLOPs at its shape's per-core
 * speed (float32 or int8 kernels), on all cores.
 */
export function secondsAtLimit(limit: Limit, a: RequestArithmetic, precision: 'f32' | 'int8' = 'f32'): number {
  const speed = precision === 'int8' ? limit.perCoreGops8 : limit.perCoreGflops;
  return (a.useFlops / (speed.use * 1e9) + a.minilmFlops / (speed.minilm * 1e9)) / limit.cores;
}
