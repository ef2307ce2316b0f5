/** The embedding step: every text the training and evaluation sets need, into the disk cache (resumable). */
import { createEmbedder } from '../engines/embedded/embedder.ts';
import { createEncoderPool } from '../engines/embedded/pool.ts';
import { requestTexts, textsToEmbed } from '../engines/embedded/texts.ts';
import { createEncoderTokenizer } from '../engines/embedded/tokenizer.ts';
import { loadCaldec } from './caldec.ts';
import { HEAD_TASKS, rowsPerTask } from './config.ts';
import { type Example, listTasks, loadTask } from './data.ts';
import { POLARITY_TEXTS } from './polarity-lexicon.ts';
import { openDiskStore } from './store.ts';

/**
 * Embeds the texts of `examples` (and of CalDec, `withCaldec`) and the polarity lexicon's that the
 * disk cache does not hold yet.
 */
export async function embedAll(examples: Example[], withCaldec: boolean, log: (m: string) => void): Promise<void> {
  const store = openDiskStore();
  const all = new Set<string>(POLARITY_TEXTS);
  for (const ex of examples) for (const t of textsToEmbed(requestTexts(ex.request))) all.add(t);
  if (withCaldec) for (const c of loadCaldec()) for (const t of textsToEmbed(requestTexts(c.request))) all.add(t);
  const todo = [...all].filter((t) => !store.get(t));
  log(`embeddings: ${all.size} distinct texts, ${todo.length} to encode (cache: ${store.size()})`);
  if (todo.length === 0) return;
  const encoder = createEncoderPool({ threads: 2 });
  const embedder = createEmbedder({ encoder, tokenizer: createEncoderTokenizer(), cacheEntries: 0, store });
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
  await encoder.close();
}

/**
 * `npm run train:embed`: the texts of every labelled set (as `train` samples them) and of CalDec,
 * embedded into the disk cache, so that a later `train` starts from cached embeddings.
 */
export async function embedTrainingData(log: (line: string) => void = console.log): Promise<void> {
  const examples = listTasks().flatMap((t) => loadTask(t, rowsPerTask(t), HEAD_TASKS));
  await embedAll(examples, true, log);
}
