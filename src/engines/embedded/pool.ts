import { Worker } from 'node:worker_threads';
import type { UseRuntime, WorkerModel } from './encoder-worker.ts';

export const EMBEDDING_DIM = 512;
/** How long close() waits for a worker to finish its batch and end before terminating it. */
const CLOSE_MS = 30_000;

/**
 * Turns texts into unit vectors of `dim` (default EMBEDDING_DIM, USE-lite's 512). Implemented by the
 * USE-lite worker pool, by MiniLM (minilm.ts) and by fakes in tests.
 */
export interface TextEncoder {
  readonly dim?: number;
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export interface EncoderPoolOptions {
  /** Worker threads, each on one core with every encoder of the pool. Default 2. */
  threads?: number;
  /** USE-lite's runtime in the workers (encoder-worker.ts): 'onnx' (default, int8), 'onnx-float32' or 'tfjs'. */
  runtime?: UseRuntime | undefined;
  /** The encoder: USE-lite (default, 512-d) or MiniLM ('minilm', 384-d). */
  model?: WorkerModel;
}

export interface SharedEncoderPoolOptions {
  /** Worker threads, each on one core with every encoder of `models`. Default 2. */
  threads?: number;
  runtime?: UseRuntime | undefined;
  models: WorkerModel[];
}

/** Encoders that share worker threads: one view per model; closing any view (or the pool) closes all. */
export interface SharedEncoderPool {
  encoder(model: WorkerModel): TextEncoder;
  close(): Promise<void>;
}

/** Each encoder's vector length (minilm.ts MINILM_DIM, the worker and the pool read it here). */
export const ENCODER_DIMS: Record<WorkerModel, number> = { use: EMBEDDING_DIM, minilm: 384 };
/**
 * Relative cost per character, for balancing the workers' queues when both encoders share them:
 * MiniLM (6 layers of 384, int8) costs about 4x USE-lite (2 layers, int8) per character of text
 * (measured: 254-token window 52 ms; USE-lite 128 tokens 5.4 ms).
 */
const COST: Record<WorkerModel, number> = { use: 1, minilm: 4 };

interface Pending {
  resolve: (v: Float32Array) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  load: number;
  pending: Map<number, Pending>;
  ready: Promise<void>;
  /** Resolves when the thread has ended, however it ended. */
  exited: Promise<void>;
}

/** A pool of one encoder (USE-lite by default) in worker threads (see createSharedEncoderPool). */
export function createEncoderPool(options: EncoderPoolOptions = {}): TextEncoder {
  const model = options.model ?? 'use';
  return createSharedEncoderPool({ threads: options.threads, runtime: options.runtime, models: [model] }).encoder(
    model,
  );
}

/**
 * Encoders in worker threads, each thread holding every encoder of `models`. One `embed` call is
 * split across the workers (longest texts first, each to the least-loaded worker, counting what
 * the other encoders have queued there), so one request uses every core.
 */
export function createSharedEncoderPool(options: SharedEncoderPoolOptions): SharedEncoderPool {
  const threads = Math.max(1, Math.min(8, options.threads ?? 2));
  let nextId = 1;
  let closed = false;
  const slots: Slot[] = [];
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(new URL('./encoder-worker.ts', import.meta.url), {
      workerData: { runtime: options.runtime ?? 'onnx', models: options.models },
    });
    worker.unref();
    const pending = new Map<number, Pending>();
    let readyResolve: () => void = () => {};
    let readyReject: (e: Error) => void = () => {};
    const ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    ready.catch(() => {});
    worker.on('message', (msg: { id: number; vectors?: Float32Array; error?: string; ready?: boolean }) => {
      if (msg.id === -1) {
        if (msg.ready) readyResolve();
        else readyReject(new Error(`encoder failed to load: ${msg.error}`));
        return;
      }
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.vectors) p.resolve(msg.vectors);
      else p.reject(new Error(`encoder failed: ${msg.error}`));
    });
    worker.on('error', (error) => {
      readyReject(error);
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    slots.push({ worker, load: 0, pending, ready, exited });
  }

  function send(slot: Slot, texts: string[], cost: number, model: WorkerModel): Promise<Float32Array> {
    const id = nextId++;
    slot.load += cost;
    slot.worker.ref();
    return new Promise<Float32Array>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, texts, model });
    }).finally(() => {
      slot.load -= cost;
      if (slot.pending.size === 0) slot.worker.unref();
    });
  }

  async function embed(model: WorkerModel, texts: string[]): Promise<Float32Array[]> {
    const dim = ENCODER_DIMS[model];
    if (closed) throw new Error('encoder pool is closed');
    if (texts.length === 0) return [];
    await Promise.all(slots.map((s) => s.ready));
    // Longest-processing-time-first assignment; cost ~ characters (+ a per-text overhead).
    const order = texts.map((_, i) => i).sort((a, b) => (texts[b]?.length ?? 0) - (texts[a]?.length ?? 0));
    const shards = slots.map(() => ({ idx: [] as number[], cost: 0 }));
    const base = slots.map((s) => s.load);
    for (const i of order) {
      let best = 0;
      for (let s = 1; s < shards.length; s++) {
        const a = (base[s] ?? 0) + (shards[s]?.cost ?? 0);
        const b = (base[best] ?? 0) + (shards[best]?.cost ?? 0);
        if (a < b) best = s;
      }
      const shard = shards[best];
      if (shard) {
        shard.idx.push(i);
        shard.cost += ((texts[i]?.length ?? 0) + 40) * COST[model];
      }
    }
    const out: Float32Array[] = new Array(texts.length);
    await Promise.all(
      shards.map(async (shard, s) => {
        const slot = slots[s];
        if (!slot || shard.idx.length === 0) return;
        const flat = await send(
          slot,
          shard.idx.map((i) => texts[i] ?? ''),
          shard.cost,
          model,
        );
        shard.idx.forEach((i, j) => {
          out[i] = flat.subarray(j * dim, (j + 1) * dim);
        });
      }),
    );
    return out;
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    // Asked to stop, not terminated: terminating a worker inside onnxruntime's run aborts the
    // process (encoder-worker.ts). A worker that does not end within CLOSE_MS is terminated.
    await Promise.all(
      slots.map(async (s) => {
        s.worker.postMessage({ close: true });
        const timer = setTimeout(() => void s.worker.terminate(), CLOSE_MS);
        await s.exited;
        clearTimeout(timer);
      }),
    );
  }

  return {
    encoder(model) {
      if (!options.models.includes(model)) throw new Error(`this pool has no ${model} encoder`);
      const dim = ENCODER_DIMS[model];
      return { dim, embed: (texts) => embed(model, texts), close };
    },
    close,
  };
}
