/**
 * Sustained matrix-multiply speed on this machine's cores, on the encoders' own shapes
 * ([window tokens x k] x [k x n]): onnxruntime-node's native MatMul (float32, as brier-lite 4.1 ran
 * both encoders), MatMulInteger (u8 x s8, the bare int8 kernel) and DynamicQuantizeMatMul (float
 * in and out, activations quantized as it runs: what brier-lite 4.2's encoders run), and TF.js's
 * WASM backend. GFLOP/s (GOP/s for int8) = 2 m k n / seconds, best of `rounds` timed rounds
 * (interference from other processes only slows a round down).
 */
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { encoderSessionOptions } from '../../src/engines/embedded/onnx-options.ts';
import { matMulModel, ONNX_FLOAT, writeModel } from '../../src/engines/embedded/onnx-proto.ts';
import { quantizeColumns } from '../../src/engines/embedded/use-onnx.ts';

export interface MatMulShape {
  m: number;
  k: number;
  n: number;
}

export interface MatMulResult {
  runtime: string;
  threads: number;
  shape: MatMulShape;
  gflops: number;
}

const flops = (s: MatMulShape) => 2 * s.m * s.k * s.n;

async function timeIt(run: () => Promise<void> | void, minMs: number, rounds: number): Promise<number> {
  for (let i = 0; i < 3; i++) await run();
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    let iters = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < minMs) {
      await run();
      iters++;
    }
    best = Math.min(best, (performance.now() - t0) / iters);
  }
  return best; // ms per product
}

export async function onnxMatMul(
  shape: MatMulShape,
  threads: number,
  rounds = 3,
  kind: 'float32' | 'int8' | 'dynamic-int8' = 'float32',
): Promise<MatMulResult> {
  const bytes = kind === 'dynamic-int8' ? dynamicQuantizeModel(shape) : matMulModel(kind, shape.m, shape.k, shape.n);
  // the encoders' own options (onnx-options.ts: int8 products without saturation on CPUs without VNNI)
  const session = await InferenceSession.create(bytes, encoderSessionOptions(threads));
  const a =
    kind === 'int8'
      ? new Tensor(
          'uint8',
          new Uint8Array(shape.m * shape.k).map((_, i) => i % 251),
          [shape.m, shape.k],
        )
      : new Tensor(
          'float32',
          new Float32Array(shape.m * shape.k).map((_, i) => Math.cos(i)),
          [shape.m, shape.k],
        );
  try {
    const ms = await timeIt(
      async () => {
        await session.run({ A: a });
      },
      300,
      rounds,
    );
    const runtime =
      kind === 'int8'
        ? 'onnxruntime-node MatMulInteger u8s8'
        : kind === 'dynamic-int8'
          ? 'onnxruntime-node DynamicQuantizeMatMul'
          : 'onnxruntime-node MatMul f32';
    return { runtime, threads, shape, gflops: flops(shape) / ms / 1e6 };
  } finally {
    await session.release();
  }
}

/** One DynamicQuantizeMatMul node: float A, int8 B quantized per column, float Y (as the encoders run). */
function dynamicQuantizeModel(shape: MatMulShape): Uint8Array {
  const w = new Float32Array(shape.k * shape.n).map((_, i) => Math.sin(i));
  const { q, scale } = quantizeColumns(w, shape.k, shape.n);
  return writeModel({
    nodes: [{ op: 'DynamicQuantizeMatMul', inputs: ['A', 'B', 'S'], outputs: ['Y'], domain: 'com.microsoft' }],
    initializers: [
      { name: 'B', dims: [shape.k, shape.n], data: q },
      { name: 'S', dims: [shape.n], data: scale },
    ],
    inputs: [{ name: 'A', elem: ONNX_FLOAT, shape: [shape.m, shape.k] }],
    outputs: [{ name: 'Y', elem: ONNX_FLOAT, shape: [shape.m, shape.n] }],
    opset: 17,
    opsets: { 'com.microsoft': 1 },
  });
}

interface TfTensor {
  dataSync(): unknown;
  dispose(): void;
}
interface Tf {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  randomNormal(shape: number[]): TfTensor;
  matMul(a: TfTensor, b: TfTensor): TfTensor;
  env(): { getAsync(flag: string): Promise<unknown> };
}

/** TF.js WASM (the backend @energetic-ai/core bundles and USE-lite's workers run on), in this thread. */
export async function tfjsMatMul(shape: MatMulShape, rounds = 3): Promise<MatMulResult & { backend: string }> {
  // @energetic-ai/core bundles TF.js and re-exports it, without shipping tfjs-core's types.
  const tf = (await import('@energetic-ai/core')) as unknown as Tf;
  await tf.setBackend('wasm');
  await tf.ready();
  const a = tf.randomNormal([shape.m, shape.k]);
  const b = tf.randomNormal([shape.k, shape.n]);
  try {
    const ms = await timeIt(
      () => {
        const y = tf.matMul(a, b);
        y.dataSync();
        y.dispose();
      },
      300,
      rounds,
    );
    const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    return {
      runtime: 'TF.js WASM matMul f32',
      backend: `wasm (simd ${simd ? 'on' : 'off'}, threads ${threads ? 'on' : 'off'})`,
      threads: 1,
      shape,
      gflops: flops(shape) / ms / 1e6,
    };
  } finally {
    a.dispose();
    b.dispose();
  }
}
