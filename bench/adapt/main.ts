/**
 * `npm run bench:adapt`: learning curves of adapters on shared sets the shipped head never trained on.
 * For each set, a fixed test pool (seeded; up to --test rows, default 1,000: as many as leave the
 * largest sample to train on, so 1,000 of a 2,000-row set) is only measured; from the other rows,
 * seeded samples of 25, 50, 100, 200, 500 and 1,000 labels train an adapter exactly as a training job
 * does (src/training/adapter-fit.ts: candidates by cross-validated NLL, refit; a choice set's options
 * embedded as its label prior, src/jobs/job-kit.ts labelStatesOf), and the test pool is
 * answered by the base model (zero-shot), the adapter, and the label frequencies of the training
 * sample (the majority prior). Metrics as served (rounded to 0.01): accuracy, Brier, NLL, ECE (15
 * bins, with its chance floor). Also the training time and the process's peak RSS, and the serving
 * latency of a request through an adapter against the base model. Then clinc150 (see clinc150()):
 * the adapter as a job fits it (the label prior cross-validated) in each feature space of --features,
 * against the head fitted without clinc150 (uniform without its cache), and the candidate each fold chose.
 *
 * The base model is the embedded engine (the real code path, src/engines/embedded/featurized.ts);
 * encoder outputs already in the training cache (.cache/brier-lite, read only) are reused.
 * Writes bench/results/adapt.json.
 *
 *   npm run bench:adapt -- [--sets sst2,ag_news|none] [--sizes 25,100] [--test 400] [--clinc off|only] [--caldec off]
 *     [--latency off|sst2,ag_news] [--prefix off] [--gate 0.9,0.95] [--features use-lite,joint] [--lambdas 3e-4,1e-3] [--outer-folds 5]
 *
 * --clinc only: the clinc150 section alone. --features: the adapters' feature spaces compared, each
 * taken from the engine's features ([USE-lite | MiniLM], featurized.ts) as FEATURE_VARIANTS says
 * (default: the engine's own, `joint`). --lambdas: the probe's L2 grid (default the job's,
 * adapter-probe.ts), to compare variants at a fraction of the time. --latency: the sets whose serving
 * is timed (base model, a head on every feature, a head on USE-lite alone, and which of the two a job
 * serves; default ag_news). --prefix
 * off: heads read every feature, as before MiniLM was read only where it measurably helps.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADAPTER_FORMAT, applyHead, type HeadFile, parseAdapter } from '../../src/engines/adapters/adapter.ts';
import { createFeaturizedEmbeddedEngine } from '../../src/engines/embedded/featurized.ts';
import { createMiniLmTokenizer, MINILM_DIM, MINILM_WINDOW } from '../../src/engines/embedded/minilm.ts';
import { createEncoderPool, type TextEncoder } from '../../src/engines/embedded/pool.ts';
import { createEngineHost } from '../../src/engines/host.ts';
import type { DecisionQuestion } from '../../src/engines/request.ts';
import { labelStatesOf } from '../../src/jobs/job-kit.ts';
import { hash32, mulberry32, shuffled } from '../../src/lib/seeded.ts';
import type { ServedAdapter } from '../../src/systemone/adapters.ts';
import { canonicalLabel } from '../../src/systemone/examples.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import type { WireQuestion, WireState } from '../../src/systemone/protocol.ts';
import { createSystemOne } from '../../src/systemone/serve.ts';
import { templateOf, toCanonical } from '../../src/systemone/templates.ts';
import {
  fitAdapter,
  fitAllRows,
  fitTemplate,
  prefixOf,
  splitRows,
  type TemplateData,
  type TemplateRow,
} from '../../src/training/adapter-fit.ts';
import { loadCaldec } from '../../src/training/caldec.ts';
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
import { loadDataset, type SharedRow } from '../datasets.ts';
import { FEATURE_VARIANTS, type FeatureVariant, inVariant } from './variants.ts';

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
    gate: { type: 'string' },
    clinc: { type: 'string' },
    caldec: { type: 'string' },
    latency: { type: 'string' },
    features: { type: 'string' },
    lambdas: { type: 'string' },
    'outer-folds': { type: 'string' },
    prefix: { type: 'string' },
  },
});
const clincOnly = values.clinc === 'only';
const refit = values.refit === 'folds' ? 'folds' : 'all';
const sets = clincOnly || values.sets === 'none' ? [] : values.sets ? values.sets.split(',') : DEFAULT_SETS;
const sizes = (values.sizes ?? '20,50,200,500,1000').split(',').map(Number);
const testSize = Number(values.test ?? 1000);
const seed = Number(values.seed ?? 23);
/** The serving gate's levels measured (adapter-select.ts servingGate); the first is printed and CalDec's. */
const gateLevels = (values.gate ?? '0.9').split(',').map(Number);
const variants: FeatureVariant[] = (values.features ?? 'joint').split(',').map((name) => {
  const v = FEATURE_VARIANTS.find((x) => x.name === name);
  if (!v) throw new Error(`--features: ${name} is none of ${FEATURE_VARIANTS.map((x) => x.name).join(', ')}`);
  return v;
});
const lambdas = values.lambdas ? values.lambdas.split(',').map(Number) : undefined;
/** Cross-fitting's outer folds (adapter-fit.ts OUTER_FOLDS unless given). */
const outerFolds = values['outer-folds'] ? Number(values['outer-folds']) : undefined;
/**
 * `--prefix off`: jobs' heads read every feature, as before MiniLM was read only where it measurably
 * helps (FitOptions.prefix); default on, as a training job on the embedded engine fits.
 */
const prefixOn = values.prefix !== 'off';

/** Encoder outputs from the training cache (read only: nothing is written to it), the rest encoded. */
function cachedEncoder(
  inner: TextEncoder,
  store = openDiskStore(undefined, true),
): TextEncoder & { hits: () => number } {
  let hits = 0;
  return {
    ...(inner.dim ? { dim: inner.dim } : {}),
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

const pool = createEncoderPool({ threads: 2 });
const encoder = cachedEncoder(pool);
// MiniLM's outputs from the training cache too (`npm run train:embed` stores them per window)
const miniLm = {
  encoder: cachedEncoder(
    createEncoderPool({ threads: 2, model: 'minilm' }),
    openDiskStore(`minilm-w${MINILM_WINDOW}-int8`, true, MINILM_DIM),
  ),
  tokenizer: createMiniLmTokenizer(),
};
const engine = createFeaturizedEmbeddedEngine({ encoder, miniLm, parallelism: 4 });
await engine.load();

interface Featurized {
  template: ReturnType<typeof templateOf>;
  question: WireQuestion;
  /** The set's rows of its first row's template, shuffled (seeded), the first `need` of them featurized. */
  rows: (TemplateRow & { state: Float32Array })[];
  /** Rows of the set's template (featurized or not). */
  total: number;
  labelStates: (Float32Array | null)[] | null;
}

/**
 * Base probabilities (canonical order) and state features of the set's rows, through the engine: its
 * rows shuffled (seeded), the first `need` (the same draws as featurizing all of them, then shuffling).
 */
async function featurize(name: string, need = Number.POSITIVE_INFINITY): Promise<Featurized> {
  const raw = loadDataset(name, 'bench:adapt');
  const question = raw[0]?.question as WireQuestion;
  const template = templateOf(question);
  const valid = raw.filter((r) => {
    const q = r.question as WireQuestion;
    return templateOf(q).id === template.id && !('error' in canonicalLabel(q, r.label));
  });
  const drawn = shuffled(valid, mulberry32(seed)).slice(0, need);
  const rows: Featurized['rows'] = [];
  const batch = 16;
  for (let i = 0; i < drawn.length; i += batch) {
    const part = drawn.slice(i, i + batch);
    const done = await Promise.all(
      part.map(async (r) => {
        const q = r.question as WireQuestion;
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
  return { template, question, rows, total: valid.length, labelStates: await labelStatesOf(engine, question) };
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
  const largest = Math.max(...sizes);
  // as many test rows as leave the largest sample to train on (a third of a smaller set): at 400 rows
  // the ECE of a perfectly calibrated answer was already ~0.05 by chance alone (its floor)
  const total = (await featurize(name, 0)).total;
  const testN = Math.min(testSize, Math.max(Math.floor(total / 3), total - largest));
  const f = await featurize(name, testN + largest);
  const k = f.template.labels.length;
  const all = f.rows;
  const test = all.slice(0, testN);
  const pool2 = all.slice(test.length);
  const ordinal = f.template.type === 'score';
  const target = (y: number) => oneHot(k, y);
  const base = measure(test.map((r) => ({ p: asServed(r.base), t: target(r.label), ordinal })));
  const oracle = majorityPrior(test.map((r) => target(r.label)));
  const priorOracle = measure(test.map((r) => ({ p: oracle, t: target(r.label), ordinal })));
  console.log(
    `${name} (${f.template.type}, k=${k}): ${f.rows.length} of ${total} rows featurized in ${((performance.now() - started) / 1000).toFixed(0)} s (${encoder.hits()} cached encodings so far, MiniLM ${miniLm.encoder.hits()}); test ${test.length}; zero-shot accuracy ${base.accuracy}, Brier ${base.brier}`,
  );
  const curve: unknown[] = [];
  for (const n of sizes) {
    if (n > pool2.length) continue;
    for (const variant of variants) {
      const sample = pool2.slice(0, n).map((r) => ({ ...r, state: inVariant(variant, r.state) }));
      const testRows = test.map((r) => ({ ...r, state: inVariant(variant, r.state) }));
      const data: TemplateData = {
        template: f.template.id,
        type: f.template.type,
        labels: f.template.labels,
        rows: sample,
        labelStates: f.labelStates?.map((e) => (e ? inVariant(variant, e, true) : null)) ?? null,
      };
      const t0 = performance.now();
      const fitted = fitAllRows(data, { refit, lambdas });
      const seconds = (performance.now() - t0) / 1000;
      const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
      if (!fitted) continue;
      const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [fitted.file] }).heads.get(
        f.template.id,
      );
      if (!head) continue;
      // as a training job serves it: cross-fitted, the head fitted on the whole sample served only past the gate
      // (at each of --gate levels; the first is the one printed)
      const byGate = gateLevels.map((level) => {
        const prefix = prefixOn && variant.name === 'joint' ? engine.features?.prefix : undefined;
        const job = fitTemplate(data, { refit, lambdas, minExamples: 1, gate: { level }, outerFolds, prefix });
        const jobHead = job.head
          ? parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [job.head] }).heads.get(
              f.template.id,
            )
          : undefined;
        const metrics = measure(
          testRows.map((r) => ({
            p: asServed(jobHead ? applyHead(jobHead, r.base, r.state) : r.base),
            t: target(r.label),
            ordinal,
          })),
        );
        return { level, job, metrics };
      });
      const { job, metrics: served } = byGate[0] as (typeof byGate)[number];
      const prior = majorityPrior(sample.map((r) => target(r.label)));
      const adapter = measure(
        testRows.map((r) => ({ p: asServed(applyHead(head, r.base, r.state)), t: target(r.label), ordinal })),
      );
      const trainPrior = measure(test.map((r) => ({ p: prior, t: target(r.label), ordinal })));
      curve.push({
        labels: n,
        features: variant.name,
        kind: fitted.file.kind,
        adapter,
        served,
        servedBy: job.head ? job.report.chosen : 'base model',
        reason: job.report.reason,
        gates: byGate.map((g) => ({ level: g.level, served: g.job.report.served, metrics: g.metrics })),
        trainPrior,
        seconds: Math.round(seconds * 100) / 100,
        peakRssMb,
      });
      const line = `| ${name} | ${f.template.type} | ${n} | ${variant.name} | ${base.accuracy.toFixed(3)} / ${adapter.accuracy.toFixed(3)} / ${served.accuracy.toFixed(3)} | ${base.brier.toFixed(4)} / ${adapter.brier.toFixed(4)} / ${served.brier.toFixed(4)} | ${base.ece.toFixed(3)} / ${adapter.ece.toFixed(3)} / ${served.ece.toFixed(3)} (${served.eceFloor.toFixed(3)}) | ${fitted.chosen} | ${job.head ? job.report.chosen : 'base model'} | ${seconds.toFixed(1)} s |`;
      lines.push(line);
      console.log(line);
    }
  }
  results.push({
    set: name,
    type: f.template.type,
    k,
    rows: total,
    test: test.length,
    zeroShot: base,
    majorityPrior: priorOracle,
    curve,
  });
}

/**
 * Serving latency: the same requests through the base model, through a head on every feature and
 * through a head on USE-lite's part alone (each fitted on every row of one sample), and which of the
 * two a training job serves for that sample (MiniLM's features only where they measurably helped).
 */
async function servingLatency(name: string, labels: number) {
  const f = await featurize(name, labels);
  const data: TemplateData = {
    template: f.template.id,
    type: f.template.type,
    labels: f.template.labels,
    rows: f.rows.slice(0, labels),
  };
  const prefix = engine.features?.prefix;
  const everyFeature = fitAllRows(data);
  const useLite = prefix ? fitAllRows(prefixOf(data, prefix.dim)) : null;
  const job = fitTemplate(data, { prefix: prefixOn ? prefix : undefined });
  if (!everyFeature) return null;
  const adapterOf = (id: string, file: HeadFile): ServedAdapter => ({
    ...parseAdapter({
      format: ADAPTER_FORMAT,
      base: engine.info.id,
      features: engine.features?.id ?? null,
      heads: [file],
    }),
    id: `ft:${engine.info.id}:${id}`,
    createdAt: Date.now(),
    fallback: null,
  });
  const adapters = [
    adapterOf('every-feature', everyFeature.file),
    ...(useLite ? [adapterOf('use-lite', useLite.file)] : []),
  ];
  const host = createEngineHost(engine, { queueLimit: 64, timeoutMs: 30_000 });
  const s1 = createSystemOne(host, {
    adapters: {
      find: async (_account, id) => adapters.find((a) => a.id === id),
      list: async () => adapters,
      forget: () => {},
    },
  });
  const raw = loadDataset(name, 'bench:adapt').slice(0, 120);
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
  const adapted = await time(adapters[0]?.id, 'adapter');
  const onUseLite = adapters[1] ? await time(adapters[1].id, 'use-lite') : null;
  return {
    set: name,
    labels,
    base,
    adapter: adapted,
    adapterOnUseLite: onUseLite,
    jobServes: job.head ? `${job.report.chosen} (${job.head.dim} features)` : 'none: the base model answers',
    requests: raw.length,
  };
}
/**
 * clinc150 (150 intents and out_of_scope): the shipped head trained on it, so its base answer here is
 * the stage A head fitted without it (its leave-task-out scores in the stage A cache of `npm run
 * train`, the cache whose final choice head is the shipped one), as probabilities. The shared file has
 * 600 rows (under 3 per in-scope intent once a test part is out, not the issue's ~7): 5 stratified
 * folds, each fold's rows answered by an adapter fitted on the other four.
 */
async function clinc150() {
  const dir = join(REPO_ROOT, '.cache', 'brier-lite');
  const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'models', 'brier-lite', 'weights.json'), 'utf8')) as {
    bilinear: { choice: { U: string } };
  };
  let leaveOut: Record<string, number[]> | null = null;
  for (const f of existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('stage-a-')) : []) {
    const j = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {
      final: { weights: { cU: string } };
      leaveOut: Record<string, number[]>;
    };
    if (j.final.weights.cU === shipped.bilinear.choice.U) leaveOut = j.leaveOut;
  }
  // Without that cache, every class equally likely (that head's answer was nearly so: accuracy 0.103
  // on 151 classes, 0.007 as served): the adapters' numbers are then their features' alone.
  const baseName = leaveOut
    ? 'the stage A head fitted without clinc150'
    : 'uniform (no stage A cache of the shipped head)';
  if (!leaveOut) console.log(`clinc150: base answer ${baseName}`);
  const raw = loadDataset('clinc150', 'bench:adapt') as (SharedRow & { id: string })[];
  const question = raw[0]?.question as WireQuestion;
  const template = templateOf(question);
  const k = template.labels.length;
  const rows: TemplateRow[] = [];
  for (const r of raw) {
    const bil = leaveOut ? leaveOut[r.id] : new Array<number>(k).fill(0);
    const label = canonicalLabel(r.question as WireQuestion, r.label);
    if (!bil || 'error' in label) continue;
    const max = Math.max(...bil);
    const e = bil.map((v) => Math.exp(v - max));
    const sum = e.reduce((a, b) => a + b, 0);
    const state = await engine.features?.state(toDecisionRequest(r.state as WireState, [question]));
    rows.push({
      base: toCanonical(
        question,
        e.map((v) => v / sum),
      ),
      state: state ?? null,
      label: template.labels.indexOf(label.label),
    });
  }
  // the label prior: each intent's option text, as a training job embeds it
  const labelStates = await labelStatesOf(engine, question);
  const folds = 5;
  const { fold } = splitRows(
    rows.map((r) => r.label),
    0,
    folds,
    150,
  );
  // per feature space (--features), the adapter as a job fits it (the label prior cross-validated)
  const clincVariants = variants.map((fv) => ({
    name: `adapter as a job fits it on ${fv.name} (label prior cross-validated)`,
    rows: rows.map((r) => ({ ...r, state: r.state ? inVariant(fv, r.state) : null })),
    labelStates: labelStates?.map((e) => (e ? inVariant(fv, e, true) : null)) ?? null,
  }));
  const out: Record<string, unknown> = { base: baseName, lambdas: lambdas ?? 'default' };
  const before: MetricItem[] = [];
  for (const v of clincVariants) {
    const items: MetricItem[] = [];
    let seconds = 0;
    let perIntent = 0;
    const chosen: string[] = [];
    for (let f = 0; f < folds; f++) {
      const train = v.rows.filter((_, i) => fold.get(i) !== f);
      const test = v.rows.filter((_, i) => fold.get(i) === f);
      perIntent += train.filter((r) => template.labels[r.label] !== 'out_of_scope').length / (k - 1) / folds;
      const t0 = performance.now();
      const fitted = fitAllRows(
        {
          template: template.id,
          type: 'choice',
          labels: template.labels,
          rows: train,
          labelStates: v.labelStates,
        },
        { lambdas },
      );
      seconds += (performance.now() - t0) / 1000;
      chosen.push(fitted?.chosen ?? 'not fitted');
      const head = fitted
        ? parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [fitted.file] }).heads.get(
            template.id,
          )
        : undefined;
      if (!head) continue;
      for (const r of test) {
        items.push({ p: asServed(applyHead(head, r.base, r.state)), t: oneHot(k, r.label), ordinal: false });
        if (v === clincVariants[0]) before.push({ p: asServed(r.base), t: oneHot(k, r.label), ordinal: false });
      }
    }
    out[v.name] = {
      ...measure(items),
      seconds: Math.round(seconds),
      labelsPerIntent: Math.round(perIntent * 100) / 100,
      chosen,
    };
    console.log(`clinc150 ${v.name}:`, out[v.name]);
  }
  // the zero-shot answer's accuracy before rounding (rounded to 0.01, 151 near-uniform classes tie)
  const argmax = rows.filter((r) => r.base.indexOf(Math.max(...r.base)) === r.label).length / rows.length;
  out['zero-shot (head without clinc150)'] = {
    ...measure(before),
    accuracyUnrounded: Math.round(argmax * 10_000) / 10_000,
  };
  console.log('clinc150 zero-shot (head without clinc150):', out['zero-shot (head without clinc150)']);
  return { rows: rows.length, classes: k, folds, ...out };
}
/**
 * CalDec validation as one account's own templates (issue 39): each distinct question (type,
 * instructions, options) a template, the cases split in halves by a hash of the case id; the account's
 * labelled examples are the first half's (soft targets: the gold distributions, their argmax the
 * label), fitted as a training job fits them (fitAdapter: each template's candidates and the shared
 * model over all of them, served past the gate), and the second half answered by what is served
 * (the base model where no head is). Accuracy (argmax against the gold argmax), Brier against the gold
 * distribution and ECE, per question type and overall.
 */
async function caldecAccount() {
  const cases = loadCaldec();
  if (cases.length === 0) return null;
  type Row = TemplateRow & { gold: number[]; test: boolean };
  const templates = new Map<
    string,
    { type: TemplateData['type']; labels: string[]; rows: Row[]; question: DecisionQuestion }
  >();
  let skipped = 0;
  for (let i = 0; i < cases.length; i += 16) {
    const read = await Promise.all(
      cases.slice(i, i + 16).map(async (c) => {
        try {
          const answer = await engine.answer(c.request, AbortSignal.timeout(120_000));
          const state = engine.features ? await engine.features.state(c.request) : null;
          return { c, answer, state };
        } catch {
          skipped++;
          return null;
        }
      }),
    );
    for (const r of read) {
      if (!r) continue;
      const { c, answer, state } = r;
      const test = hash32(c.id) % 2 === 1;
      c.request.questions.forEach((q, qi) => {
        const labels = q.options.map((o) => o.label);
        const key = JSON.stringify([q.type, q.instructions, labels]);
        let t = templates.get(key);
        if (!t) {
          t = { type: q.type, labels, rows: [], question: q };
          templates.set(key, t);
        }
        const gold = c.targets[qi] ?? [];
        const label = gold.indexOf(Math.max(...gold));
        t.rows.push({ base: answer.probabilities[qi] ?? [], state, label, target: gold, gold, test });
      });
    }
  }
  const ids = [...templates.keys()];
  const data: TemplateData[] = [];
  for (const [key, t] of templates) {
    // every type's option features, as a job reads them (a variant below reads choice options only)
    const labelStates = engine.features?.options ? await engine.features.options(t.question) : null;
    data.push({
      template: `tpl_caldec_${ids.indexOf(key)}`,
      type: t.type,
      labels: t.labels,
      rows: t.rows.filter((r) => !r.test),
      labelStates,
    });
  }
  const list = [...templates.values()];
  const byType = (items: (MetricItem & { type: string })[]) =>
    Object.fromEntries(
      ['all', 'noul', 'choice', 'score'].map((type) => [
        type,
        measure(items.filter((x) => type === 'all' || x.type === type)),
      ]),
    );
  /** The test half answered by the base model where `heads` has no head, as served. */
  const answered = (heads: ReturnType<typeof parseAdapter>['heads'] | null) =>
    byType(
      list.flatMap((t, i) => {
        const head = heads?.get(`tpl_caldec_${i}`);
        return t.rows
          .filter((x) => x.test)
          .map((r) => ({
            p: asServed(head ? applyHead(head, r.base, r.state) : r.base),
            t: r.gold,
            ordinal: t.type === 'score',
            type: t.type,
          }));
      }),
    );
  const choiceOnly = data.map((t) => (t.type === 'choice' ? t : { ...t, labelStates: null }));
  const variant = (shared: boolean, templates = data, level = gateLevels[0] ?? 0.9) => {
    const t0 = performance.now();
    const prefix = prefixOn ? engine.features?.prefix : undefined;
    const fitted = fitAdapter(templates, { minExamples: 20, shared, gate: { level }, outerFolds, prefix });
    const seconds = (performance.now() - t0) / 1000;
    const heads = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: fitted.heads }).heads;
    return {
      served: fitted.reports.filter((r) => r.served).length,
      seconds: Math.round(seconds),
      metrics: answered(heads),
      templates: fitted.reports.map((r) => ({ n: r.n, served: r.served, chosen: r.chosen, reason: r.reason })),
    };
  };
  const out = {
    cases: cases.length,
    skipped,
    templates: data.length,
    trainRows: data.reduce((a, t) => a + t.rows.length, 0),
    testRows: list.reduce((a, t) => a + t.rows.filter((r) => r.test).length, 0),
    zeroShot: answered(null),
    withShared: variant(true),
    withSharedChoiceOptionsOnly: variant(true, choiceOnly),
    withoutShared: variant(false),
    /** The shared model at every gate level measured. */
    byGate: gateLevels.map((level) => {
      const v = variant(true, data, level);
      return { level, served: v.served, metrics: v.metrics };
    }),
  };
  console.log(
    `caldec as an account: ${out.templates} templates, ${out.trainRows} training rows, ${out.testRows} test rows (${skipped} cases over the limits); served ${out.withShared.served} templates (${out.withoutShared.served} without the shared model); fit ${out.withShared.seconds} s`,
  );
  console.log(
    `served without the shared model ${out.withoutShared.served}, with it reading choice options only ${out.withSharedChoiceOptionsOnly.served}`,
  );
  console.log(
    '| caldec | accuracy: zero-shot / adapter / shared reading choice options only / without shared | Brier | ECE (floor) |',
  );
  for (const type of ['all', 'noul', 'choice', 'score']) {
    const ms = [
      out.zeroShot,
      out.withShared.metrics,
      out.withSharedChoiceOptionsOnly.metrics,
      out.withoutShared.metrics,
    ];
    const col = (f: (m: ReturnType<typeof measure>) => string) =>
      ms.map((m) => (m[type] ? f(m[type]) : '-')).join(' / ');
    console.log(
      `| ${type} | ${col((m) => m.accuracy.toFixed(3))} | ${col((m) => m.brier.toFixed(4))} | ${col((m) => m.ece.toFixed(3))} (${out.withShared.metrics[type]?.eceFloor.toFixed(3)}) |`,
    );
  }
  return out;
}
const caldec = values.caldec === 'off' || clincOnly ? null : await caldecAccount();
const clinc = values.clinc === 'off' ? null : await clinc150();

// --latency: the sets timed (default ag_news where measured, else the first set), or off
const latencySets =
  values.latency === 'off' || clincOnly
    ? []
    : values.latency
      ? values.latency.split(',')
      : [sets.includes('ag_news') ? 'ag_news' : (sets[0] ?? 'sst2')];
const latency: Awaited<ReturnType<typeof servingLatency>>[] = [];
for (const name of latencySets) latency.push(await servingLatency(name, 200));
console.log('serving latency (ms, sequential requests, fresh states)', latency);

const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, 'adapt.json'),
  `${JSON.stringify({ model: engine.info.id, seed, testSize, sizes, sets: results, caldec, clinc150: clinc, latency, at: new Date().toISOString() }, null, 2)}\n`,
);
console.log(
  '\n| set | type | labels | features | accuracy (zero-shot / adapter / served) | Brier (zero-shot / adapter / served) | ECE (zero-shot / adapter / served (floor)) | adapter head | served | fit time |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
await engine.close();
