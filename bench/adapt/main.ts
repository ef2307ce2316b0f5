/**
 * `npm run bench:adapt`: learning curves of adapters on shared sets the shipped head never trained on.
 * For each set, a fixed test pool (default 400 rows, seeded) is only measured; from the other rows,
 * seeded samples of 25, 50, 100, 200, 500 and 1,000 labels train an adapter exactly as a training job
 * does (src/training/adapter-fit.ts: candidates by cross-validated NLL, refit), and the test pool is
 * answered by the base model (zero-shot), the adapter, and the label frequencies of the training
 * sample (the majority prior). Metrics as served (rounded to 0.01): accuracy, Brier, NLL, ECE (15
 * bins, with its chance floor). Also the training time and the process's peak RSS, and the serving
 * latency of a request through an adapter against the base model.
 *
 * The base model is the embedded engine (the real code path, src/engines/embedded/featurized.ts);
 * encoder outputs already in the training cache (.cache/brier-lite, read only) are reused.
 * Writes bench/results/adapt.json.
 *
 *   npm run bench:adapt -- [--sets sst2,ag_news] [--sizes 25,100] [--test 400]
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADAPTER_FORMAT, applyHead, parseAdapter } from '../../src/engines/adapters/adapter.ts';
import { createFeaturizedEmbeddedEngine } from '../../src/engines/embedded/featurized.ts';
import { createEncoderPool, type TextEncoder512 } from '../../src/engines/embedded/pool.ts';
import { createEngineHost } from '../../src/engines/host.ts';
import { mulberry32 } from '../../src/lib/seeded.ts';
import type { ServedAdapter } from '../../src/systemone/adapters.ts';
import { canonicalLabel } from '../../src/systemone/examples.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import type { WireQuestion, WireState } from '../../src/systemone/protocol.ts';
import { createSystemOne } from '../../src/systemone/serve.ts';
import { templateOf, toCanonical } from '../../src/systemone/templates.ts';
import { fitAllRows, type TemplateData, type TemplateRow } from '../../src/training/adapter-fit.ts';
import { REPO_ROOT } from '../../src/training/data.ts';
import {
  asServed,
  computeMetrics,
  confidencePairs,
  eceNoiseFloor,
  type MetricItem,
  majorityPrior,
  oneHot,
} from '../../src/training/evaluation.ts';
import { openDiskStore } from '../../src/training/store.ts';

const DEFAULT_SETS = [
  'sst2',
  'cr',
  'subj',
  'tweeteval_hate',
  'ag_news',
  'trec',
  'tweeteval_emotion',
  'airline_complaint',
  'sst5',
  'airline_sentiment',
  'tweeteval_sentiment',
  'amazon_alexa',
];

const { values } = parseArgs({
  options: {
    sets: { type: 'string' },
    sizes: { type: 'string' },
    test: { type: 'string' },
    seed: { type: 'string' },
    refit: { type: 'string' },
  },
});
const refit = values.refit === 'folds' ? 'folds' : 'all';
const sets = values.sets ? values.sets.split(',') : DEFAULT_SETS;
const sizes = (values.sizes ?? '25,50,100,200,500,1000').split(',').map(Number);
const testSize = Number(values.test ?? 400);
const seed = Number(values.seed ?? 23);

/** Encoder outputs from the training cache (read only: nothing is written to it), the rest encoded. */
function cachedEncoder(inner: TextEncoder512): TextEncoder512 & { hits: () => number } {
  const store = openDiskStore(undefined, true);
  let hits = 0;
  return {
    hits: () => hits,
    async embed(texts) {
      const out = texts.map((t) => store.get(t));
      const missing = texts.filter((_, i) => !out[i]);
      const encoded = missing.length > 0 ? await inner.embed(missing) : [];
      let j = 0;
      hits += texts.length - missing.length;
      return out.map((v) => v ?? (encoded[j++] as Float32Array));
    },
    close: () => inner.close(),
  };
}

interface SharedRow {
  state: unknown;
  question: unknown;
  label: unknown;
}

/** All rows of ../shared/data/decisions/<name>.jsonl (read from there, never copied). */
function loadDataset(name: string): SharedRow[] {
  const file = join(REPO_ROOT, '..', 'shared', 'data', 'decisions', `${name}.jsonl`);
  if (!existsSync(file)) throw new Error(`${file} is absent: bench:adapt needs ../shared/data/decisions`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SharedRow);
}

const pool = createEncoderPool({ threads: 2 });
const encoder = cachedEncoder(pool);
const engine = createFeaturizedEmbeddedEngine({ encoder, parallelism: 4 });
await engine.load();

interface Featurized {
  template: ReturnType<typeof templateOf>;
  question: WireQuestion;
  rows: (TemplateRow & { state: Float32Array })[];
}

/** Base probabilities (canonical order) and state features of every row, through the engine. */
async function featurize(name: string): Promise<Featurized> {
  const raw = loadDataset(name);
  const question = raw[0]?.question as WireQuestion;
  const template = templateOf(question);
  const rows: Featurized['rows'] = [];
  const batch = 16;
  for (let i = 0; i < raw.length; i += batch) {
    const part = raw.slice(i, i + batch);
    const done = await Promise.all(
      part.map(async (r) => {
        const q = r.question as WireQuestion;
        if (templateOf(q).id !== template.id) return null;
        const label = canonicalLabel(q, r.label);
        if ('error' in label) return null;
        const request = toDecisionRequest(r.state as WireState, [q]);
        const answer = await engine.answer(request, AbortSignal.timeout(60_000));
        const state = engine.features ? await engine.features.state(request) : null;
        return {
          base: toCanonical(q, answer.probabilities[0] ?? []),
          state: state as Float32Array,
          label: template.labels.indexOf(label.label),
        };
      }),
    );
    for (const d of done) if (d) rows.push(d);
  }
  return { template, question, rows };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

function measure(items: MetricItem[]) {
  const m = computeMetrics(items);
  const r = (v: number) => Math.round(v * 10_000) / 10_000;
  return {
    accuracy: r(m.accuracy),
    brier: r(m.brier),
    nll: r(m.nll),
    ece: r(m.ece),
    eceFloor: r(eceNoiseFloor(confidencePairs(items).map((p) => p.confidence))),
  };
}

const results: unknown[] = [];
const lines: string[] = [];
for (const name of sets) {
  const started = performance.now();
  const f = await featurize(name);
  const k = f.template.labels.length;
  const random = mulberry32(seed);
  const all = shuffled(f.rows, random);
  const test = all.slice(0, Math.min(testSize, Math.floor(all.length / 3)));
  const pool2 = all.slice(test.length);
  const ordinal = f.template.type === 'score';
  const target = (y: number) => oneHot(k, y);
  const base = measure(test.map((r) => ({ p: asServed(r.base), t: target(r.label), ordinal })));
  const oracle = majorityPrior(test.map((r) => target(r.label)));
  const priorOracle = measure(test.map((r) => ({ p: oracle, t: target(r.label), ordinal })));
  console.log(
    `${name} (${f.template.type}, k=${k}): ${f.rows.length} rows featurized in ${((performance.now() - started) / 1000).toFixed(0)} s (${encoder.hits()} cached encodings so far); test ${test.length}; zero-shot accuracy ${base.accuracy}, Brier ${base.brier}`,
  );
  const curve: unknown[] = [];
  for (const n of sizes) {
    if (n > pool2.length) continue;
    const sample = pool2.slice(0, n);
    const data: TemplateData = {
      template: f.template.id,
      type: f.template.type,
      labels: f.template.labels,
      rows: sample,
    };
    const t0 = performance.now();
    const fitted = fitAllRows(data, { refit });
    const seconds = (performance.now() - t0) / 1000;
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    if (!fitted) continue;
    const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [fitted.file] }).heads.get(
      f.template.id,
    );
    if (!head) continue;
    const prior = majorityPrior(sample.map((r) => target(r.label)));
    const adapter = measure(
      test.map((r) => ({ p: asServed(applyHead(head, r.base, r.state)), t: target(r.label), ordinal })),
    );
    const trainPrior = measure(test.map((r) => ({ p: prior, t: target(r.label), ordinal })));
    curve.push({
      labels: n,
      kind: fitted.file.kind,
      adapter,
      trainPrior,
      seconds: Math.round(seconds * 100) / 100,
      peakRssMb,
    });
    const line = `| ${name} | ${f.template.type} | ${n} | ${base.accuracy.toFixed(3)} / ${adapter.accuracy.toFixed(3)} / ${priorOracle.accuracy.toFixed(3)} | ${base.brier.toFixed(4)} / ${adapter.brier.toFixed(4)} / ${priorOracle.brier.toFixed(4)} | ${base.nll.toFixed(3)} / ${adapter.nll.toFixed(3)} | ${base.ece.toFixed(3)} / ${adapter.ece.toFixed(3)} (${adapter.eceFloor.toFixed(3)}) | ${fitted.file.kind} | ${seconds.toFixed(1)} s |`;
    lines.push(line);
    console.log(line);
  }
  results.push({
    set: name,
    type: f.template.type,
    k,
    rows: f.rows.length,
    test: test.length,
    zeroShot: base,
    majorityPrior: priorOracle,
    curve,
  });
}

// Serving latency: the same requests through the base model and through an adapter of one set.
async function servingLatency(name: string, labels: number) {
  const f = await featurize(name);
  const fitted = fitAllRows({
    template: f.template.id,
    type: f.template.type,
    labels: f.template.labels,
    rows: f.rows.slice(0, labels),
  });
  if (!fitted) return null;
  const adapter: ServedAdapter = {
    ...parseAdapter({
      format: ADAPTER_FORMAT,
      base: engine.info.id,
      features: engine.features?.id ?? null,
      heads: [fitted.file],
    }),
    id: `ft:${engine.info.id}:bench`,
    createdAt: Date.now(),
  };
  const host = createEngineHost(engine, { queueLimit: 64, timeoutMs: 30_000 });
  const s1 = createSystemOne(host, {
    adapters: { find: async () => adapter, list: async () => [adapter], forget: () => {} },
  });
  const raw = loadDataset(name).slice(0, 120);
  const time = async (model: string | undefined, tag: string) => {
    const ms: number[] = [];
    for (const r of raw) {
      // A state never seen before (no embedding from a cache): tagged per run.
      const state = `${String(r.state)} #${tag}`;
      const t0 = performance.now();
      await s1.serve({ ...(model ? { model } : {}), state, questions: { q: f.question } }, undefined, {
        account: 'bench',
      });
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => Math.round((ms[Math.floor(p * (ms.length - 1))] ?? 0) * 10) / 10;
    return { p50: q(0.5), p95: q(0.95) };
  };
  await time(undefined, 'warm-up');
  const base = await time(undefined, 'base');
  const adapted = await time(adapter.id, 'adapter');
  return { set: name, labels, base, adapter: adapted, requests: raw.length };
}
const latency = await servingLatency(sets.includes('ag_news') ? 'ag_news' : (sets[0] ?? 'sst2'), 200);
console.log('serving latency (ms, sequential requests, fresh states)', latency);

const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, 'adapt.json'),
  `${JSON.stringify({ model: engine.info.id, seed, testSize, sizes, sets: results, latency, at: new Date().toISOString() }, null, 2)}\n`,
);
console.log(
  '\n| set | type | labels | accuracy (zero-shot / adapter / majority prior) | Brier (zero-shot / adapter / prior) | NLL (zero-shot / adapter) | ECE (zero-shot / adapter (floor)) | head | fit time |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
await engine.close();
