/**
 * Stage B: per question type and family, the weights beta of [bilinear score, scalar features]
 * by task-balanced softmax regression (L2), then calibration (T, alpha) on held-out predictions.
 */

import { brierScore, oneHot } from '../../src/domain/metrics.ts';
import {
  type CalibrationModel,
  calibrate,
  descriptorSupport,
  fitCalibrationModel,
  resolveCalibration,
} from '../../src/engines/embedded/calibration.ts';
import { DESCRIPTORS, RANGE_CHECKED_DESCRIPTORS } from '../../src/engines/embedded/features.ts';
import { combine, softmax } from '../../src/engines/embedded/head.ts';
import { UNSEEN_ECE_WEIGHT } from './config.ts';

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

export interface HeldOut {
  task: string;
  p: number[];
  target: number;
}

/**
 * Leave-one-task-out for a type and family: for each task, beta and the calibration model are
 * fitted on the other tasks only (the calibration on their leave-task-out logits), then applied
 * to it. Each fit keeps the Brier of every task it is fitted on at or below the uniform answer's,
 * and answers uniform outside the range of the similarity descriptors it was fitted on.
 * Returns the held-out predictions and the shipped fit (all tasks).
 */
export function leaveTasksOut(
  rows: BRow[],
  dims: number,
  l2: number,
): { heldOut: HeldOut[]; beta: number[]; calibration: CalibrationModel } {
  const tasks = [...new Set(rows.map((r) => r.task))].sort();
  const kOf = new Map<string, number>();
  for (const r of rows) kOf.set(r.task, r.k);
  const betaWithout = new Map<string, number[]>();
  for (const t of tasks)
    betaWithout.set(
      t,
      fitBeta(
        rows.filter((r) => r.task !== t),
        dims,
        l2,
      ),
    );
  const oof = rows.map((r) => ({
    task: r.task,
    target: r.target,
    d: r.d,
    logits: combine(r.bil, r.psi, betaWithout.get(r.task) ?? [], r.k),
  }));
  // every fitted task's Brier stays at or below the uniform answer's: training sets too (scored by
  // heads refit without them, they are unseen tasks as much as the held-out sets are)
  const cap = (task: string): number => uniformBrier(kOf.get(task) ?? 2);
  const fitWithSupport = (items: typeof oof): CalibrationModel => ({
    ...fitCalibrationModel(items, DESCRIPTORS.length, hardBrier, cap, { eceWeight: UNSEEN_ECE_WEIGHT }),
    support: descriptorSupport(items, RANGE_CHECKED_DESCRIPTORS),
  });
  const heldOut: HeldOut[] = [];
  if (tasks.length > 1) {
    for (const t of tasks) {
      // calibration for t from the other tasks' out-of-task logits only (their betas saw t: a
      // leak of a few scalars, stated in the model card)
      const m = fitWithSupport(oof.filter((r) => r.task !== t));
      for (const r of oof)
        if (r.task === t)
          heldOut.push({ task: t, p: calibrate(r.logits, resolveCalibration(m, r.d)), target: r.target });
    }
  }
  const beta = fitBeta(rows, dims, l2);
  const calibration = fitWithSupport(oof);
  return { heldOut, beta, calibration };
}
