/** The embedding step: every text the training and evaluation sets need, in both encoders' disk caches (resumable). */
import { createEmbedder, type Embedder } from '../engines/embedded/embedder.ts';
import { createMiniLm, MINILM_DIM, MINILM_WINDOW } from '../engines/embedded/minilm.ts';
import { createEncoderPool } from '../engines/embedded/pool.ts';
import { miniTexts, requestTexts, textsToEmbed } from '../engines/embedded/texts.ts';
import { createEncoderTokenizer } from '../engines/embedded/tokenizer.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { loadCaldec } from './caldec.ts';
import { HEAD_TASKS, rowsPerTask } from './config.ts';
import { listTasks, loadTask } from './data.ts';
import { POLARITY_TEXTS } from './polarity-lexicon.ts';
import { type DiskStore, openDiskStore } from './store.ts';
import { generateItems } from './templates.ts';

/** The USE-lite cache (the default store) and the MiniLM cache. */
export function openStores(readOnly = false): { use: DiskStore; mini: DiskStore } {
  return {
    use: openDiskStore(undefined, readOnly),
    mini: openDiskStore(`minilm-w${MINILM_WINDOW}-int8`, readOnly, MINILM_DIM),
  };
}

async function encodeMissing(
  name: string,
  store: DiskStore,
  texts: ReadonlySet<string>,
  embedderOf: (store: DiskStore) => { embedder: Embedder; close: () => Promise<void> },
  log: (m: string) => void,
): Promise<void> {
  const todo = [...texts].filter((t) => !store.get(t));
  log(`embeddings (${name}): ${texts.size} distinct texts, ${todo.length} to encode (cache: ${store.size()})`);
  if (todo.length === 0) return;
  const { embedder, close } = embedderOf(store);
  const started = Date.now();
  const BATCH = 128;
  for (let i = 0; i < todo.length; i += BATCH) {
    await embedder.embedMany(todo.slice(i, i + BATCH));
    if ((i / BATCH) % 10 === 9 || i + BATCH >= todo.length) {
      store.flush();
      const done = Math.min(todo.length, i + BATCH);
      const rate = done / ((Date.now() - started) / 1000);
      log(
        `  ${done}/${todo.length} (${rate.toFixed(1)} texts/s, eta ${((todo.length - done) / rate / 60).toFixed(1)} min)`,
      );
    }
  }
  store.flush();
  await close();
}

/**
 * Embeds what the engine reads of `requests` (and of CalDec, `withCaldec`) and the polarity lexicon,
 * in USE-lite and in MiniLM (the zero-shot families' texts and every state), where the caches lack it.
 * Requests are read as brier-lite 4 reads them (negated yes/no questions in their plain wording).
 */
export async function embedAll(
  requests: readonly DecisionRequest[],
  withCaldec: boolean,
  log: (m: string) => void,
): Promise<void> {
  const stores = openStores();
  const use = new Set<string>(POLARITY_TEXTS);
  const mini = new Set<string>();
  const all = withCaldec ? [...requests, ...loadCaldec().map((c) => c.request)] : requests;
  for (const r of all) {
    const rt = requestTexts(r, undefined, true);
    for (const t of textsToEmbed(rt)) use.add(t);
    for (const t of miniTexts(rt)) mini.add(t);
    if (rt.state) mini.add(rt.state);
  }
  await encodeMissing(
    'USE-lite',
    stores.use,
    use,
    (store) => {
      // onnxruntime, as serving runs USE-lite (brier-lite 4.1; 4.0.0's cache was made on TF.js WASM, which
      // agrees to 4e-7 and took ~7x longer: 40 texts/s against ~250 on the same two cores)
      const encoder = createEncoderPool({ threads: 2 });
      const embedder = createEmbedder({ encoder, tokenizer: createEncoderTokenizer(), cacheEntries: 0, store });
      return { embedder, close: () => encoder.close() };
    },
    log,
  );
  await encodeMissing(
    'MiniLM',
    stores.mini,
    mini,
    (store) => {
      const m = createMiniLm({ threads: 2 });
      const embedder = createEmbedder({
        encoder: m.encoder,
        tokenizer: m.tokenizer,
        cacheEntries: 0,
        store,
        window: MINILM_WINDOW,
      });
      return { embedder, close: () => m.encoder.close() };
    },
    log,
  );
}

/** Every labelled row of every set as `train` samples them, with the questions generated from their labels. */
export function trainingRequests(): DecisionRequest[] {
  return listTasks().flatMap((t) => {
    const rows = loadTask(t, rowsPerTask(t), HEAD_TASKS);
    return [...rows, ...generateItems(t, rows).map((g) => g.example)].map((ex) => ex.request);
  });
}

/**
 * `npm run train:embed`: the texts of every labelled set (as `train` samples them), of the questions
 * generated from them, and of CalDec, embedded into the disk caches, so that a later `train` starts
 * from cached embeddings.
 */
export async function embedTrainingData(log: (line: string) => void = console.log): Promise<void> {
  await embedAll(trainingRequests(), true, log);
}
