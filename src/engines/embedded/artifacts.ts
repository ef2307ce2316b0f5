/**
 * The files of a brier-lite artifact (models/brier-lite), one type for each, and the reading that
 * serving needs. `npm run train` (src/training) writes them; the engine (model.ts), the console's
 * model route and the documentation read them.
 *
 * - weights.json      `WeightsFile`: the bilinear head and the training tasks' instruction signatures
 * - calibration.json  `CalibrationFile`: per question type and family, the betas and the calibration map
 * - zeroshot.json     `ZeroShotFile` (brier-lite 4; absent before): the reference pools and the family maps
 *                     of the zero-shot answers (zero-shot.ts)
 * - golden.json       `GoldenFile`: the answers to fixed synthetic inputs (src/training/golden.ts), which
 *                     the tests recompute from the committed artifact
 * - report.json       `ReportFile`: every number of the model card
 * - MODEL_CARD.md     the model card, Markdown (`readModelCard` with report.json)
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CalibrationParams, DescriptorRange } from './calibration.ts';
import type { QuestionType } from './features.ts';

export const WEIGHTS_FORMAT = 'brier-lite-head/3';
export const CALIBRATION_FORMAT = 'brier-lite-calibration/2';
export const ZEROSHOT_FORMAT = 'brier-lite-zeroshot/1';

export type Family = 'seen' | 'unseen';

export interface Familiarity {
  center: number;
  width: number;
}

/**
 * The polarity answer of score questions whose scale runs along the polarity axis (features.ts
 * `polarityOf`): weight sigmoid((|scale| - center) / width) on an answer read from the state's place
 * on the axis alone, logit_j = gamma * u_j * s(state) * sign(scale) + delta * u_j^2 (u_j the level's
 * position in [-1, 1]; delta < 0 favours the middle levels), shrunk by alpha toward uniform; the rest
 * on the usual answer. s(z) = saturation * tanh(z / saturation): past about one saturation from the
 * mean state, a state said more strongly is not read as more evidence.
 */
export interface PolarityCalibration {
  center: number;
  width: number;
  gamma: number;
  /** Absent (brier-lite 3.5): 0. */
  delta?: number;
  alpha: number;
  /** Absent (brier-lite 3.6 and earlier): s(z) = z. */
  saturation?: number;
}

export interface FamilyCalibration {
  /** beta_0 weighs the bilinear score, beta_1.. the scalar features of features.ts (names alongside). */
  beta: number[];
  features: string[];
  /** ln T = t . d(q), alpha = sigmoid(a . d(q)), d = `descriptors` (names alongside). */
  t: number[];
  a: number[];
  descriptors: string[];
  /** unseen family: descriptor ranges outside which a question is shrunk toward the uniform answer. */
  support?: DescriptorRange[];
  /** unseen family: how gradually (calibration.ts `CalibrationModel.softness`). */
  softness?: number;
  /** seen family: (T, alpha) per training task, fitted on its held-out rows; overrides t/a. */
  tasks?: Record<string, CalibrationParams>;
}

/** calibration.json */
export interface CalibrationFile {
  format: string;
  modelId: string;
  /**
   * How much a question is answered as the training task nearest to it (same type and option count):
   * weight sigmoid((cosine of the two instructions - center) / width) on that task's `seen` answer, the
   * rest on the `unseen` answer, so that rewording a training task's question moves its answer
   * gradually, never across a threshold.
   */
  familiarity: Familiarity;
  polarity: PolarityCalibration;
  types: Record<QuestionType, Record<Family, FamilyCalibration>>;
}

/** weights.json */
export interface WeightsFile {
  format: string;
  modelId: string;
  encoder: string;
  dim: number;
  window: number;
  /** Per type: its rank and base64 little-endian float32 matrices, each EMBEDDING_DIM x rank row-major. */
  bilinear: {
    noul: { rank: number; U: string; V: string };
    choice: { rank: number; U: string; V: string };
    score: { rank: number; U: string; V: string; P: string; Q: string };
  };
  /** The labelled sets whose rows trained the bilinear weights. */
  trainingSets: string[];
  /**
   * features.ts `PolarityAxis`: axis, levels and center as base64 little-endian float32 (EMBEDDING_DIM
   * each). `levels` absent (brier-lite 3.5, one direction for both): the axis.
   */
  polarity: { axis: string; levels?: string; center: string; scale: number };
  signatures: { task: string; type: QuestionType; k: number; instruction: string }[];
}

/** A reference pool as stored: base64 little-endian float32 mean (dim) and basis (rank x dim). */
export interface PoolFile {
  dim: number;
  rank: number;
  mean: string;
  basis: string;
  variances: number[];
  residual: number;
}

/** A fitted map over named signals (zero-shot.ts `SignalMap`); null: the family abstains. */
export interface SignalMapFile {
  signals: string[];
  weights: number[];
  bias: number;
  alpha: number;
}

/** zeroshot.json (brier-lite 4): what the zero-shot families read and how they answer (zero-shot.ts). */
export interface ZeroShotFile {
  format: string;
  modelId: string;
  /** The second encoder, as shipped in models/ (e.g. all-MiniLM-L6-v2). */
  encoder: string;
  pools: { minilm: PoolFile; use: PoolFile };
  noul: { content: SignalMapFile | null; polarity: SignalMapFile | null; pair: SignalMapFile | null };
  choice: SignalMapFile | null;
  /** c of s(z) = c tanh(z / c), the state's polarity place as the maps read it. */
  saturation: number;
}

/** skill.json (brier-lite 4.1): where each measured kind of question lies and its skill (skill.ts). */
export interface SkillFile {
  format: string;
  modelId: string;
  /** The encoder of the frames (USE-lite). */
  encoder: string;
  sharpness: number;
  prior: number;
  quantile: number;
  floor: number;
  /** Per unit: its centroid as base64 little-endian float32 (EMBEDDING_DIM). */
  units: { name: string; type: QuestionType; centroid: string; skill: number; weight: number }[];
}

export const SKILL_FORMAT = 'brier-lite-skill/1';

/** golden.json: the model's answers to src/training/golden.ts `goldenInputs()`, in order. */
export interface GoldenFile {
  modelId: string;
  probabilities: number[][];
}

/** Quality metrics of a set of answers (computed by src/training/evaluation.ts; report.json holds them). */
export interface Metrics {
  n: number;
  /** Items with a unique-maximum target (accuracy and ECE are over these). */
  nHard: number;
  accuracy: number;
  brier: number;
  nll: number;
  ece: number;
  /** null when no score items. */
  scoreMae: number | null;
}

/** A model's metrics beside the majority-prior and uniform baselines on the same items. */
export interface MetricsBlock {
  model: Metrics;
  prior: Metrics;
  uniform: Metrics;
  /** The ECE a perfectly calibrated model would show by chance at the model's confidences and n. */
  eceFloor: number;
}

/** One labelled set's numbers. */
export interface TaskReport {
  role: string;
  licence: string;
  /** Training sets: the shipped head on their held-out rows, calibration cross-fitted. */
  heldOutRows: MetricsBlock | null;
  /** Training sets: every row, cross-validated with the fold heads. */
  allRowsCrossValidated: MetricsBlock | null;
  /** Held-out sets: the shipped artifact. */
  shipped: MetricsBlock | null;
  leaveTaskOut: MetricsBlock;
}

/** What one (T, alpha) fitted on a left-out task's own labels would have scored (a diagnosis). */
export interface Hindsight {
  task: string;
  k: number;
  temperature: number;
  alpha: number;
  /** Mean Brier with that (T, alpha); the uniform answer where it beats uniform by too little (AIC). */
  brier: number;
  /** Mean of each descriptor over the task's questions. */
  meanD: number[];
}

/** Latency of one realistic request through the real engine, measured at training time. */
export interface LatencyReport {
  runs: number;
  stateTokens: number;
  loadMs: number;
  cachedP50: number;
  cachedP90: number;
  newStateP50: number;
  newStateP90: number;
  coldP50: number;
}

/** One zero-shot map's held-out numbers on one source set and kind of question (report.json). */
export interface ZeroShotRow {
  map: string;
  source: string;
  /** native (the set's own questions), topic, emotion, polarity, subset (generated), or all (pooled). */
  kind: string;
  n: number;
  auc: number | null;
  accuracy: number;
  /** The majority class's share. */
  prior: number;
  brier: number;
  uniformBrier: number;
  ece: number;
  eceFloor: number;
  /** Answers more than 0.005 from uniform somewhere. */
  informative: number;
}

/** report.json `zeroShot` (brier-lite 4). */
export interface ZeroShotReport {
  maps: Record<string, SignalMapFile & { families: string[] }>;
  rows: ZeroShotRow[];
  pooled: ZeroShotRow[];
  negation: { pairs: number; within: number };
}

/** report.json: the numbers of the model card. */
export interface ReportFile {
  /** Held-out rows of the training tasks, the shipped head, calibration cross-fitted. */
  seen: Record<QuestionType, MetricsBlock>;
  /** Every row of the training tasks, cross-validated with the fold heads. */
  seenAllRowsCrossValidated: Record<QuestionType, MetricsBlock>;
  /** Held-out tasks, leave-tasks-out. */
  leaveTasksOut: Record<QuestionType, MetricsBlock>;
  /** Held-out tasks, the shipped artifact. */
  heldOutTasksShipped: Record<QuestionType, MetricsBlock>;
  perTask: Record<string, TaskReport>;
  hindsight: (Hindsight & { type: QuestionType })[];
  /** CalDec validation (soft targets), beside the uniform answer. */
  caldec: Record<QuestionType, { model: Metrics; uniform: Metrics }>;
  familyCheck: { seenRowsDetectedSeen: number; heldOutTasksDetectedUnseen: number; caldecDetectedUnseen: number };
  /** null when training ran with `--no-latency`. */
  latency: LatencyReport | null;
  /** The paraphrase suite on the trained model; null when training ran with `--no-paraphrase`. */
  paraphrase: ParaphraseReport | null;
  /** brier-lite 4: the zero-shot families, held out by source set (absent before). */
  zeroShot?: ZeroShotReport;
  /** brier-lite 4: the coherence suite on the trained model; null when not run. */
  coherence?: CoherenceSummary | null;
  /** brier-lite 4.1: the skill model's evaluation, held out by set (src/training/skill-card.ts). */
  skill?: SkillReport;
  /** brier-lite 4: issue 31's targets with their measured numbers. */
  targets?: { name: string; measured: string; met: boolean }[];
}

/** The skill model's evaluation (src/training/skill-card.ts builds it). */
export interface SkillRow {
  /** A set, `<set>/<kind>`, `caldec/<site>`, or `pooled <type>`. */
  name: string;
  type: string;
  /** The family most of its questions read as. */
  family: string;
  n: number;
  /** Held-out skill: mean over its questions. */
  skill: number;
  informative: number;
  accuracy: number;
  brier: number;
  /** Brier before the skill model (brier-lite 4.0's way of answering, refit on these sets). */
  brierBefore: number;
  uniformBrier: number;
  ece: number;
  eceFloor: number;
  eceBefore: number;
  auc: number | null;
}

export interface SkillReport {
  floor: number;
  /** The shipped kernel's parameters. */
  sharpness: number;
  prior: number;
  /** Per set (native and generated questions together), per kind of question, per CalDec site. */
  sets: SkillRow[];
  units: SkillRow[];
  caldec: SkillRow[];
  pooled: SkillRow[];
  /** Kinds of question the shipped model answers uniform (skill below the floor): what it cannot do. */
  abstains: { unit: string; type: string; skill: number }[];
}

/** The coherence suite's result (src/training/coherence.ts `CoherenceReport`). */
export interface CoherenceSummary {
  model: string;
  laws: {
    law: string;
    byConstruction: boolean;
    cases: number;
    informative: number;
    violations: number;
    rate: number | null;
  }[];
  informativeRate: number;
  answers: number;
}

/** The paraphrase suite's summary (src/training/paraphrase.ts): stability and plain-group answers. */
export interface ParaphraseReport {
  groups: number;
  meanChange: number;
  maxChange: number;
  /** The group whose change is the largest. */
  maxGroup: string;
  byType: Record<string, { groups: number; meanChange: number; maxChange: number }>;
  /** Plain groups: accuracy and mean probability of the expected option, per type. */
  plain: Record<string, { wordings: number; accuracy: number; expectedProbability: number; abstained: number }>;
}

export function decodeFloats(s: string, expected: number, what: string): Float32Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.byteLength !== expected * 4)
    throw new Error(`model: ${what} has ${buf.byteLength / 4} floats, expected ${expected}`);
  const out = new Float32Array(expected);
  for (let i = 0; i < expected; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/**
 * weights.json, calibration.json and (brier-lite 4) zeroshot.json of the artifact in `dir`, as stored
 * (model.ts `parseModel` checks them); `zeroShot` is null where the artifact has none.
 */
export function readArtifactFiles(dir: string): {
  weights: WeightsFile;
  calibration: CalibrationFile;
  zeroShot: ZeroShotFile | null;
  skill: SkillFile | null;
} {
  const weights = JSON.parse(readFileSync(join(dir, 'weights.json'), 'utf8')) as WeightsFile;
  const calibration = JSON.parse(readFileSync(join(dir, 'calibration.json'), 'utf8')) as CalibrationFile;
  const zeroShotPath = join(dir, 'zeroshot.json');
  const zeroShot = existsSync(zeroShotPath) ? (JSON.parse(readFileSync(zeroShotPath, 'utf8')) as ZeroShotFile) : null;
  const skillPath = join(dir, 'skill.json');
  const skill = existsSync(skillPath) ? (JSON.parse(readFileSync(skillPath, 'utf8')) as SkillFile) : null;
  return { weights, calibration, zeroShot, skill };
}

/** The few numbers the console shows of one evaluation: null where report.json has no finite number. */
export interface CardMetrics {
  n: number;
  accuracy: number | null;
  brier: number | null;
  ece: number | null;
}

export interface CardComparison {
  model: CardMetrics;
  prior: CardMetrics | null;
  uniform: CardMetrics | null;
}

/** A model card as the console shows it. */
export interface ModelCard {
  title: string;
  markdown: string;
  /** Per question type: in-distribution ("seen") rows and tasks never trained on ("unseen"). */
  evaluation: Record<string, { seen: CardComparison | null; unseen: CardComparison | null }>;
}

function cardMetrics(value: unknown): CardMetrics | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  return { n: num(v.n) ?? 0, accuracy: num(v.accuracy), brier: num(v.brier), ece: num(v.ece) };
}

function cardComparison(value: unknown): CardComparison | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const model = cardMetrics(v.model);
  return model ? { model, prior: cardMetrics(v.prior), uniform: cardMetrics(v.uniform) } : null;
}

/**
 * Reads MODEL_CARD.md and report.json from `dir`; null when there is no card. The report is read
 * leniently (a card without numbers, or with a report of an older shape, is still a card).
 */
export async function readModelCard(dir: string): Promise<ModelCard | null> {
  let markdown: string;
  try {
    markdown = await readFile(join(dir, 'MODEL_CARD.md'), 'utf8');
  } catch {
    return null;
  }
  const title = (/^#\s+(.+)$/m.exec(markdown)?.[1] ?? 'Model card').trim();
  const evaluation: ModelCard['evaluation'] = {};
  try {
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Record<string, unknown>;
    // in distribution: every row of the training tasks, cross-validated (older reports: the held-out 20%)
    const seen = (report.seenAllRowsCrossValidated ?? report.seen ?? {}) as Record<string, unknown>;
    const unseen = (report.heldOutTasksShipped ?? report.leaveTasksOut ?? {}) as Record<string, unknown>;
    for (const type of ['noul', 'choice', 'score']) {
      evaluation[type] = { seen: cardComparison(seen[type]), unseen: cardComparison(unseen[type]) };
    }
  } catch {
    // A card without numbers is still a card.
  }
  return { title, markdown, evaluation };
}
