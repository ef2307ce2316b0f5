/**
 * `npm run bench:quality [-- --limit 300 --via app|direct --url http://127.0.0.1:8787 --key brier_sk_...]`
 *
 * Evaluates an engine on ../shared/data/decisions/*.jsonl and prints a table per dataset and per
 * question type (n, accuracy, Brier, NLL, ECE, score MAE, beside majority-prior and uniform
 * baselines), then writes bench/results/quality-<engine>.json.
 * - `--via app` (default): the real `POST /v1/systemone` route of the real app, in-process, over
 *   the embedded engine (auth, validation, rendering, rounding included).
 * - `--url URL --key KEY`: a running Brier server over HTTP.
 * - `--via direct`: the engine's `answer()` directly (no HTTP).
 * Sets the engine was trained on are scored on their held-out rows only (src/training/data.ts
 * isTestRow) and reported apart from the sets held out of training.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { WeightsFile } from '../../src/engines/embedded/artifacts.ts';
import { createEmbeddedEngine, DEFAULT_MODEL_DIR } from '../../src/engines/embedded/index.ts';
import { isTestRow, listTasks, loadTask, mulberry32, questionFromRaw, REPO_ROOT } from '../../src/training/data.ts';
import { type AnswerFn, type BenchRow, formatReport, runQualityBench } from './core.ts';
import { createHttpAnswer, fetchRequest } from './http.ts';

const { values } = parseArgs({
  options: {
    limit: { type: 'string', default: '300' },
    via: { type: 'string', default: 'app' },
    url: { type: 'string' },
    key: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    datasets: { type: 'string' },
    'trained-from': { type: 'string', default: join(DEFAULT_MODEL_DIR, 'weights.json') },
  },
});
const limit = Number(values.limit);

let trained: string[] = [];
try {
  const w = JSON.parse(readFileSync(values['trained-from'] ?? '', 'utf8')) as Partial<WeightsFile>;
  trained = w.trainingSets ?? [];
} catch {
  trained = [];
}

let answer: AnswerFn;
let engineId: string;
let close: () => Promise<void> = async () => {};
if (values.url) {
  if (!values.key) throw new Error('--url needs --key');
  answer = createHttpAnswer(fetchRequest(values.url), values.key);
  const models = (await (
    await fetch(new URL('/v1/models', values.url), { headers: { authorization: `Bearer ${values.key}` } })
  ).json()) as { models?: { id: string }[]; data?: { id: string }[] };
  engineId = (models.models ?? models.data)?.[0]?.id ?? 'remote';
} else {
  const engine = createEmbeddedEngine();
  await engine.load();
  engineId = engine.info.id;
  if (values.via === 'direct') {
    const signal = new AbortController().signal;
    answer = async (state, questions) =>
      (
        await engine.answer(
          { state: { text: state, json: undefined }, questions: questions.map((q) => questionFromRaw(q)) },
          signal,
        )
      ).probabilities;
    close = () => engine.close();
  } else {
    const { makeTestApp } = await import('../../test/harness.ts');
    const app = await makeTestApp({ engine, requestTimeoutMs: 120_000 });
    answer = createHttpAnswer(async (url, init) => app.app.request(url, init), app.key);
    close = () => app.close();
  }
}

const wanted = values.datasets ? new Set(values.datasets.split(',')) : null;
const rows: BenchRow[] = [];
for (const task of listTasks()) {
  if (wanted && !wanted.has(task)) continue;
  const examples = loadTask(task, 100_000, new Set(trained)).filter((e) => !trained.includes(task) || isTestRow(e.id));
  const rand = mulberry32(7);
  const order = examples.map((e) => ({ e, r: rand() })).sort((a, b) => a.r - b.r);
  for (const { e } of order.slice(0, limit)) {
    rows.push({ id: e.id, dataset: task, state: e.request.state.text, question: e.raw, target: e.target });
  }
}
if (rows.length === 0) throw new Error('no rows: bench:quality reads ../shared/data/decisions/*.jsonl');

const report = await runQualityBench({
  engine: engineId,
  rows,
  answer,
  trainedDatasets: trained,
  concurrency: Number(values.concurrency),
  onProgress: (d, n) => {
    if (d % 500 === 0 || d === n) process.stderr.write(`  ${d}/${n}\n`);
  },
});
await close();
console.log(formatReport(report));
const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `quality-${engineId}.json`);
writeFileSync(file, `${JSON.stringify({ via: values.url ? 'url' : values.via, ...report }, null, 2)}\n`);
console.log(`\nwrote ${file}`);
