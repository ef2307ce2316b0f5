/**
 * Calibration applied after the head: temperature scaling, then a shrink toward the label prior
 * implied by the options (uniform: nothing in a request says one option is a priori likelier):
 *
 *   p = (1 - alpha) * softmax(logits / T) + alpha / k
 *
 * T and alpha depend on the question through a few descriptors d(q) (features.ts `descriptors`:
 * has a detected pair, spread, top-two margin and mean level of the state/option similarities,
 * ln k), never on the logits:
 *
 *   ln T = t . d(q)        alpha = sigmoid(a . d(q))
 *
 * So for any question this map is monotone: a higher logit never gets a lower probability, and
 * the order of options by logit is the order by probability. Parameters are fitted by
 * src/training (calibration-fit.ts) out-of-fold across tasks (leave-tasks-out), per question type
 * and task family; this file only applies them.
 * Where a model lists descriptor ranges (`support`), a question outside them is shrunk toward the
 * uniform answer instead of answered by an extrapolated map: with `softness`, gradually (the further
 * outside, the closer to uniform, so that an answer never jumps at a range's edge); without it, at
 * once.
 */
import { softmax } from './head.ts';

export interface CalibrationParams {
  temperature: number;
  /** Weight of the uniform prior, in [0, 1]. */
  alpha: number;
}

/** The uniform answer: alpha = 1 (T is then irrelevant). */
export const UNIFORM: CalibrationParams = Object.freeze({ temperature: 1, alpha: 1 });

export function calibrate(logits: ArrayLike<number>, c: CalibrationParams): number[] {
  const t = c.temperature > 0 ? c.temperature : 1;
  const scaled: number[] = [];
  for (let i = 0; i < logits.length; i++) scaled.push((logits[i] ?? 0) / t);
  const p = softmax(scaled);
  const a = Math.min(1, Math.max(0, c.alpha));
  const k = p.length;
  return p.map((v) => (1 - a) * v + a / k);
}

/** The range of one descriptor over the questions a calibration model was fitted on. */
export interface DescriptorRange {
  index: number;
  min: number;
  max: number;
}

/** Calibration as a function of question descriptors. */
export interface CalibrationModel {
  /** ln T = t . d */
  t: number[];
  /** alpha = sigmoid(a . d) */
  a: number[];
  /**
   * Where the fit has evidence: a question with a listed descriptor outside its range is shrunk
   * toward the uniform answer (the linear map is never extrapolated). Absent: no limit.
   */
  support?: DescriptorRange[];
  /**
   * How gradually: outside the ranges, the weight the map keeps is exp(-excess / softness), where
   * excess sums how far each descriptor lies outside its range, in widths of that range. Absent:
   * the uniform answer at once (the step of brier-lite 3.3 and 3.4).
   */
  softness?: number;
}

/** How far `d` lies outside the ranges, in widths of each range (0 inside every range). */
export function supportExcess(support: readonly DescriptorRange[], d: readonly number[]): number {
  let excess = 0;
  for (const r of support) {
    const v = d[r.index] ?? 0;
    const width = Math.max(r.max - r.min, 1e-6);
    excess += Math.max(0, (r.min - v) / width, (v - r.max) / width);
  }
  return excess;
}

export function resolveCalibration(m: CalibrationModel, d: readonly number[]): CalibrationParams {
  const excess = m.support ? supportExcess(m.support, d) : 0;
  const keep = excess === 0 ? 1 : m.softness ? Math.exp(-excess / m.softness) : 0;
  if (keep === 0) return UNIFORM;
  let lt = 0;
  let la = 0;
  for (let i = 0; i < d.length; i++) {
    lt += (m.t[i] ?? 0) * (d[i] ?? 0);
    la += (m.a[i] ?? 0) * (d[i] ?? 0);
  }
  const temperature = Math.exp(Math.max(-5, Math.min(5, lt)));
  const alpha = 1 / (1 + Math.exp(-la));
  // (alpha as is inside the ranges: 1 - (1 - alpha) rounds differently, and fits compare such losses)
  return { temperature, alpha: keep === 1 ? alpha : 1 - (1 - alpha) * keep };
}
