/**
 * Fitting the calibration that src/engines/embedded/calibration.ts applies: one (T, alpha) per
 * task (`fitCalibration`), and a map from question descriptors to (T, alpha)
 * (`fitCalibrationModel`, `fitDescriptorWeights`), by grid and coordinate search.
 */
import {
  type CalibrationModel,
  type CalibrationParams,
  calibrate,
  type DescriptorRange,
  resolveCalibration,
  UNIFORM,
} from '../engines/embedded/calibration.ts';
import { DESCRIPTORS } from '../engines/embedded/features.ts';
import { argmax } from '../lib/argmax.ts';
import { brierScore, type ConfidencePair, ece } from './evaluation.ts';

/**
 * Fits (T, alpha): minimizes the task-balanced mean NLL of the given held-out logits on a coarse
 * grid, then on a fine grid around its best point (steps of 5% in T and 0.01 in alpha), subject
 * (where `brierCap` is given) to every task's Brier staying within its cap, so that no held-out
 * task ends up worse than the uniform answer. The uniform answer (alpha = 1) costs no parameter,
 * so a fit replaces it only when it is better by more than its two parameters' worth of
 * likelihood (AIC: 2 nats over the rows); a fit that beats it by less is fitting noise. Falls back
 * to the uniform answer when nothing meets every cap.
 */
export function fitCalibration(
  items: { logits: number[]; target: number; task: string }[],
  brierCap?: (task: string) => number,
  brier?: (p: number[], target: number) => number,
  options: { minAlpha?: number } = {},
): CalibrationParams {
  // (the lowest uniform weight allowed: a model calibration raises it until every held-out set stays
  // at or below the uniform answer, src/training/model-calibration.ts)
  const minAlpha = options.minAlpha ?? 0;
  const tasks = new Map<string, number>();
  for (const it of items) tasks.set(it.task, (tasks.get(it.task) ?? 0) + 1);
  const lossOf = (c: CalibrationParams): number => {
    const nll = new Map<string, number>();
    const br = new Map<string, number>();
    for (const it of items) {
      const p = calibrate(it.logits, c);
      nll.set(it.task, (nll.get(it.task) ?? 0) - Math.log(Math.max(1e-12, p[it.target] ?? 0)));
      if (brier) br.set(it.task, (br.get(it.task) ?? 0) + brier(p, it.target));
    }
    let loss = 0;
    for (const [task, n] of tasks) {
      loss += (nll.get(task) ?? 0) / n / tasks.size;
      if (brierCap && brier && (br.get(task) ?? 0) / n > brierCap(task) + 1e-9) return Number.POSITIVE_INFINITY;
    }
    return loss;
  };
  const uniformLoss = lossOf(UNIFORM);
  let best = UNIFORM;
  let bestLoss = uniformLoss;
  const search = (temps: readonly number[], alphas: readonly number[]): void => {
    for (const temperature of temps)
      for (const alpha of alphas) {
        if (alpha >= 1 || alpha < minAlpha) continue;
        const c = { temperature, alpha };
        const loss = lossOf(c);
        if (loss < bestLoss) {
          bestLoss = loss;
          best = c;
        }
      }
  };
  search(
    [0.25, 0.35, 0.5, 0.7, 0.85, 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 14, 20, 30],
    [0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, minAlpha],
  );
  if (best !== UNIFORM) {
    const { temperature: t0, alpha: a0 } = best;
    const steps = [-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6];
    search(
      steps.map((j) => round(t0 * 1.05 ** j, 4)),
      steps.map((j) => round(a0 + 0.01 * j, 2)).filter((a) => a >= minAlpha),
    );
  }
  const rows = items.length / Math.max(1, tasks.size);
  return best !== UNIFORM && (uniformLoss - bestLoss) * rows > 2 ? best : UNIFORM;
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}

/** The range [min, max] of each descriptor in `indices` over `items`. */
export function descriptorSupport(
  items: readonly { d: readonly number[] }[],
  indices: readonly number[],
): DescriptorRange[] {
  return indices.map((index) => {
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const it of items) {
      const v = it.d[index] ?? 0;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return { index, min, max };
  });
}

/**
 * The descriptors of how the state relates to the options (indices into DESCRIPTORS): a question
 * whose values lie outside the range the `unseen` calibration was fitted on is in a regime no
 * training task showed (for example options that all closely resemble the state), and gets the
 * uniform answer rather than an extrapolated map. The others are not range-checked: ln k is the
 * question's format (the uniform prior 1/k is exact for any k), and the binary ones carry their
 * own fitted weights.
 */
export const RANGE_CHECKED_DESCRIPTORS: readonly number[] = [
  DESCRIPTORS.indexOf('10*sd(cos(s,o))'),
  DESCRIPTORS.indexOf('10*(top1-top2 cos(s,o))'),
  DESCRIPTORS.indexOf('10*(mean cos(s,o) - 0.2)'),
];

/**
 * Weight of a small ridge on the descriptor weights (not the intercepts) in the fit: a descriptor
 * that no fitted item exercises (hasPair, when the only pair task is the one left out) keeps weight
 * 0 instead of whatever grid value a joint move tried first, which left-out tasks then inherit.
 */
export const CALIBRATION_RIDGE = 1e-3;

export interface CalibrationItem {
  logits: number[];
  target: number;
  task: string;
  d: number[];
  /** A target distribution instead of the hard `target` (teacher-labelled data). */
  soft?: readonly number[];
}

export interface FitModelOptions {
  /** Coordinate-search sweeps. Default 3. */
  sweeps?: number;
  /**
   * Weight of the pooled ECE (15 bins on the top probability, over all items) added to the
   * task-balanced NLL. Default 0: NLL alone, which each task can satisfy with its own
   * miscalibration while the pooled answers are not calibrated.
   */
  eceWeight?: number;
}

/**
 * The loss a calibration model is fitted by: task-balanced mean NLL (cross-entropy for soft
 * targets), a small ridge on the descriptor weights, plus `eceWeight` times the pooled ECE; infinite
 * where a task's mean Brier exceeds its cap.
 */
function objective(
  items: CalibrationItem[],
  dims: number,
  brier: (p: number[], target: number) => number,
  cap: ((task: string) => number) | undefined,
  eceWeight: number,
): (m: CalibrationModel) => number {
  const tasks = new Map<string, number>();
  for (const it of items) tasks.set(it.task, (tasks.get(it.task) ?? 0) + 1);
  return (m: CalibrationModel): number => {
    const nll = new Map<string, number>();
    const br = new Map<string, number>();
    const pairs: ConfidencePair[] = [];
    for (const it of items) {
      const p = calibrate(it.logits, resolveCalibration(m, it.d));
      const soft = it.soft;
      let loss = 0;
      if (soft) for (let i = 0; i < p.length; i++) loss -= (soft[i] ?? 0) * Math.log(Math.max(1e-12, p[i] ?? 0));
      else loss = -Math.log(Math.max(1e-12, p[it.target] ?? 0));
      nll.set(it.task, (nll.get(it.task) ?? 0) + loss);
      if (cap) br.set(it.task, (br.get(it.task) ?? 0) + (soft ? brierScore(p, soft) : brier(p, it.target)));
      if (eceWeight > 0) {
        const top = argmax(p);
        pairs.push({ confidence: p[top] ?? 0, correct: top === (soft ? argmax(soft) : it.target) });
      }
    }
    let loss = 0;
    for (const [task, n] of tasks) {
      if (cap && (br.get(task) ?? 0) / n > cap(task) + 1e-9) return Number.POSITIVE_INFINITY;
      loss += (nll.get(task) ?? 0) / n / tasks.size;
    }
    let ridge = 0;
    for (let i = 1; i < dims; i++) ridge += (m.t[i] ?? 0) ** 2 + ((m.a[i] ?? 0) / 4) ** 2;
    loss += CALIBRATION_RIDGE * ridge;
    return eceWeight > 0 ? loss + eceWeight * ece(pairs) : loss;
  };
}

/**
 * Fits a CalibrationModel by coordinate search on a grid: minimizes the task-balanced mean NLL
 * (plus `eceWeight` times the pooled ECE), keeping (where `cap` is given) every task's mean Brier
 * within its cap. Starts from the fully shrunk map (alpha ~ 1), which always meets the caps, and
 * only accepts moves that keep them.
 */
export function fitCalibrationModel(
  items: CalibrationItem[],
  dims: number,
  brier: (p: number[], target: number) => number,
  cap?: (task: string) => number,
  options: FitModelOptions = {},
): CalibrationModel {
  const sweeps = options.sweeps ?? 3;
  const evaluate = objective(items, dims, brier, cap, options.eceWeight ?? 0);
  const start = (a0: number): CalibrationModel => ({
    t: new Array<number>(dims).fill(0),
    a: [a0, ...new Array<number>(dims - 1).fill(0)],
  });
  let best = start(cap ? 8 : -8);
  let bestLoss = evaluate(best);
  for (const a0 of [4, 2, 1, 0, -1, -2, -4, -8]) {
    const m = start(a0);
    const l = evaluate(m);
    if (l < bestLoss) {
      best = m;
      bestLoss = l;
    }
  }
  const grids: Record<'t' | 'a', number[][]> = {
    t: [
      [-1.5, -1, -0.7, -0.4, -0.2, 0, 0.2, 0.4, 0.7, 1, 1.5, 2, 2.5, 3],
      [-1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 1.5],
      [-0.6, -0.4, -0.25, -0.1, 0, 0.1, 0.25, 0.4, 0.6],
      [-0.5, -0.25, -0.1, 0, 0.1, 0.25, 0.5],
      [-1.5, -1.2, -1, -0.8, -0.6, -0.4, -0.25, -0.1, 0, 0.1, 0.25, 0.4, 0.6],
      [-1, -0.6, -0.3, -0.15, 0, 0.15, 0.3, 0.6, 1],
    ],
    a: [
      [-8, -6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 8],
      [-12, -10, -8, -6, -4, -3, -2, -1, 0, 1, 2, 4],
      [-4, -3, -2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1],
      [-2, -1, -0.5, -0.25, 0, 0.25, 0.5, 1],
      [-4, -3, -2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1],
      [-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4],
    ],
  };
  // a descriptor beyond the tuned grids gets a generic one (it is never left at 0 unsearched); one
  // that is 0 on every item is not searched at all: any other weight only adds ridge
  const generic: Record<'t' | 'a', number[]> = {
    t: [-1, -0.5, -0.25, 0, 0.25, 0.5, 1],
    a: [-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4],
  };
  const used = Array.from({ length: dims }, (_, i) => i === 0 || items.some((it) => (it.d[i] ?? 0) !== 0));
  const gridOf = (which: 't' | 'a', i: number): number[] => (used[i] ? (grids[which][i] ?? generic[which]) : [0]);
  const tryModel = (m: CalibrationModel): boolean => {
    const l = evaluate(m);
    if (l < bestLoss - 1e-9) {
      best = m;
      bestLoss = l;
      return true;
    }
    return false;
  };
  for (let sweep = 0; sweep < sweeps; sweep++) {
    let improved = false;
    // joint moves of the intercept and one descriptor weight, for alpha (the prior weight can drop
    // for one kind of question while staying high for the others) and for T (sharper for one kind
    // of question, softer for the rest: neither move alone may improve the fit)
    for (const which of ['a', 't'] as const) {
      for (let i = 1; i < dims; i++) {
        const base = best;
        for (const v0 of gridOf(which, 0)) {
          for (const vi of gridOf(which, i)) {
            const m: CalibrationModel = { t: [...base.t], a: [...base.a] };
            m[which][0] = v0;
            m[which][i] = vi;
            if (tryModel(m)) improved = true;
          }
        }
      }
    }
    for (const which of ['a', 't'] as const) {
      for (let i = 0; i < dims; i++) {
        for (const v of gridOf(which, i)) {
          const m: CalibrationModel = { t: [...best.t], a: [...best.a] };
          m[which][i] = v;
          if (tryModel(m)) improved = true;
        }
      }
    }
    if (!improved) break;
  }
  return best;
}

/**
 * Fits the weights (t_i, a_i) of one descriptor with the rest of `m` fixed, on items where that
 * descriptor is set (questions about JSON states, from teacher-labelled requests) and which the
 * rest of the model was never fitted on: the grid point with the lowest loss among those keeping
 * every task's Brier within its cap. Items where the descriptor is 0 answer exactly as before.
 */
export function fitDescriptorWeights(
  m: CalibrationModel,
  index: number,
  items: CalibrationItem[],
  brier: (p: number[], target: number) => number,
  cap: (task: string) => number,
): CalibrationModel {
  const evaluate = objective(items, m.t.length, brier, cap, 0);
  let best = m;
  let bestLoss = evaluate(m);
  // (40: exactly the uniform answer, which meets every cap)
  for (const ti of [-1, -0.5, -0.25, 0, 0.25, 0.5, 1])
    for (const ai of [-8, -4, -2, -1, 0, 1, 2, 4, 8, 12, 16, 40]) {
      const c: CalibrationModel = { ...m, t: [...m.t], a: [...m.a] };
      c.t[index] = ti;
      c.a[index] = ai;
      const l = evaluate(c);
      if (l < bestLoss - 1e-9) {
        best = c;
        bestLoss = l;
      }
    }
  return best;
}
