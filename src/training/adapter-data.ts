/**
 * Adapter fitting's common ground (src/training/adapter-fit.ts is the entry): a template's rows in
 * flat arrays (optionally projected onto the span of their states), the weighted cross-entropy every
 * candidate minimises, temperatures, and the Candidate every candidate file returns.
 */
import type { FitRow, FitTemplate } from '../engines/adapters/fit-protocol.ts';

/**
 * One labelled row and one template's rows: the job's contract (src/engines/adapters/fit-protocol.ts),
 * base probabilities in canonical class order, unrounded; the true class's index in that order.
 */
export type TemplateRow = FitRow;
/**
 * labelStates, per class, the features of its option text in the state space (or absent): the probe
 * gets a prior term g * (s . e_j), one fitted scalar, that its L2-penalised weights then correct.
 */
export type TemplateData = FitTemplate;
/** A small penalty on the biases, so a class absent from the training rows keeps a finite logit. */
export const BIAS_PENALTY = 1e-3;

/** A template's rows in flat arrays: log base probabilities (n x k), states (n x d), labels. */
export interface Data {
  n: number;
  k: number;
  /** Dimensions of `states`: the features' own, or the rank of their span when projected. */
  d: number;
  logBase: Float64Array;
  /** The states, or their coordinates in `basis` (projected: n x r). */
  states: Float32Array | Float64Array | null;
  y: Int32Array;
  /**
   * Targets (n x k): a row's distribution to fit (a teacher's soft label, issue 34) or its label
   * one-hot. With one-hot targets and unit weights every loss below is the plain NLL of before.
   */
  t: Float64Array;
  /** Row weights (n): human labels above a teacher's in distillation; 1 otherwise. */
  w: Float64Array;
  /** s_i . e_j (n x k) when label features exist, else null. */
  affinity: Float64Array | null;
  /** The label features (k x full dimensions) behind `affinity`. */
  labelStates: Float32Array | null;
  /**
   * Projected: an orthonormal basis of the span of the rows' states (r x full dimensions), in which
   * `states` are coordinates; null when `states` are the features themselves.
   */
  basis: Float64Array | null;
  /** The states as the features give them (n x full), and their dimensions. */
  full: Float32Array | null;
  fullDim: number;
}

/**
 * An orthonormal basis of the span of `rows` (n x d, row-major) by modified Gram-Schmidt, each vector
 * orthogonalised twice (enough in double precision), and the rows' coordinates in it (n x r).
 */
export function rowSpan(
  rows: ArrayLike<number>,
  n: number,
  d: number,
): { basis: Float64Array; coords: Float64Array; r: number } {
  const basis = new Float64Array(n * d);
  const v = new Float64Array(d);
  let r = 0;
  for (let i = 0; i < n; i++) {
    let norm0 = 0;
    for (let t = 0; t < d; t++) {
      const x = rows[i * d + t] ?? 0;
      v[t] = x;
      norm0 += x * x;
    }
    for (let pass = 0; pass < 2; pass++) {
      for (let q = 0; q < r; q++) {
        let dot = 0;
        const at = q * d;
        for (let t = 0; t < d; t++) dot += (basis[at + t] ?? 0) * (v[t] ?? 0);
        for (let t = 0; t < d; t++) v[t] = (v[t] ?? 0) - dot * (basis[at + t] ?? 0);
      }
    }
    let norm = 0;
    for (let t = 0; t < d; t++) norm += (v[t] ?? 0) * (v[t] ?? 0);
    // a row (numerically) in the span of the earlier ones adds no direction
    if (!(norm > 1e-20 * Math.max(norm0, 1e-300))) continue;
    const inv = 1 / Math.sqrt(norm);
    for (let t = 0; t < d; t++) basis[r * d + t] = (v[t] ?? 0) * inv;
    r++;
  }
  const coords = new Float64Array(n * r);
  for (let i = 0; i < n; i++)
    for (let q = 0; q < r; q++) {
      let dot = 0;
      for (let t = 0; t < d; t++) dot += (basis[q * d + t] ?? 0) * (rows[i * d + t] ?? 0);
      coords[i * r + q] = dot;
    }
  return { basis: basis.slice(0, r * d), coords, r };
}

/**
 * The rows in flat arrays. With fewer rows than feature dimensions (and `project` not false), the
 * probes see the states' coordinates in an orthonormal basis of their span: every probe weight vector
 * that matters lies in that span (the loss reads W only through W . s_i, and the L2 penalty is the
 * same in either basis), and L-BFGS from 0 takes the same steps in an orthonormal basis, so the fit is
 * the same up to rounding (and the max-norm stopping test, which is not rotation-invariant) at r/d of
 * the cost per step. Served weights are mapped back to the full dimensions (headFile).
 */
export function toData(t: TemplateData, project = true): Data {
  const n = t.rows.length;
  const k = t.labels.length;
  const withStates = t.rows.length > 0 && t.rows.every((r) => r.state !== null);
  const d = withStates ? (t.rows[0]?.state?.length ?? 0) : 0;
  const logBase = new Float64Array(n * k);
  const states = withStates ? new Float32Array(n * d) : null;
  const y = new Int32Array(n);
  const targets = new Float64Array(n * k);
  const weights = new Float64Array(n);
  t.rows.forEach((r, i) => {
    for (let j = 0; j < k; j++) logBase[i * k + j] = Math.log(Math.max(1e-12, r.base[j] ?? 0));
    if (states && r.state) states.set(r.state, i * d);
    y[i] = r.label;
    if (r.target && r.target.length === k) for (let j = 0; j < k; j++) targets[i * k + j] = r.target[j] ?? 0;
    else targets[i * k + r.label] = 1;
    weights[i] = r.weight ?? 1;
  });
  const ls = t.labelStates;
  // a class without label features (null) gets none: its weights and bias alone
  const withLabels =
    states !== null && ls?.length === k && ls.some((e) => e !== null) && ls.every((e) => e === null || e.length === d);
  let affinity: Float64Array | null = null;
  let labelStates: Float32Array | null = null;
  if (withLabels && states && ls) {
    labelStates = new Float32Array(k * d);
    ls.forEach((e, j) => {
      if (e) labelStates?.set(e, j * d);
    });
    affinity = new Float64Array(n * k);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < k; j++) {
        let v = 0;
        for (let q = 0; q < d; q++) v += (states[i * d + q] ?? 0) * (labelStates[j * d + q] ?? 0);
        affinity[i * k + j] = v;
      }
  }
  const full = {
    n,
    k,
    d,
    logBase,
    states,
    y,
    t: targets,
    w: weights,
    affinity,
    labelStates,
    basis: null,
    full: states,
    fullDim: d,
  };
  if (!states || !project || n >= d) return full;
  const span = rowSpan(states, n, d);
  return { ...full, d: span.r, states: span.coords, basis: span.basis };
}

/** The same rows with the states as the features give them (shrinkage LDA works in those). */
export function unprojected(data: Data): Data {
  return data.basis ? { ...data, states: data.full, d: data.fullDim, basis: null } : data;
}

/** The same rows without their label features (the probe then has no label prior). */
export function withoutLabels(data: Data): Data {
  return { ...data, affinity: null, labelStates: null };
}

/**
 * The rows a template's own candidates fit (its own fit, or a distilled one): a yes/no or score
 * template's option features are read by the account's shared model only (as a label prior of its own
 * probe they did not help: yes/no unchanged, score worse, sst5 0.289 -> 0.268 at 200 labels,
 * bench:adapt).
 */
export function ownData(t: TemplateData, data: Data): Data {
  return t.type === 'choice' ? data : withoutLabels(data);
}

/** exp(z_j - max z) in place, for a softmax: returns their sum. */
export function exponentiate(z: Float64Array, k: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < k; j++) max = Math.max(max, z[j] ?? 0);
  let sum = 0;
  for (let j = 0; j < k; j++) {
    const e = Math.exp((z[j] ?? 0) - max);
    z[j] = e;
    sum += e;
  }
  return sum;
}

/** The sum of the rows' weights (their count when every weight is 1). */
export function weightOf(data: Data, rows: ArrayLike<number>): number {
  let w = 0;
  for (let r = 0; r < rows.length; r++) w += data.w[rows[r] ?? 0] ?? 1;
  return w;
}

/** -sum_j t_ij ln(z_j / sum): the cross-entropy of row i's target to softmax weights z (NLL for a one-hot target). */
export function crossEntropy(data: Data, i: number, z: ArrayLike<number>, sum: number): number {
  const k = data.k;
  let loss = 0;
  for (let j = 0; j < k; j++) {
    const tj = data.t[i * k + j] ?? 0;
    if (tj > 0) loss -= tj * Math.log(Math.max(1e-300, (z[j] ?? 0) / sum));
  }
  return loss;
}

/** Cross-entropy of `target` to softmax(z / temperature) (the NLL for a one-hot target). */
export function nllOf(z: ArrayLike<number>, target: readonly number[], temperature: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < z.length; j++) max = Math.max(max, (z[j] ?? 0) / temperature);
  let sum = 0;
  for (let j = 0; j < z.length; j++) sum += Math.exp((z[j] ?? 0) / temperature - max);
  const log = Math.log(sum);
  let loss = 0;
  for (let j = 0; j < z.length; j++) {
    const tj = target[j] ?? 0;
    if (tj > 0) loss -= tj * ((z[j] ?? 0) / temperature - max - log);
  }
  return loss;
}

/** Targets as rows: one-hot labels. */
export const hard = (y: readonly number[], k: number) =>
  y.map((label) => Array.from({ length: k }, (_, j) => (j === label ? 1 : 0)));

/** The temperature minimising the NLL of `z` (golden-section search on ln T in [ln 0.05, ln 20]). */
export function fitTemperature(z: readonly (readonly number[])[], y: readonly number[]): number {
  return fitSoftTemperature(z, hard(y, z[0]?.length ?? 0));
}

/** The temperature minimising the weighted cross-entropy of `targets` to softmax(z / T). */
export function fitSoftTemperature(
  z: readonly (readonly number[])[],
  targets: readonly (readonly number[])[],
  weights?: readonly number[],
): number {
  const loss = (lnT: number) => {
    const t = Math.exp(lnT);
    let s = 0;
    z.forEach((row, i) => {
      s += (weights?.[i] ?? 1) * nllOf(row, targets[i] ?? [], t);
    });
    return s;
  };
  let lo = Math.log(0.05);
  let hi = Math.log(20);
  const phi = (Math.sqrt(5) - 1) / 2;
  let c = hi - phi * (hi - lo);
  let d = lo + phi * (hi - lo);
  let fc = loss(c);
  let fd = loss(d);
  for (let it = 0; it < 60; it++) {
    if (fc < fd) {
      hi = d;
      d = c;
      fd = fc;
      c = hi - phi * (hi - lo);
      fc = loss(c);
    } else {
      lo = c;
      c = d;
      fc = fd;
      d = lo + phi * (hi - lo);
      fd = loss(d);
    }
  }
  return Math.exp((lo + hi) / 2);
}

/** Weighted mean cross-entropy of the targets (one-hot labels: the mean NLL). */
export function meanNll(z: number[][], targets: number[][], weights: number[], temperature: number): number {
  let s = 0;
  let w = 0;
  z.forEach((row, i) => {
    const wi = weights[i] ?? 1;
    s += wi * nllOf(row, targets[i] ?? [], temperature);
    w += wi;
  });
  return s / Math.max(1e-12, w);
}

/** A candidate head: its cross-validated NLL and how to fit what is served. */
export interface Candidate {
  name: string;
  /** The rows as fitted: with or without the label features. */
  data: Data;
  probe: boolean;
  lambda: number;
  nll: number;
  temperature: number;
  /** The mean parameters of its fold fits (logits are linear in them: the mean of the fold models). */
  mean: Float64Array;
  /** Fits the served parameters on every training row (absent: `fit` with `lambda`). */
  refit?: () => Float64Array;
}

/** A template's training rows as candidates read them: the rows, their folds, targets and weights. */
export interface TrainingRows {
  data: Data;
  train: number[];
  fold: Map<number, number>;
  folds: number;
  /** Per training row (in `train` order): its target distribution and its weight. */
  targets: number[][];
  weights: number[];
}
