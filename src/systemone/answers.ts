/**
 * System One answer maths, free of HTTP: an engine's distributions into wire answers (rounding to
 * hundredths that sum to 1, confidence, expected score).
 */

import { argmax } from '../lib/argmax.ts';
import type { WireAnswer, WireQuestion } from './protocol.ts';

/** Two decimals, half away from zero, as the wire promises. */
export function round2(x: number): number {
  return Math.round((x + Math.sign(x) * Number.EPSILON) * 100) / 100;
}

/** Renormalises an engine's vector; rejects anything that is not a distribution. */
export function normalize(p: number[], expected: number): number[] {
  if (p.length !== expected) throw new Error(`engine returned ${p.length} probabilities for ${expected} options`);
  let sum = 0;
  for (const x of p) {
    if (!Number.isFinite(x) || x < 0) throw new Error(`engine returned a non-probability ${x}`);
    sum += x;
  }
  if (!(sum > 0)) throw new Error('engine returned an all-zero distribution');
  return p.map((x) => x / sum);
}

/** clip((k * pmax - 1) / (k - 1), 0, 1) */
export function choiceConfidence(p: number[]): number {
  const k = p.length;
  const pmax = Math.max(...p);
  return Math.min(1, Math.max(0, (k * pmax - 1) / (k - 1)));
}

/** max(0, 1 - sum_i p_i |i - m| / MADu), m = argmax (or the given mode), MADu = (1/n) sum_i |i - (n-1)/2| */
export function scoreConfidence(p: number[], m = argmax(p)): number {
  const n = p.length;
  let spread = 0;
  let madU = 0;
  for (let i = 0; i < n; i++) {
    spread += (p[i] ?? 0) * Math.abs(i - m);
    madU += Math.abs(i - (n - 1) / 2) / n;
  }
  return Math.max(0, 1 - spread / madU);
}

/**
 * A distribution in whole hundredths that sum to exactly 100 (largest remainder): each p·100 rounded
 * down, then the hundredths left over, one each, to the largest remainders (ties: the earlier
 * option). Each value stays within one hundredth of p·100, and an option at least as likely as
 * another never gets fewer hundredths. `p` must be a distribution (see normalize).
 */
export function toHundredths(p: readonly number[]): number[] {
  // 1e-9 absorbs binary error (0.29 * 100 = 28.999999999999996 is 29 hundredths, not 28 and a remainder).
  const scaled = p.map((x) => x * 100 + 1e-9);
  const out = scaled.map((x) => Math.floor(x));
  let left = 100 - out.reduce((a, b) => a + b, 0);
  const order = scaled.map((x, i) => ({ i, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (let j = 0; left > 0 && order.length > 0; j = (j + 1) % order.length, left--) {
    const at = order[j]?.i ?? 0;
    out[at] = (out[at] ?? 0) + 1;
  }
  return out;
}

/**
 * The option a rounded answer names: the most hundredths, ties broken by the unrounded probability
 * (then the earlier option), so that `choice` is always one of the largest numbers on the wire.
 */
function topOption(hundredths: readonly number[], p: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < hundredths.length; i++) {
    const h = hundredths[i] ?? 0;
    const b = hundredths[best] ?? 0;
    if (h > b || (h === b && (p[i] ?? 0) > (p[best] ?? 0))) best = i;
  }
  return best;
}

/**
 * How far from the uniform answer an answer may be and still count as abstained: every probability
 * within this of 1/k (unrounded). Brier's extension `x_abstained` says so on the wire.
 */
export const ABSTAIN_MARGIN = 0.02;

/** The answer carries no information: every probability within ABSTAIN_MARGIN of 1/k. */
export function isAbstention(p: readonly number[]): boolean {
  const k = p.length;
  return p.every((x) => Math.abs(x - 1 / k) <= ABSTAIN_MARGIN + 1e-12);
}

/**
 * Builds the wire answer from an engine's probabilities. Each distribution is rounded to hundredths
 * that sum to exactly 1 (toHundredths); `choice`, `score` and `confidence` are then computed from
 * those rounded numbers, so that a client recomputing them from the answer gets the same values
 * (`score` is Σ i·p_i exactly; confidence rounded to 2 decimals). Only `x_abstained` reads the
 * unrounded probabilities.
 */
export function toWireAnswer(q: WireQuestion, raw: number[]): WireAnswer {
  switch (q.type) {
    case 'noul': {
      const p = normalize(raw, 2);
      return { type: 'noul', noul: round2(p[1] ?? 0), x_abstained: isAbstention(p) };
    }
    case 'choice': {
      const labels = Object.keys(q.criteria);
      const p = normalize(raw, labels.length);
      const h = toHundredths(p);
      const rounded = h.map((x) => x / 100);
      return {
        type: 'choice',
        choice: labels[topOption(h, p)] ?? '',
        confidence: round2(choiceConfidence(rounded)),
        probabilities: Object.fromEntries(labels.map((l, i) => [l, rounded[i] ?? 0])),
        x_abstained: isAbstention(p),
      };
    }
    case 'score': {
      const p = normalize(raw, q.criteria.length);
      const h = toHundredths(p);
      const rounded = h.map((x) => x / 100);
      return {
        type: 'score',
        score: h.reduce((acc, x, i) => acc + i * x, 0) / 100,
        confidence: round2(scoreConfidence(rounded, topOption(h, p))),
        legend: Object.fromEntries(q.criteria.map((level, i) => [String(i), level])),
        probabilities: Object.fromEntries(rounded.map((x, i) => [String(i), x])),
        x_abstained: isAbstention(p),
      };
    }
  }
}
