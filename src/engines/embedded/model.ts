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
  type Family,
  readArtifactFiles,
  WEIGHTS_FORMAT,
  type WeightsFile,
} from './artifacts.ts';
import { type CalibrationParams, calibrate, resolveCalibration } from './calibration.ts';
import {
  DESCRIPTORS,
  descriptors,
  dot,
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
  signatures: Signature[];
  calibration: CalibrationFile;
  window: number;
}

export function parseModel(weights: WeightsFile, calibration: CalibrationFile): Model {
  if (weights.format !== WEIGHTS_FORMAT) throw new Error(`model: unknown weights format ${weights.format}`);
  if (calibration.format !== CALIBRATION_FORMAT)
    throw new Error(`model: unknown calibration format ${calibration.format}`);
  if (weights.dim !== EMBEDDING_DIM) throw new Error(`model: dim ${weights.dim} != ${EMBEDDING_DIM}`);
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
 * `seen` when the question matches a training task: same type and option count and an instruction
 * whose cosine with that task's instruction reaches the familiarity threshold.
 */
export function detectFamily(
  x: QuestionInput,
  signatures: readonly Signature[],
  threshold: number,
): { family: Family; task: string | null } {
  if (!x.i) return { family: 'unseen', task: null };
  let best: Signature | null = null;
  let bestSim = threshold;
  for (const s of signatures) {
    if (s.type !== x.type || s.k !== x.k) continue;
    const sim = dot(x.i, s.instruction);
    if (sim >= bestSim) {
      best = s;
      bestSim = sim;
    }
  }
  return best ? { family: 'seen', task: best.task } : { family: 'unseen', task: null };
}

export interface Prediction {
  probabilities: number[];
  logits: number[];
  family: Family;
  /** The training task a `seen` question matched. */
  task: string | null;
  calibration: CalibrationParams;
}

/** The logits of the head for a family (before calibration). */
export function headLogits(x: QuestionInput, model: Model, family: Family): number[] {
  const c = model.calibration.types[x.type][family];
  const bil = bilinearForward(x, model.weights).bil;
  return combine(bil, scalarFeatures(x), c.beta, x.k);
}

export function predict(x: QuestionInput, model: Model): Prediction {
  const { family, task } = detectFamily(x, model.signatures, model.calibration.familiarity);
  const c = model.calibration.types[x.type][family];
  const logits = headLogits(x, model, family);
  const params = (task ? c.tasks?.[task] : undefined) ?? resolveCalibration(c, descriptors(x));
  return { probabilities: calibrate(logits, params), logits, family, task, calibration: params };
}
