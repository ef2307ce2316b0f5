/**
 * Stage B: per question type and family, the weights beta of [bilinear score, scalar features]
 * by task-balanced softmax regression (L2), then calibration (T, alpha) on held-out predictions.
 */

import type { Hindsight } from '../engines/embedded/artifacts.ts';
import { type CalibrationModel, calibrate, resolveCalibration } from '../engines/embedded/calibration.ts';
import { DESCRIPTORS } from '../engines/embedded/features.ts';
import { combine, softmax } from '../engines/embedded/head.ts';
import {
  type CalibrationItem,
  descriptorSupport,
  fitCalibration,
  fitCalibrationModel,
  RANGE_CHECKED_DESCRIPTORS,
} from './calibration-fit.ts';
import { UNSEEN_ECE_WEIGHT } from './config.ts';
import { brierScore, oneHot } from './evaluation.ts';

export interface BRow {
  task: string;
  /** Question descriptors (features.ts `descriptors`). */
  d: number[];
  k: number;
  bil: Float64Array;
  psi: Float64Array;
  target: number;
}

export function fitBeta(rows: BRow[], dims: number, l2: number, iters = 400): number[] {
  const beta = new Float64Array(dims + 1);
  const m1 = new Float64Array(dims + 1);
  const m2 = new Float64Array(dims + 1);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.task, (counts.get(r.task) ?? 0) + 1);
  const nTasks = counts.size;
  if (rows.length === 0) return [...beta];
  for (let it = 1; it <= iters; it++) {
    const grad = new Float64Array(dims + 1);
    for (const r of rows) {
      const scale = 1 / ((counts.get(r.task) ?? 1) * nTasks);
      const p = softmax(combine(r.bil, r.psi, beta, r.k));
      for (let k = 0; k < r.k; k++) {
        const gk = ((p[k] ?? 0) - (k === r.target ? 1 : 0)) * scale;
        if (gk === 0) continue;
        grad[0] = (grad[0] ?? 0) + gk * (r.bil[k] ?? 0);
        for (let f = 0; f < dims; f++) grad[f + 1] = (grad[f + 1] ?? 0) + gk * (r.psi[k * dims + f] ?? 0);
      }
    }
    const lr = 0.05;
    for (let j = 0; j <= dims; j++) {
      const gj = (grad[j] ?? 0) + l2 * (beta[j] ?? 0);
      m1[j] = 0.9 * (m1[j] ?? 0) + 0.1 * gj;
      m2[j] = 0.999 * (m2[j] ?? 0) + 0.001 * gj * gj;
      beta[j] =
        (beta[j] ?? 0) - (lr * ((m1[j] ?? 0) / (1 - 0.9 ** it))) / (Math.sqrt((m2[j] ?? 0) / (1 - 0.999 ** it)) + 1e-8);
    }
  }
  return [...beta];
}

/** CalDec Brier of the uniform answer for a hard label over k options: (k - 1) / k^2. */
export function uniformBrier(k: number): number {
  return (k - 1) / (k * k);
}

export function hardBrier(p: number[], target: number): number {
  return brierScore(p, oneHot(p.length, target));
}

export type { Hindsight };

export interface HeldOut {
  task: string;
  p: number[];
  target: number;
  /** The logits before calibration (beta fitted without the task) and the question's descriptors. */
  logits: number[];
  d: number[];
}

/**
 * Softness values tried for the support shrink (calibration.ts `CalibrationModel.softness`),
 * smoothest first; 0 stands for the step (the uniform answer at once outside the ranges).
 */
export const SOFTNESS_GRID = [2, 1, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05, 0] as const;

/**
 * The smoothest softness under which every left-out task keeps its Brier at or below the uniform
 * answer's (each task answered by the calibration fitted without it). 0 (the step) when none does.
 */
export function fitSoftness(
  heldOut: readonly (HeldOut & { model: CalibrationModel })[],
  cap: (task: string) => number,
): number {
  const tasks = [...new Set(heldOut.map((h) => h.task))];
  for (const softness of SOFTNESS_GRID) {
    const brier = new Map<string, { sum: number; n: number }>();
    for (const h of heldOut) {
      const p = calibrate(h.logits, resolveCalibration({ ...h.model, softness }, h.d));
      const b = brier.get(h.task) ?? { sum: 0, n: 0 };
      b.sum += hardBrier(p, h.target);
      b.n++;
      brier.set(h.task, b);
    }
    if (
      tasks.every((t) => {
        const b = brier.get(t);
        return !b || b.sum / b.n <= cap(t) + 1e-9;
      })
    )
      return softness;
  }
  return 0;
}

/**
 * A diagnosis of the leave-tasks-out calibration, never shipped: each left-out task calibrated
 * with hindsight, by one (T, alpha) fitted on its own labels (calibration-fit.ts `fitCalibration`).
 * Where tasks with similar descriptors need very different (T, alpha), no map from the
 * descriptors can calibrate them all.
 */
export function hindsightCalibration(heldOut: readonly HeldOut[]): Hindsight[] {
  const tasks = [...new Set(heldOut.map((h) => h.task))].sort();
  return tasks.map((task) => {
    const items = heldOut.filter((h) => h.task === task);
    const c = fitCalibration(items);
    let brier = 0;
    for (const it of items) brier += hardBrier(calibrate(it.logits, c), it.target);
    const dims = items[0]?.d.length ?? 0;
    const meanD = Array.from({ length: dims }, (_, i) => items.reduce((a, it) => a + (it.d[i] ?? 0), 0) / items.length);
    return { task, k: items[0]?.logits.length ?? 0, ...c, brier: brier / items.length, meanD };
  });
}

/**
 * Leave-one-task-out for a type and family: for each task, beta and the calibration model are
 * fitted on the other tasks only, then applied to it. The calibration is fitted on logits that
 * no fit saw: each other task's rows scored by a beta fitted without both tasks (leave two out),
 * so that nothing fitted for a held-out task has seen it. Each fit keeps the Brier of every task
 * it is fitted on at or below the uniform answer's, and answers uniform outside the range of the
 * similarity descriptors it was fitted on, shrinking toward it the further a question lies outside
 * (the smoothest softness that keeps every left-out task at or below uniform, fitSoftness). Returns
 * the held-out predictions and the shipped fit (all tasks: beta on every task, the calibration on
 * leave-one-out logits, with that softness).
 */
export function leaveTasksOut(
  rows: BRow[],
  dims: number,
  l2: number,
): { heldOut: HeldOut[]; beta: number[]; calibration: CalibrationModel } {
  const tasks = [...new Set(rows.map((r) => r.task))].sort();
  const kOf = new Map<string, number>();
  for (const r of rows) kOf.set(r.task, r.k);
  const betas = new Map<string, number[]>();
  /** Beta fitted on every task but `excluded` (memoized: the held-out and shipped fits share them). */
  const betaWithout = (excluded: readonly string[]): number[] => {
    const key = [...excluded].sort().join('\n');
    let beta = betas.get(key);
    if (!beta) {
      beta = fitBeta(
        rows.filter((r) => !excluded.includes(r.task)),
        dims,
        l2,
      );
      betas.set(key, beta);
    }
    return beta;
  };
  /** The rows of each task in `of`, scored by a beta fitted without it and without `without`. */
  const scoredWithout = (without: readonly string[], of: readonly string[]): CalibrationItem[] =>
    of.flatMap((task) => {
      const beta = betaWithout([...without, task]);
      return rows
        .filter((r) => r.task === task)
        .map((r) => ({ task, target: r.target, d: r.d, logits: combine(r.bil, r.psi, beta, r.k) }));
    });
  // every fitted task's Brier stays at or below the uniform answer's: training sets too (scored by
  // heads refit without them, they are unseen tasks as much as the held-out sets are)
  const cap = (task: string): number => uniformBrier(kOf.get(task) ?? 2);
  const fitWithSupport = (items: CalibrationItem[]): CalibrationModel => ({
    ...fitCalibrationModel(items, items[0]?.d.length ?? DESCRIPTORS.length, hardBrier, cap, {
      eceWeight: UNSEEN_ECE_WEIGHT,
    }),
    support: descriptorSupport(items, RANGE_CHECKED_DESCRIPTORS),
  });
  // every task's rows scored by the beta fitted without it: what the held-out fits answer, and what
  // the shipped calibration is fitted on
  const oneOut = scoredWithout([], tasks);
  const fitted: (HeldOut & { model: CalibrationModel })[] = [];
  if (tasks.length > 1) {
    for (const t of tasks) {
      const model = fitWithSupport(
        scoredWithout(
          [t],
          tasks.filter((u) => u !== t),
        ),
      );
      for (const r of oneOut) if (r.task === t) fitted.push({ ...r, p: [], model });
    }
  }
  const softness = fitSoftness(fitted, cap);
  const heldOut: HeldOut[] = fitted.map(({ model, ...h }) => ({
    ...h,
    p: calibrate(h.logits, resolveCalibration({ ...model, softness }, h.d)),
  }));
  const beta = betaWithout([]);
  const calibration = { ...fitWithSupport(oneOut), ...(softness > 0 ? { softness } : {}) };
  return { heldOut, beta, calibration };
}
