/**
 * Evaluation of probability answers: the metrics used by the quality bench (bench/quality), the
 * training pipeline, the calibration fit and the model card. One convention everywhere:
 *
 * - Brier: the CalDec convention, sum over options of (p - t)^2 DIVIDED BY THE NUMBER OF OPTIONS
 *   (so a noul answer of [0.5, 0.5] scores 0.25 whatever the label). Note this is the multi-class
 *   sum divided by k, so values are comparable only between answers with the same option counts.
 * - NLL: -sum_k t_k log p_k (natural log; p clipped at 1e-12).
 * - Accuracy and ECE: on items whose target has a unique maximum; the prediction is the argmax of
 *   p, and when several options share the top probability an item counts as 1/m correct if the
 *   label is among those m (the expectation under random tie-breaking; a uniform answer over k
 *   options is 1/k correct, never "right by list order"). ECE uses 15 equal-width bins on the top
 *   probability.
 * - Score MAE: |E_p[level] - E_t[level]| in levels (score questions only).
 * Targets are distributions (a hard label is one-hot).
 */

import type { Metrics } from '../engines/embedded/artifacts.ts';
import { brierScore, confidencePairs, ece, expectedLevel, nll } from '../lib/scoring.ts';
import { round2 } from '../systemone/answers.ts';

export interface MetricItem {
  p: readonly number[];
  t: readonly number[];
  /** Score questions: MAE is computed for these. */
  ordinal?: boolean;
}

// The scoring functions live in src/lib/scoring.ts (serving scores live outcomes with them too).
export {
  brierScore,
  type ConfidencePair,
  confidencePairs,
  ECE_BINS,
  ece,
  eceNoiseFloor,
  expectedLevel,
  nll,
  reliability,
} from '../lib/scoring.ts';
/** What computeMetrics returns (defined with the artifact files, as report.json stores it). */
export type { Metrics };

export function computeMetrics(items: readonly MetricItem[]): Metrics {
  let brier = 0;
  let logLoss = 0;
  let mae = 0;
  let nOrd = 0;
  for (const it of items) {
    brier += brierScore(it.p, it.t);
    logLoss += nll(it.p, it.t);
    if (it.ordinal) {
      mae += Math.abs(expectedLevel(it.p) - expectedLevel(it.t));
      nOrd++;
    }
  }
  const pairs = confidencePairs(items);
  const correct = pairs.reduce((a, x) => a + x.correct, 0);
  const n = items.length;
  return {
    n,
    nHard: pairs.length,
    accuracy: pairs.length ? correct / pairs.length : 0,
    brier: n ? brier / n : 0,
    nll: n ? logLoss / n : 0,
    ece: ece(pairs),
    scoreMae: nOrd ? mae / nOrd : null,
  };
}

/**
 * A probability vector as read back from the wire, where each value is rounded to 0.01: a 0.00 is
 * read as 0.0025 (the middle of [0, 0.005)) and the vector is renormalized, so NLL measures the
 * model rather than the rounding.
 */
export function fromWire(p: readonly number[]): number[] {
  const derounded = p.map((v) => (v <= 0 ? 0.0025 : v));
  const sum = derounded.reduce((x, y) => x + y, 0);
  return derounded.map((v) => v / sum);
}

/** What a client reads for an engine's vector: rounded to 0.01 as the wire does, then fromWire. */
export function asServed(p: readonly number[]): number[] {
  return fromWire(p.map(round2));
}

export function oneHot(k: number, index: number): number[] {
  const t = new Array<number>(k).fill(0);
  if (index >= 0 && index < k) t[index] = 1;
  return t;
}

export function uniform(k: number): number[] {
  return new Array<number>(k).fill(k > 0 ? 1 / k : 0);
}

/**
 * The majority-prior baseline: every item answered with the mean target distribution of its
 * group (the label frequencies of the evaluated set; it knows the labels' prior, so it is an
 * oracle a real model has to beat). Items must share their option count within a group.
 */
export function majorityPrior(targets: readonly (readonly number[])[]): number[] {
  const k = targets[0]?.length ?? 0;
  const sum = new Array<number>(k).fill(0);
  for (const t of targets) for (let i = 0; i < k; i++) sum[i] = (sum[i] ?? 0) + (t[i] ?? 0);
  return sum.map((v) => (targets.length ? v / targets.length : 0));
}

/** Metrics of the two baselines for a set of targets grouped by (dataset/question) key. */
export function baselineMetrics(groups: readonly { targets: readonly (readonly number[])[]; ordinal: boolean }[]): {
  prior: Metrics;
  uniform: Metrics;
} {
  const prior: MetricItem[] = [];
  const unif: MetricItem[] = [];
  for (const g of groups) {
    const p = majorityPrior(g.targets);
    for (const t of g.targets) {
      prior.push({ p, t, ordinal: g.ordinal });
      unif.push({ p: uniform(t.length), t, ordinal: g.ordinal });
    }
  }
  return { prior: computeMetrics(prior), uniform: computeMetrics(unif) };
}
