/**
 * System One answer maths, free of HTTP: an engine's distributions into wire answers (confidence,
 * expected score, rounding).
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

/** max(0, 1 - sum_i p_i |i - m| / MADu), m = argmax, MADu = (1/n) sum_i |i - (n-1)/2| */
export function scoreConfidence(p: number[]): number {
  const n = p.length;
  const m = argmax(p);
  let spread = 0;
  let madU = 0;
  for (let i = 0; i < n; i++) {
    spread += (p[i] ?? 0) * Math.abs(i - m);
    madU += Math.abs(i - (n - 1) / 2) / n;
  }
  return Math.max(0, 1 - spread / madU);
}

export function expectedLevel(p: number[]): number {
  return p.reduce((acc, x, i) => acc + i * x, 0);
}

/**
 * How far from the uniform answer an answer may be and still count as abstained: every probability
 * within this of 1/k (unrounded). Brier's extension `abstained` says so on the wire.
 */
export const ABSTAIN_MARGIN = 0.02;

/** The answer carries no information: every probability within ABSTAIN_MARGIN of 1/k. */
export function isAbstention(p: readonly number[]): boolean {
  const k = p.length;
  return p.every((x) => Math.abs(x - 1 / k) <= ABSTAIN_MARGIN + 1e-12);
}

/** Builds the wire answer from unrounded probabilities; rounds only at the end. */
export function toWireAnswer(q: WireQuestion, raw: number[]): WireAnswer {
  switch (q.type) {
    case 'noul': {
      const p = normalize(raw, 2);
      return { type: 'noul', noul: round2(p[1] ?? 0), abstained: isAbstention(p) };
    }
    case 'choice': {
      const labels = Object.keys(q.criteria);
      const p = normalize(raw, labels.length);
      return {
        type: 'choice',
        choice: labels[argmax(p)] ?? '',
        confidence: round2(choiceConfidence(p)),
        probabilities: Object.fromEntries(labels.map((l, i) => [l, round2(p[i] ?? 0)])),
        abstained: isAbstention(p),
      };
    }
    case 'score': {
      const p = normalize(raw, q.criteria.length);
      return {
        type: 'score',
        score: round2(expectedLevel(p)),
        confidence: round2(scoreConfidence(p)),
        legend: Object.fromEntries(q.criteria.map((level, i) => [String(i), level])),
        probabilities: Object.fromEntries(p.map((x, i) => [String(i), round2(x)])),
        abstained: isAbstention(p),
      };
    }
  }
}
