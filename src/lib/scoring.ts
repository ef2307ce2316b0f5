/**
 * Scoring probability answers against what turned out true, one convention everywhere (training,
 * benchmarks, and the served calibration report of live outcomes): see src/training/evaluation.ts for
 * the conventions (CalDec Brier divided by k, ECE on 15 equal-width bins of the top probability, ties
 * credited 1/m). Pure functions.
 */
import { argmax } from './argmax.ts';
import { mulberry32 } from './seeded.ts';

/** One answer and its target distribution (a hard label is one-hot). */
export interface ScoredItem {
  p: readonly number[];
  t: readonly number[];
}

export function uniqueMax(t: readonly number[]): number | null {
  const m = argmax(t);
  const top = t[m] ?? 0;
  for (let i = 0; i < t.length; i++) if (i !== m && (t[i] ?? 0) === top) return null;
  return m;
}

/** CalDec Brier: sum_k (p_k - t_k)^2 / k. */
export function brierScore(p: readonly number[], t: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < p.length; i++) s += ((p[i] ?? 0) - (t[i] ?? 0)) ** 2;
  return p.length > 0 ? s / p.length : 0;
}

export function nll(p: readonly number[], t: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < p.length; i++) if ((t[i] ?? 0) > 0) s -= (t[i] ?? 0) * Math.log(Math.max(1e-12, p[i] ?? 0));
  return s;
}

export function expectedLevel(p: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < p.length; i++) s += i * (p[i] ?? 0);
  return s;
}

export const ECE_BINS = 15;

/** `correct` is a boolean, or a fraction for tied top probabilities. */
export interface ConfidencePair {
  confidence: number;
  correct: boolean | number;
}

export function credit(c: boolean | number): number {
  return typeof c === 'number' ? c : c ? 1 : 0;
}

/** ECE over (confidence, correct) pairs, 15 equal-width bins on the top probability. */
export function ece(pairs: readonly ConfidencePair[], bins = ECE_BINS): number {
  if (pairs.length === 0) return 0;
  const conf = new Array<number>(bins).fill(0);
  const acc = new Array<number>(bins).fill(0);
  const cnt = new Array<number>(bins).fill(0);
  for (const { confidence, correct } of pairs) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(confidence * bins)));
    conf[b] = (conf[b] ?? 0) + confidence;
    acc[b] = (acc[b] ?? 0) + credit(correct);
    cnt[b] = (cnt[b] ?? 0) + 1;
  }
  let e = 0;
  for (let b = 0; b < bins; b++) {
    const n = cnt[b] ?? 0;
    if (n > 0) e += (n / pairs.length) * Math.abs((acc[b] ?? 0) / n - (conf[b] ?? 0) / n);
  }
  return e;
}

/**
 * The ECE a perfectly calibrated model shows by chance at these confidences and this sample size:
 * outcomes drawn as correct with probability = confidence, `draws` times (seeded), mean ECE. A
 * measured ECE at or near this floor cannot be told apart from perfect calibration with this many
 * items; only more items lower it.
 */
export function eceNoiseFloor(confidences: readonly number[], draws = 200, seed = 15): number {
  if (confidences.length === 0) return 0;
  const random = mulberry32(seed);
  const pairs: ConfidencePair[] = confidences.map((confidence) => ({ confidence, correct: false }));
  let total = 0;
  for (let d = 0; d < draws; d++) {
    for (const pair of pairs) pair.correct = random() < pair.confidence;
    total += ece(pairs);
  }
  return total / draws;
}

/** One row of a reliability table: a confidence bin, its count, mean confidence and accuracy. */
export interface ReliabilityBin {
  lo: number;
  hi: number;
  n: number;
  confidence: number;
  accuracy: number;
}

/** Reliability table rows: per bin, count, mean confidence and accuracy. */
export function reliability(pairs: readonly ConfidencePair[], bins = ECE_BINS): ReliabilityBin[] {
  const rows = Array.from({ length: bins }, (_, b) => ({
    lo: b / bins,
    hi: (b + 1) / bins,
    n: 0,
    confidence: 0,
    accuracy: 0,
  }));
  for (const { confidence, correct } of pairs) {
    const row = rows[Math.min(bins - 1, Math.max(0, Math.floor(confidence * bins)))];
    if (!row) continue;
    row.n++;
    row.confidence += confidence;
    row.accuracy += credit(correct);
  }
  for (const r of rows) {
    if (r.n > 0) {
      r.confidence /= r.n;
      r.accuracy /= r.n;
    }
  }
  return rows;
}

export function confidencePairs(items: readonly ScoredItem[]): { confidence: number; correct: number }[] {
  const out: { confidence: number; correct: number }[] = [];
  for (const it of items) {
    const gold = uniqueMax(it.t);
    if (gold === null) continue;
    const top = it.p[argmax(it.p)] ?? 0;
    let ties = 0;
    for (const v of it.p) if (v === top) ties++;
    out.push({ confidence: top, correct: it.p[gold] === top ? 1 / ties : 0 });
  }
  return out;
}
