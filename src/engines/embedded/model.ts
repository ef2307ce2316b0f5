/**
 * The model parsed from the shipped artifact (models/brier-lite/weights.json + calibration.json,
 * whose file types are in artifacts.ts) and the pure prediction path from a `QuestionInput` to a
 * probability vector. Shared by the engine, the training pipeline and the tests, so all three
 * compute exactly the same numbers.
 */
import {
  CALIBRATION_FORMAT,
  type CalibrationFile,
  decodeFloats,
  type Familiarity,
  type Family,
  type PolarityCalibration,
  readArtifactFiles,
  WEIGHTS_FORMAT,
  type WeightsFile,
} from './artifacts.ts';
import { type CalibrationParams, calibrate, resolveCalibration } from './calibration.ts';
import {
  DESCRIPTORS,
  descriptors,
  dot,
  levelPosition,
  type PolarityAxis,
  type QuestionInput,
  type QuestionType,
  SCALAR_FEATURES,
  scalarFeatures,
} from './features.ts';
import { type BilinearWeights, bilinearForward, combine, type LowRank } from './head.ts';
import { EMBEDDING_DIM } from './pool.ts';

export interface Signature {
  task: string;
  type: QuestionType;
  k: number;
  instruction: Float32Array;
}

export interface Model {
  id: string;
  weights: BilinearWeights;
  polarity: PolarityAxis;
  signatures: Signature[];
  calibration: CalibrationFile;
  window: number;
}

export function parseModel(weights: WeightsFile, calibration: CalibrationFile): Model {
  if (weights.format !== WEIGHTS_FORMAT) throw new Error(`model: unknown weights format ${weights.format}`);
  if (calibration.format !== CALIBRATION_FORMAT)
    throw new Error(`model: unknown calibration format ${calibration.format}`);
  if (weights.dim !== EMBEDDING_DIM) throw new Error(`model: dim ${weights.dim} != ${EMBEDDING_DIM}`);
  const f = calibration.familiarity;
  if (!(f && Number.isFinite(f.center) && Number.isFinite(f.width) && f.width > 0))
    throw new Error('model: calibration familiarity malformed');
  const pol = calibration.polarity;
  if (
    !(
      pol &&
      [pol.center, pol.gamma, pol.delta ?? 0].every(Number.isFinite) &&
      pol.width > 0 &&
      (pol.saturation === undefined || (Number.isFinite(pol.saturation) && pol.saturation > 0)) &&
      pol.alpha >= 0 &&
      pol.alpha <= 1
    )
  )
    throw new Error('model: calibration polarity malformed');
  const b = weights.bilinear;
  /** One type's rank (a positive integer) and its U, V matrices (decodeFloats checks their size). */
  const lowRank = (type: QuestionType): LowRank => {
    const rank = b[type].rank;
    if (!(Number.isInteger(rank) && rank > 0)) throw new Error(`model: ${type} rank malformed`);
    return {
      rank,
      U: decodeFloats(b[type].U, EMBEDDING_DIM * rank, `${type}.U`),
      V: decodeFloats(b[type].V, EMBEDDING_DIM * rank, `${type}.V`),
    };
  };
  for (const type of ['noul', 'choice', 'score'] as const) {
    for (const fam of ['seen', 'unseen'] as const) {
      const c = calibration.types[type]?.[fam];
      if (
        !c ||
        c.beta.length !== SCALAR_FEATURES[type].length + 1 ||
        c.t.length !== DESCRIPTORS.length ||
        c.a.length !== DESCRIPTORS.length ||
        (c.softness !== undefined && !(Number.isFinite(c.softness) && c.softness > 0)) ||
        (c.support ?? []).some(
          (r) =>
            !(
              r.index >= 0 &&
              r.index < DESCRIPTORS.length &&
              Number.isFinite(r.min) &&
              Number.isFinite(r.max) &&
              r.min <= r.max
            ),
        )
      )
        throw new Error(`model: calibration ${type}/${fam} malformed`);
    }
  }
  const score = lowRank('score');
  return {
    id: weights.modelId,
    window: weights.window,
    weights: {
      noul: lowRank('noul'),
      choice: lowRank('choice'),
      score: {
        ...score,
        P: decodeFloats(b.score.P, EMBEDDING_DIM * score.rank, 'score.P'),
        Q: decodeFloats(b.score.Q, EMBEDDING_DIM * score.rank, 'score.Q'),
      },
    },
    polarity: {
      axis: decodeFloats(weights.polarity.axis, EMBEDDING_DIM, 'polarity.axis'),
      levels: decodeFloats(weights.polarity.levels ?? weights.polarity.axis, EMBEDDING_DIM, 'polarity.levels'),
      center: decodeFloats(weights.polarity.center, EMBEDDING_DIM, 'polarity.center'),
      scale: weights.polarity.scale,
    },
    signatures: weights.signatures.map((s) => ({
      ...s,
      instruction: decodeFloats(s.instruction, EMBEDDING_DIM, 'signature'),
    })),
    calibration,
  };
}

export function loadModel(dir: string): Model {
  const { weights, calibration } = readArtifactFiles(dir);
  return parseModel(weights, calibration);
}

/**
 * The training task whose instruction is nearest to the question's (same type and option count),
 * with its cosine; null when the question has no instructions or no task has its shape.
 */
export function nearestTask(
  x: QuestionInput,
  signatures: readonly Signature[],
): { task: string; similarity: number } | null {
  if (!x.i) return null;
  let best: { task: string; similarity: number } | null = null;
  for (const s of signatures) {
    if (s.type !== x.type || s.k !== x.k) continue;
    const similarity = dot(x.i, s.instruction);
    if (!best || similarity > best.similarity) best = { task: s.task, similarity };
  }
  return best;
}

/** The weight of the `seen` answer at an instruction cosine: sigmoid((similarity - center) / width). */
export function familiarityWeight(similarity: number, f: Familiarity): number {
  return 1 / (1 + Math.exp(-(similarity - f.center) / f.width));
}

export interface Prediction {
  probabilities: number[];
  /** The logits of the family with the larger weight. */
  logits: number[];
  /** `seen` when the nearest training task's answer weighs at least half. */
  family: Family;
  /** The nearest training task (same type and option count), if any. */
  task: string | null;
  /** The weight of that task's `seen` answer in the probabilities (0 without a task). */
  seenWeight: number;
  /** The calibration of the family with the larger weight. */
  calibration: CalibrationParams;
}

/** The logits of the head for a family (before calibration). */
export function headLogits(x: QuestionInput, model: Model, family: Family): number[] {
  const c = model.calibration.types[x.type][family];
  const bil = bilinearForward(x, model.weights).bil;
  return combine(bil, scalarFeatures(x), c.beta, x.k);
}

/** The weight of the polarity answer for a scale's cosine with the axis: sigmoid((|scale| - center) / width). */
export function polarityWeight(scale: number, c: PolarityCalibration): number {
  return 1 / (1 + Math.exp(-(Math.abs(scale) - c.center) / c.width));
}

/** The answer read from the state's place on the polarity axis alone (artifacts.ts `PolarityCalibration`). */
export function polarityAnswer(state: number, sign: number, k: number, c: PolarityCalibration): number[] {
  const z = c.saturation === undefined ? state : c.saturation * Math.tanh(state / c.saturation);
  const logits = Array.from({ length: k }, (_, j) => {
    const u = levelPosition(j, k);
    return c.gamma * u * z * sign + (c.delta ?? 0) * u * u;
  });
  return calibrate(logits, { temperature: 1, alpha: c.alpha });
}

/**
 * The answer: the `unseen` family's, blended with the nearest training task's `seen` answer by the
 * familiarity weight (a question asked as in training gets its task's answer; reworded, it moves
 * toward the unseen answer gradually); for a score question whose scale runs along the polarity axis,
 * blended again with the polarity answer by the polarity weight.
 */
export function predict(x: QuestionInput, model: Model): Prediction {
  const base = predictBase(x, model);
  if (x.type !== 'score' || !x.polarity) return base;
  const wp = polarityWeight(x.polarity.scale, model.calibration.polarity);
  const pol = polarityAnswer(x.polarity.state, Math.sign(x.polarity.scale), x.k, model.calibration.polarity);
  return { ...base, probabilities: base.probabilities.map((p, i) => wp * (pol[i] ?? 0) + (1 - wp) * p) };
}

function predictBase(x: QuestionInput, model: Model): Prediction {
  const near = nearestTask(x, model.signatures);
  const d = descriptors(x);
  const bil = bilinearForward(x, model.weights).bil;
  const psi = scalarFeatures(x);
  const answerOf = (family: Family) => {
    const c = model.calibration.types[x.type][family];
    const logits = combine(bil, psi, c.beta, x.k);
    const params = (family === 'seen' && near ? c.tasks?.[near.task] : undefined) ?? resolveCalibration(c, d);
    return { logits, params, p: calibrate(logits, params) };
  };
  const unseen = answerOf('unseen');
  const w = near ? familiarityWeight(near.similarity, model.calibration.familiarity) : 0;
  if (w === 0) {
    return {
      probabilities: unseen.p,
      logits: unseen.logits,
      family: 'unseen',
      task: null,
      seenWeight: 0,
      calibration: unseen.params,
    };
  }
  const seen = answerOf('seen');
  const probabilities = seen.p.map((p, i) => w * p + (1 - w) * (unseen.p[i] ?? 0));
  const top = w >= 0.5 ? seen : unseen;
  return {
    probabilities,
    logits: top.logits,
    family: w >= 0.5 ? 'seen' : 'unseen',
    task: near?.task ?? null,
    seenWeight: w,
    calibration: top.params,
  };
}
