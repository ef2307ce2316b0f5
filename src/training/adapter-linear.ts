/**
 * The linear head that calibration and probe candidates fit and that serving applies
 * (src/engines/adapters/adapter.ts): z_j = a ln p_base_j + b_j (+ w_j . s + g s . e_j), its penalised
 * objective, its L-BFGS fit, cross-validated out-of-fold logits, and the stored head.
 */
import { encodeWeights, type HeadFile } from '../engines/adapters/adapter.ts';
import { BIAS_PENALTY, crossEntropy, type Data, exponentiate, type TemplateData, weightOf } from './adapter-data.ts';
import { lbfgs } from './lbfgs.ts';

/** Parameters: [a, b_0..b_k-1, W (k x d, probe only), g (probe with label features only)]. */
export function paramCount(data: Data, probe: boolean): number {
  return 1 + data.k + (probe ? data.k * data.d + (data.affinity ? 1 : 0) : 0);
}

export function initial(data: Data, probe: boolean): Float64Array {
  const x = new Float64Array(paramCount(data, probe));
  x[0] = 1;
  return x;
}

export function logits(data: Data, i: number, x: Float64Array, probe: boolean, out: Float64Array): void {
  const { k, d } = data;
  const a = x[0] ?? 1;
  for (let j = 0; j < k; j++) {
    let v = a * (data.logBase[i * k + j] ?? 0) + (x[1 + j] ?? 0);
    if (probe && data.states) {
      const w = 1 + k + j * d;
      const s = i * d;
      for (let t = 0; t < d; t++) v += (x[w + t] ?? 0) * (data.states[s + t] ?? 0);
      if (data.affinity) v += (x[1 + k + k * d] ?? 0) * (data.affinity[i * k + j] ?? 0);
    }
    out[j] = v;
  }
}

/** Mean weighted cross-entropy to the targets over `rows` plus the penalties; writes the gradient. */
export function objective(data: Data, rows: Int32Array, lambda: number, probe: boolean) {
  const { k, d } = data;
  const z = new Float64Array(k);
  return (x: Float64Array, g: Float64Array): number => {
    g.fill(0);
    let loss = 0;
    const inv = 1 / Math.max(1e-12, weightOf(data, rows));
    for (const i of rows) {
      logits(data, i, x, probe, z);
      const sum = exponentiate(z, k);
      const wi = data.w[i] ?? 1;
      loss += wi * crossEntropy(data, i, z, sum);
      for (let j = 0; j < k; j++) {
        const r = ((z[j] ?? 0) / sum - (data.t[i * k + j] ?? 0)) * wi * inv;
        g[0] = (g[0] ?? 0) + r * (data.logBase[i * k + j] ?? 0);
        g[1 + j] = (g[1 + j] ?? 0) + r;
        if (probe && data.states) {
          const w = 1 + k + j * d;
          const s = i * d;
          for (let t = 0; t < d; t++) g[w + t] = (g[w + t] ?? 0) + r * (data.states[s + t] ?? 0);
          if (data.affinity) g[1 + k + k * d] = (g[1 + k + k * d] ?? 0) + r * (data.affinity[i * k + j] ?? 0);
        }
      }
    }
    loss *= inv;
    for (let j = 0; j < k; j++) {
      const b = x[1 + j] ?? 0;
      loss += 0.5 * BIAS_PENALTY * b * b;
      g[1 + j] = (g[1 + j] ?? 0) + BIAS_PENALTY * b;
    }
    if (probe) {
      // the label prior's scale (the last parameter, when there is one) is not penalised
      for (let p = 1 + k; p < 1 + k + k * d; p++) {
        const w = x[p] ?? 0;
        loss += 0.5 * lambda * w * w;
        g[p] = (g[p] ?? 0) + lambda * w;
      }
    }
    return loss;
  };
}

export function fit(
  data: Data,
  rows: Int32Array,
  lambda: number,
  probe: boolean,
  maxIterations: number,
  warm?: Float64Array,
) {
  const x = warm ? Float64Array.from(warm) : initial(data, probe);
  return lbfgs(objective(data, rows, lambda, probe), x, { maxIterations, gradientTolerance: 1e-5 }).x;
}

export function headFile(t: TemplateData, data: Data, x: Float64Array, probe: boolean, temperature: number): HeadFile {
  const { k, d } = data;
  const bias = Array.from({ length: k }, (_, j) => x[1 + j] ?? 0);
  const dim = data.fullDim;
  const w = new Float32Array(k * dim);
  if (probe && data.basis) {
    // coordinates in the span's basis back to the features' dimensions: w_j = sum_q c_jq b_q
    const basis = data.basis;
    for (let j = 0; j < k; j++)
      for (let q = 0; q < d; q++) {
        const c = x[1 + k + j * d + q] ?? 0;
        if (c === 0) continue;
        for (let p = 0; p < dim; p++) w[j * dim + p] = (w[j * dim + p] ?? 0) + c * (basis[q * dim + p] ?? 0);
      }
  } else if (probe) w.set(x.subarray(1 + k, 1 + k + k * d));
  // the label prior g * (s . e_j) is a probe term like any other: served as w_j + g * e_j
  const g = probe && data.labelStates ? (x[1 + k + k * d] ?? 0) : 0;
  if (g !== 0 && data.labelStates)
    for (let p = 0; p < k * dim; p++) w[p] = (w[p] ?? 0) + g * (data.labelStates[p] ?? 0);
  return {
    template: t.template,
    type: t.type,
    labels: t.labels,
    kind: probe ? 'probe' : 'calibration',
    baseWeight: x[0] ?? 1,
    bias,
    weights: probe ? encodeWeights(w) : null,
    dim: probe ? dim : 0,
    temperature,
  };
}

/** Cross-validated out-of-fold logits for one candidate. */
export function outOfFold(
  data: Data,
  train: number[],
  fold: Map<number, number>,
  folds: number,
  lambda: number,
  probe: boolean,
  maxIterations: number,
): { z: number[][]; mean: Float64Array } {
  const z = new Float64Array(data.k);
  const out = new Map<number, number[]>();
  const mean = new Float64Array(paramCount(data, probe));
  let fitted = 0;
  for (let f = 0; f < folds; f++) {
    const fitRows = Int32Array.from(train.filter((i) => fold.get(i) !== f));
    const heldRows = train.filter((i) => fold.get(i) === f);
    if (heldRows.length === 0 || fitRows.length === 0) continue;
    const x = fit(data, fitRows, lambda, probe, maxIterations);
    for (let p = 0; p < x.length; p++) mean[p] = (mean[p] ?? 0) + (x[p] ?? 0);
    fitted++;
    for (const i of heldRows) {
      logits(data, i, x, probe, z);
      out.set(i, Array.from(z));
    }
  }
  for (let p = 0; p < mean.length; p++) mean[p] = (mean[p] ?? 0) / Math.max(1, fitted);
  return {
    z: train.map((i) => out.get(i) ?? Array.from(data.logBase.subarray(i * data.k, (i + 1) * data.k))),
    mean,
  };
}
