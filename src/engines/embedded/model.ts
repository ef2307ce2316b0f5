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
  type PoolFile,
  readArtifactFiles,
  type SignalMapFile,
  SKILL_FORMAT,
  type SkillFile,
  WEIGHTS_FORMAT,
  type WeightsFile,
  ZEROSHOT_FORMAT,
  type ZeroShotFile,
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
import { MINILM_DIM } from './minilm.ts';
import { EMBEDDING_DIM } from './pool.ts';
import { type SkillModel, skillOf, withSkill } from './skill.ts';
import {
  knownSignals,
  type ReferencePool,
  type SignalMap,
  type ZeroShotInput,
  type ZeroShotModel,
  zeroShotAnswer,
} from './zero-shot.ts';

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
  /** brier-lite 4's zero-shot families (zeroshot.json); null for earlier artifacts, which answer as they did. */
  zeroShot: ZeroShotModel | null;
  /** brier-lite 4.1's skill model (skill.json); null for earlier artifacts, whose answers are not gated. */
  skill: SkillModel | null;
}

function parsePool(p: PoolFile, dim: number, what: string): ReferencePool {
  if (p.dim !== dim || !(Number.isInteger(p.rank) && p.rank >= 0 && p.rank <= dim) || p.variances.length !== p.rank)
    throw new Error(`model: zeroshot pool ${what} malformed`);
  if (![p.residual, ...p.variances].every((v) => Number.isFinite(v) && v >= 0))
    throw new Error(`model: zeroshot pool ${what} malformed`);
  return {
    dim,
    mean: decodeFloats(p.mean, dim, `${what}.mean`),
    basis: decodeFloats(p.basis, dim * p.rank, `${what}.basis`),
    variances: Float32Array.from(p.variances),
    residual: p.residual,
  };
}

function parseSignalMap(m: SignalMapFile | null, choice: boolean, what: string): SignalMap | null {
  if (m === null) return null;
  const ok =
    Array.isArray(m.signals) &&
    [m.bias, m.alpha, ...m.weights].every(Number.isFinite) &&
    m.alpha >= 0 &&
    m.alpha <= 1 &&
    knownSignals(m, choice);
  if (!ok) throw new Error(`model: zeroshot map ${what} malformed`);
  return { signals: [...m.signals], weights: [...m.weights], bias: m.bias, alpha: m.alpha };
}

/** zeroshot.json, checked: pools of the right sizes, maps over known signals with finite numbers. */
export function parseZeroShot(file: ZeroShotFile): ZeroShotModel {
  if (file.format !== ZEROSHOT_FORMAT) throw new Error(`model: unknown zeroshot format ${file.format}`);
  if (!(Number.isFinite(file.saturation) && file.saturation > 0))
    throw new Error('model: zeroshot saturation malformed');
  return {
    pools: {
      minilm: parsePool(file.pools.minilm, MINILM_DIM, 'minilm'),
      use: parsePool(file.pools.use, EMBEDDING_DIM, 'use'),
    },
    noul: {
      content: parseSignalMap(file.noul.content, false, 'noul.content'),
      polarity: parseSignalMap(file.noul.polarity, false, 'noul.polarity'),
      pair: parseSignalMap(file.noul.pair, false, 'noul.pair'),
    },
    choice: parseSignalMap(file.choice, true, 'choice'),
    saturation: file.saturation,
  };
}

export function parseModel(
  weights: WeightsFile,
  calibration: CalibrationFile,
  zeroShot: ZeroShotFile | null = null,
  skill: SkillFile | null = null,
): Model {
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
    zeroShot: zeroShot ? parseZeroShot(zeroShot) : null,
    skill: skill ? parseSkill(skill, weights.modelId) : null,
  };
}

/** skill.json, checked: known format, the model's id, finite parameters, unit vectors of the encoder's size. */
export function parseSkill(file: SkillFile, modelId: string): SkillModel {
  if (file.format !== SKILL_FORMAT) throw new Error(`model: unknown skill format ${file.format}`);
  if (file.modelId !== modelId) throw new Error(`model: skill.json is for ${file.modelId}, not ${modelId}`);
  const finite = (v: number, min: number) => Number.isFinite(v) && v >= min;
  if (
    !(
      finite(file.sharpness, 0) &&
      finite(file.prior, 0) &&
      finite(file.floor, 0) &&
      file.floor <= 1 &&
      finite(file.quantile, 0) &&
      file.quantile <= 1
    )
  )
    throw new Error('model: skill parameters malformed');
  return {
    sharpness: file.sharpness,
    prior: file.prior,
    quantile: file.quantile,
    floor: file.floor,
    units: file.units.map((u) => {
      if (!(finite(u.skill, 0) && u.skill <= 1 && finite(u.weight, 0)) || !['noul', 'choice', 'score'].includes(u.type))
        throw new Error(`model: skill unit ${u.name} malformed`);
      return { ...u, centroid: decodeFloats(u.centroid, EMBEDDING_DIM, `skill ${u.name}`) };
    }),
  };
}

export function loadModel(dir: string): Model {
  const { weights, calibration, zeroShot, skill } = readArtifactFiles(dir);
  return parseModel(weights, calibration, zeroShot, skill);
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
  const z = saturate(state, c);
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
  const answer = predictUngated(x, model);
  // an input built without frames (not by features.ts buildInput, which always sets one) is not gated
  if (!model.skill || x.frame === undefined) return answer;
  // a training task asked as in training keeps its in-distribution answer: the skill model measures
  // answers to kinds of question the model was not fitted on
  const s = Math.max(answer.seenWeight, skillOf(model.skill, x.type, x.frame ?? null));
  return { ...answer, probabilities: withSkill(answer.probabilities, s, model.skill.floor) };
}

/** The answer before the skill model (brier-lite 4.0's whole answer; training measures skill on it). */
export function predictUngated(x: QuestionInput, model: Model): Prediction {
  const base = predictBase(x, model, model.zeroShot ? zeroShotOf(x, model.zeroShot) : null);
  const negated = model.zeroShot !== null && x.type === 'noul' && x.reading?.negated === true;
  if (negated) return { ...base, probabilities: [base.probabilities[1] ?? 0.5, base.probabilities[0] ?? 0.5] };
  if (x.type !== 'score' || !x.polarity) return base;
  // brier-lite 4: a scale the question's words call a polarity (stars, satisfaction) is one, on its side
  const read = model.zeroShot && x.reading?.family === 'polarity' ? x.reading.direction : 0;
  const wp = read !== 0 ? 1 : polarityWeight(x.polarity.scale, model.calibration.polarity);
  const sign = read !== 0 ? read : Math.sign(x.polarity.scale);
  const pol = polarityAnswer(x.polarity.state, sign, x.k, model.calibration.polarity);
  return { ...base, probabilities: base.probabilities.map((p, i) => wp * (pol[i] ?? 0) + (1 - wp) * p) };
}

/** s(z): the state's place read through the polarity answer's saturation (identity without one). */
export function saturate(z: number, c: Pick<PolarityCalibration, 'saturation'>): number {
  return c.saturation === undefined ? z : c.saturation * Math.tanh(z / c.saturation);
}

/**
 * The zero-shot answer of a question (zero-shot.ts), or null where its family has none. A yes/no
 * question about a JSON state gets none: the maps were fitted on text states, and on the half of
 * CalDec's assistant decisions that fits the `structured` weights (JSON states, teacher targets) their
 * yes/no answers were worse than uniform (Brier 0.1549 against 0.1420; its choices were better,
 * 0.1048 against 0.1172, and keep theirs).
 */
function zeroShotOf(x: QuestionInput, zs: ZeroShotModel): number[] | null {
  if (x.structured && x.type === 'noul') return null;
  const input = zeroShotInput(x, zs.saturation);
  return input ? zeroShotAnswer(zs, x.type, x.k, input) : null;
}

/** What the zero-shot answer reads of a question input (training builds its items with it too). */
export function zeroShotInput(x: QuestionInput, saturation: number): ZeroShotInput | null {
  const r = x.reading;
  if (!r) return null;
  return {
    family: r.family,
    direction: r.direction,
    emotion: r.emotion,
    optionSides: r.optionSides,
    residual: r.residual,
    stateMini: x.mini?.s ?? null,
    stateUse: x.s,
    questionMini: x.type === 'noul' ? (x.mini?.o[1] ?? null) : null,
    questionUse: x.type === 'noul' ? (x.o[1] ?? null) : null,
    optionsMini: x.mini?.o ?? [],
    optionsUse: x.o,
    polarity: saturate(x.polarity?.state ?? 0, { saturation }),
    pairMini: x.mini?.pairSim ?? null,
    pairUse: x.pairSim,
    lnWords: x.lnWords ?? 0,
  };
}

/**
 * The seen/unseen blend; `zeroShot` (brier-lite 4), where the question's family has an answer, takes
 * the place of the unseen family's answer.
 */
function predictBase(x: QuestionInput, model: Model, zeroShot: number[] | null = null): Prediction {
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
  const computed = answerOf('unseen');
  const unseen = zeroShot ? { ...computed, p: zeroShot } : computed;
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
