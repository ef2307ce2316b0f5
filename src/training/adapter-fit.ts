/**
 * Fitting adapters (issue 23): per question template, from an account's labelled examples with the
 * base model's answers (and, on the embedded engine, its state embeddings), a head that
 * src/engines/adapters/adapter.ts serves. Each template's examples are split, stratified by label and
 * seeded by the template id: a held-out part (25%) is only measured, before (the base model) and
 * after (the adapter), and the adapter is served only when it is better there on both Brier and NLL.
 *
 * Candidates, chosen by cross-validated NLL on the training part only:
 * - calibration: z_j = a ln p_base_j + b_j (a temperature and per-class bias on the base model's own
 *   log-probabilities; what GGUF and upstream engines get);
 * - probe (when state features exist): the same plus w_j . s, a multinomial logistic probe on the
 *   state embedding with an L2 penalty chosen from a grid by cross-validation, then a temperature
 *   fitted on the out-of-fold logits; given label features e_j (TemplateData.labelStates), each
 *   penalty also with a label prior g * (s . e_j), so that the penalty shrinks w_j toward g * e_j
 *   rather than 0, stored folded into w_j;
 * - shrinkage LDA (from LDA_MIN_ROWS training rows, lda.ts): a discriminant per shrinkage, its
 *   out-of-fold scores stacked on the base model's log-probabilities, stored as a probe head.
 * The chosen candidate is refit on the whole training part; what is measured is what is served.
 */
import {
  ADAPTER_FORMAT,
  type AdapterFile,
  applyHead,
  encodeWeights,
  type HeadFile,
  parseAdapter,
} from '../engines/adapters/adapter.ts';
import type {
  DistillReport,
  FitReport,
  FitRow,
  FitTemplate,
  TeacherAgreement,
} from '../engines/adapters/fit-protocol.ts';
import type { ReliabilityBin } from '../lib/scoring.ts';
import { hash32, mulberry32, shuffled } from '../lib/seeded.ts';
import {
  asServed,
  brierScore,
  computeMetrics,
  confidencePairs,
  ece,
  eceNoiseFloor,
  type MetricItem,
  type Metrics,
  majorityPrior,
  oneHot,
  reliability,
} from './evaluation.ts';
import { lbfgs } from './lbfgs.ts';
import { classStatistics, ldaLogits, shrinkageLda } from './lda.ts';

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

export interface FitOptions {
  /** Share of each template's examples held out for measurement (default 0.25). */
  holdout?: number;
  /** Fewest examples a template needs (default 20). */
  minExamples?: number;
  /** L2 penalties tried for the probe (default 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1). */
  lambdas?: readonly number[];
  /** Upper bound on L-BFGS iterations per fit (default 150). */
  maxIterations?: number;
  /**
   * The served head: 'all' refits the chosen candidate on every training row (default); 'folds' serves
   * the mean of its cross-validation fold fits, the models its temperature was fitted for. Measured
   * (bench:adapt --refit folds, 7 sets at 200 labels): held-out Brier within 0.001 of 'all' on each.
   */
  refit?: 'all' | 'folds';
  /** Most cross-validation folds (default 5; fewer when there are under 8 rows a fold). */
  maxFolds?: number;
  /**
   * Probes fitted in the span of the states when there are fewer rows than dimensions (default true):
   * the same fit at a fraction of the cost (see toData). False: in the features' own dimensions.
   */
  project?: boolean;
  /** Called after each fit with the share done (0..1) and what is being done. */
  onProgress?: (done: number, message: string) => void;
  /** Distillation (issue 34): fit to a teacher's rows (fitDistilledTemplate), human labels weighted `humanWeight`. */
  distill?: { teacher: string; humanWeight: number } | undefined;
}

export type MeasuredMetrics = Metrics & { eceFloor: number };

/** The job's report of one template (fit-protocol's FitReport), its measured metrics with their floor. */
export interface TemplateReport extends FitReport {
  before: MeasuredMetrics | null;
  after: MeasuredMetrics | null;
  prior: Metrics | null;
}

export interface FitResult {
  /** Heads of the templates whose adapter is better on held-out rows (served). */
  heads: HeadFile[];
  reports: TemplateReport[];
}

/**
 * Measured (bench:adapt): the old grid's floor, 1e-3, was the choice on most sets; on clinc150 (151
 * intents, under 3 examples each) 3e-4 was chosen in every fold and accuracy went 0.23 -> 0.53.
 */
const DEFAULT_LAMBDAS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1] as const;
/**
 * Shrinkages of the LDA candidate (lda.ts). Measured at 200 labels (5 to 10 draws a set, accuracy of
 * the discriminant alone): 0.6 best on trec, 0.8 on cr, 0.9 on sst2, subj and ag_news; 0.3 and 0.95
 * never best.
 */
const LDA_GAMMAS = [0.6, 0.8, 0.9] as const;
/**
 * Fewest training rows for the LDA candidates. Its stack (a weight and a bias per class) is fitted on
 * the out-of-fold logits it is then scored on, which flatters it most where rows are few: with it from
 * 25 rows, bench:adapt's mean ECE at 25 labels rose from 0.101 to 0.155 (score) and 0.064 to 0.101
 * (choice); from 100 rows on, ECE was as without it and accuracy higher.
 */
const LDA_MIN_ROWS = 100;
/** A small penalty on the biases, so a class absent from the training rows keeps a finite logit. */
const BIAS_PENALTY = 1e-3;

/** A template's rows in flat arrays: log base probabilities (n x k), states (n x d), labels. */
interface Data {
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
function toData(t: TemplateData, project = true): Data {
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
function unprojected(data: Data): Data {
  return data.basis ? { ...data, states: data.full, d: data.fullDim, basis: null } : data;
}

/** The same rows without their label features (the probe then has no label prior). */
function withoutLabels(data: Data): Data {
  return { ...data, affinity: null, labelStates: null };
}

/** Parameters: [a, b_0..b_k-1, W (k x d, probe only), g (probe with label features only)]. */
function paramCount(data: Data, probe: boolean): number {
  return 1 + data.k + (probe ? data.k * data.d + (data.affinity ? 1 : 0) : 0);
}

function initial(data: Data, probe: boolean): Float64Array {
  const x = new Float64Array(paramCount(data, probe));
  x[0] = 1;
  return x;
}

function logits(data: Data, i: number, x: Float64Array, probe: boolean, out: Float64Array): void {
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

/** exp(z_j - max z) in place, for a softmax: returns their sum. */
function exponentiate(z: Float64Array, k: number): number {
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
function weightOf(data: Data, rows: ArrayLike<number>): number {
  let w = 0;
  for (let r = 0; r < rows.length; r++) w += data.w[rows[r] ?? 0] ?? 1;
  return w;
}

/** -sum_j t_ij ln(z_j / sum): the cross-entropy of row i's target to softmax weights z (NLL for a one-hot target). */
function crossEntropy(data: Data, i: number, z: ArrayLike<number>, sum: number): number {
  const k = data.k;
  let loss = 0;
  for (let j = 0; j < k; j++) {
    const tj = data.t[i * k + j] ?? 0;
    if (tj > 0) loss -= tj * Math.log(Math.max(1e-300, (z[j] ?? 0) / sum));
  }
  return loss;
}

/** Mean weighted cross-entropy to the targets over `rows` plus the penalties; writes the gradient. */
function objective(data: Data, rows: Int32Array, lambda: number, probe: boolean) {
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

function fit(data: Data, rows: Int32Array, lambda: number, probe: boolean, maxIterations: number, warm?: Float64Array) {
  const x = warm ? Float64Array.from(warm) : initial(data, probe);
  return lbfgs(objective(data, rows, lambda, probe), x, { maxIterations, gradientTolerance: 1e-5 }).x;
}

/** Cross-entropy of `target` to softmax(z / temperature) (the NLL for a one-hot target). */
function nllOf(z: ArrayLike<number>, target: readonly number[], temperature: number): number {
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
const hard = (y: readonly number[], k: number) =>
  y.map((label) => Array.from({ length: k }, (_, j) => (j === label ? 1 : 0)));

/** The temperature minimising the NLL of `z` (golden-section search on ln T in [ln 0.05, ln 20]). */
export function fitTemperature(z: readonly (readonly number[])[], y: readonly number[]): number {
  return fitSoftTemperature(z, hard(y, z[0]?.length ?? 0));
}

/** The temperature minimising the weighted cross-entropy of `targets` to softmax(z / T). */
function fitSoftTemperature(
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

/**
 * The held-out split and the training folds, stratified by label and seeded by `seed`: each class's
 * rows shuffled, `holdout` of them (rounded) held out, the rest dealt into `folds` folds.
 */
export function splitRows(
  labels: readonly number[],
  holdout: number,
  folds: number,
  seed: number,
): { test: number[]; train: number[]; fold: Map<number, number> } {
  const random = mulberry32(seed);
  const byClass = new Map<number, number[]>();
  labels.forEach((y, i) => {
    byClass.set(y, [...(byClass.get(y) ?? []), i]);
  });
  const test: number[] = [];
  const train: number[] = [];
  const fold = new Map<number, number>();
  let dealt = 0;
  for (const y of [...byClass.keys()].sort((a, b) => a - b)) {
    const rows = shuffled(byClass.get(y) ?? [], random);
    const nTest = rows.length >= 2 ? Math.max(1, Math.round(holdout * rows.length)) : 0;
    test.push(...rows.slice(0, nTest));
    for (const i of rows.slice(nTest)) {
      train.push(i);
      fold.set(i, dealt++ % folds);
    }
  }
  return { test: test.sort((a, b) => a - b), train: train.sort((a, b) => a - b), fold };
}

function measured(items: MetricItem[]): MeasuredMetrics {
  const metrics = computeMetrics(items);
  const confidences = confidencePairs(items).map((p) => p.confidence);
  return { ...metrics, eceFloor: eceNoiseFloor(confidences) };
}

function bins(items: MetricItem[]): ReliabilityBin[] {
  return reliability(confidencePairs(items));
}

function headFile(t: TemplateData, data: Data, x: Float64Array, probe: boolean, temperature: number): HeadFile {
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
function outOfFold(
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

/** Weighted mean cross-entropy of the targets (one-hot labels: the mean NLL). */
function meanNll(z: number[][], targets: number[][], weights: number[], temperature: number): number {
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
interface Candidate {
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

/**
 * Stacking: a discriminant's out-of-fold logits l (n x k by row) on the base model's
 * log-probabilities, z_j = a ln p_base_j + c l_j + b_j, x = [a, c, b_0..b_k-1]: a temperature for
 * each and a bias per class, fitted (like a probe's temperature) on out-of-fold logits.
 */
function stackLogits(data: Data, l: Float64Array, x: Float64Array, i: number, out: Float64Array) {
  const { k } = data;
  for (let j = 0; j < k; j++) {
    const v = (x[0] ?? 0) * (data.logBase[i * k + j] ?? 0) + (x[2 + j] ?? 0);
    out[j] = v + (x[1] ?? 0) * (l[i * k + j] ?? 0);
  }
  return out;
}

/** The stack's parameters by NLL on `rows`, and that NLL (with the biases' small penalty). */
function fitStack(
  data: Data,
  l: Float64Array,
  rows: readonly number[],
  maxIterations: number,
): { stack: Float64Array; nll: number } {
  const { k } = data;
  const z = new Float64Array(k);
  const inv = 1 / Math.max(1e-12, weightOf(data, rows));
  const objective = (x: Float64Array, g: Float64Array): number => {
    g.fill(0);
    let loss = 0;
    for (const i of rows) {
      stackLogits(data, l, x, i, z);
      const sum = exponentiate(z, k);
      const wi = data.w[i] ?? 1;
      loss += crossEntropy(data, i, z, sum) * wi * inv;
      for (let j = 0; j < k; j++) {
        const r = ((z[j] ?? 0) / sum - (data.t[i * k + j] ?? 0)) * wi * inv;
        g[0] = (g[0] ?? 0) + r * (data.logBase[i * k + j] ?? 0);
        g[1] = (g[1] ?? 0) + r * (l[i * k + j] ?? 0);
        g[2 + j] = (g[2 + j] ?? 0) + r;
      }
    }
    for (let j = 0; j < k; j++) {
      const b = x[2 + j] ?? 0;
      loss += 0.5 * BIAS_PENALTY * b ** 2;
      g[2 + j] = (g[2 + j] ?? 0) + BIAS_PENALTY * b;
    }
    return loss;
  };
  const x0 = new Float64Array(2 + k);
  x0.fill(1, 0, 2);
  const { x, value } = lbfgs(objective, x0, { maxIterations, gradientTolerance: 1e-6 });
  return { stack: x, nll: value };
}

/**
 * A stacked discriminant in served form [a, b_0..b_k-1, W (k x d)] (logits a ln p_base_j + b_j +
 * W_j . s, a probe's parameters): [a, b_j + c offset_j, c w_j].
 */
function foldStack(data: Data, stack: Float64Array, lda: { weights: Float64Array; offsets: Float64Array }) {
  const { k, d } = data;
  const c = stack[1] ?? 0;
  const out = new Float64Array(1 + k + k * d);
  out[0] = stack[0] ?? 0;
  for (let j = 0; j < k; j++) out[1 + j] = (stack[2 + j] ?? 0) + c * (lda.offsets[j] ?? 0);
  for (let p = 0; p < k * d; p++) out[1 + k + p] = c * (lda.weights[p] ?? 0);
  return out;
}

/**
 * Shrinkage LDA candidates (lda.ts), one per LDA_GAMMAS: the discriminant fitted per fold gives
 * out-of-fold logits, stacked on the base model's log-probabilities (fitStack). Served: the
 * discriminant refit on every training row through the stack, as an ordinary probe head.
 */
function ldaCandidates(
  data: Data,
  train: number[],
  fold: Map<number, number>,
  folds: number,
  maxIterations: number,
): Candidate[] {
  const full = unprojected(data);
  const { k, d, y } = full;
  const states = full.full;
  if (!states || train.length < LDA_MIN_ROWS) return [];
  const plain = withoutLabels(full);
  const oof = LDA_GAMMAS.map(() => new Float64Array(data.n * k));
  const foldFits: { weights: Float64Array; offsets: Float64Array }[][] = LDA_GAMMAS.map(() => []);
  const z = new Float64Array(k);
  for (let f = 0; f < folds; f++) {
    const fitRows = train.filter((i) => fold.get(i) !== f);
    const heldRows = train.filter((i) => fold.get(i) === f);
    if (heldRows.length === 0 || fitRows.length === 0) continue;
    const stats = classStatistics(states, d, fitRows, y, k);
    LDA_GAMMAS.forEach((gamma, g) => {
      const lda = shrinkageLda(stats, gamma);
      foldFits[g]?.push(lda);
      for (const i of heldRows) oof[g]?.set(ldaLogits(lda, states, d, i, z), i * k);
    });
  }
  let allRows: ReturnType<typeof classStatistics> | null = null;
  return LDA_GAMMAS.map((gamma, g) => {
    const { nll, stack } = fitStack(data, oof[g] as Float64Array, train, maxIterations);
    // the mean of the fold fits (the discriminants' mean: the stack is linear in them)
    const fits = foldFits[g] ?? [];
    const mean = { weights: new Float64Array(k * d), offsets: new Float64Array(k) };
    for (const lda of fits) {
      for (let p = 0; p < k * d; p++) mean.weights[p] = (mean.weights[p] ?? 0) + (lda.weights[p] ?? 0) / fits.length;
      for (let j = 0; j < k; j++) mean.offsets[j] = (mean.offsets[j] ?? 0) + (lda.offsets[j] ?? 0) / fits.length;
    }
    return {
      name: `shrinkage LDA (gamma ${gamma})`,
      data: plain,
      probe: true,
      lambda: 0,
      nll,
      temperature: 1,
      mean: foldStack(full, stack, mean),
      refit: () => {
        allRows ??= classStatistics(states, d, train, y, k);
        return foldStack(full, stack, shrinkageLda(allRows, gamma));
      },
    };
  });
}

/** A fitted head, every candidate's cross-validated NLL, and the name of the one fitted. */
export interface FittedHead {
  file: HeadFile;
  candidates: { name: string; nll: number }[];
  chosen: string;
}

/**
 * The head for `train` (row indices of `data`): candidates compared by cross-validated NLL over
 * `folds` (the base model's own NLL reported beside them), the best refit on all of `train`.
 */
function fitOnRows(
  t: TemplateData,
  data: Data,
  train: number[],
  fold: Map<number, number>,
  folds: number,
  options: FitOptions,
  progress?: (message: string) => void,
): FittedHead {
  const k = data.k;
  const maxIterations = options.maxIterations ?? 150;
  const trainT = train.map((i) => Array.from(data.t.subarray(i * k, (i + 1) * k)));
  const trainW = train.map((i) => data.w[i] ?? 1);
  const report: { candidates: { name: string; nll: number }[] } = { candidates: [] };
  // Candidates by cross-validated NLL on the training rows.
  const candidates: Candidate[] = [];
  const baseZ = train.map((i) => Array.from(data.logBase.subarray(i * k, (i + 1) * k)));
  report.candidates.push({ name: 'base model', nll: meanNll(baseZ, trainT, trainW, 1) });
  progress?.('calibration: cross-validating');
  const cal = outOfFold(data, train, fold, folds, 0, false, maxIterations);
  candidates.push({
    name: 'calibration',
    data,
    probe: false,
    lambda: 0,
    nll: meanNll(cal.z, trainT, trainW, 1),
    temperature: 1,
    mean: cal.mean,
  });
  // With label features, the probe is cross-validated with and without its label prior: the prior
  // helps where a class has few examples (clinc150, 3 a class) and can cost calibration where it has
  // many (bench:adapt, the 4 choice sets at 200 labels: mean ECE 0.048 without, 0.055 always with).
  const variants = data.affinity
    ? [
        { data: withoutLabels(data), suffix: '' },
        { data, suffix: ' + label prior' },
      ]
    : [{ data, suffix: '' }];
  if (data.states) {
    for (const variant of variants)
      for (const lambda of options.lambdas ?? DEFAULT_LAMBDAS) {
        const name = `probe${variant.suffix} (L2 ${lambda})`;
        progress?.(`${name}: cross-validating`);
        const { z, mean } = outOfFold(variant.data, train, fold, folds, lambda, true, maxIterations);
        const temperature = fitSoftTemperature(z, trainT, trainW);
        candidates.push({
          name,
          data: variant.data,
          probe: true,
          lambda,
          nll: meanNll(z, trainT, trainW, temperature),
          temperature,
          mean,
        });
      }
    progress?.('shrinkage LDA: cross-validating');
    candidates.push(...ldaCandidates(data, train, fold, folds, maxIterations));
  }
  for (const c of candidates) report.candidates.push({ name: c.name, nll: c.nll });
  // The lowest cross-validated NLL. (Measured: the one-standard-error rule, preferring the simplest
  // candidate within one standard error of it, served worse held-out Brier on sst2 at 100 and 200 rows
  // (0.151 -> 0.198, 0.175 -> 0.197) and trec at 100 (0.053 -> 0.055).)
  const best = candidates.reduce((a, b) => (b.nll < a.nll ? b : a));
  progress?.(`fitting the ${best.name} on ${train.length} rows`);
  const x =
    (options.refit ?? 'all') === 'folds'
      ? best.mean
      : (best.refit?.() ?? fit(best.data, Int32Array.from(train), best.lambda, best.probe, maxIterations));
  return {
    file: headFile(t, best.data, x, best.probe, best.temperature),
    candidates: report.candidates,
    chosen: best.name,
  };
}

/**
 * A head fitted on every row of `t` (no hold-out: the caller measures it on rows of its own), for
 * benchmarks' learning curves. Null when there are fewer than 2 classes (hard labels only).
 */
export function fitAllRows(t: TemplateData, options: FitOptions = {}): FittedHead | null {
  // Hard labels need two classes; a teacher's distributions (targets) are fitted whatever their argmax.
  if (new Set(t.rows.map((r) => r.label)).size < 2 && !t.rows.some((r) => r.target)) return null;
  const data = toData(t, options.project);
  const ys = Array.from(data.y);
  const folds = Math.max(2, Math.min(options.maxFolds ?? 5, Math.floor(t.rows.length / 8)));
  const { train, fold } = splitRows(ys, 0, folds, hash32(t.template));
  return fitOnRows(t, data, train, fold, folds, options);
}

/** A template's report before anything is fitted, and the way every fit returns (timed). */
function emptyReport(t: TemplateData, started: number) {
  const report: TemplateReport = {
    template: t.template,
    type: t.type,
    labels: t.labels,
    n: t.rows.length,
    nTrain: 0,
    nTest: 0,
    kind: null,
    served: false,
    reason: '',
    before: null,
    after: null,
    prior: null,
    reliability: null,
    candidates: [],
    chosen: null,
    seconds: 0,
  };
  const done = (head: HeadFile | null) => {
    report.seconds = (performance.now() - started) / 1000;
    return { head, report };
  };
  return { report, done };
}

/** Fits one template (see the file comment). */
export function fitTemplate(t: TemplateData, options: FitOptions = {}, progress?: (message: string) => void) {
  const started = performance.now();
  const minExamples = options.minExamples ?? 20;
  const k = t.labels.length;
  const { report, done } = emptyReport(t, started);
  const classes = new Set(t.rows.map((r) => r.label)).size;
  if (t.rows.length < minExamples || classes < 2) {
    report.reason =
      t.rows.length < minExamples
        ? `not fitted: ${t.rows.length} labelled examples, at least ${minExamples} are needed`
        : 'not fitted: every example has the same label, so there is nothing to hold out against';
    return done(null);
  }
  const data = toData(t, options.project);
  const ys = Array.from(data.y);
  const folds = Math.max(
    2,
    Math.min(options.maxFolds ?? 5, Math.floor((t.rows.length * (1 - (options.holdout ?? 0.25))) / 8)),
  );
  const { test, train, fold } = splitRows(ys, options.holdout ?? 0.25, folds, hash32(t.template));
  report.nTrain = train.length;
  report.nTest = test.length;
  const trainY = train.map((i) => ys[i] ?? 0);

  const fitted = fitOnRows(t, data, train, fold, folds, options, progress);
  report.candidates.push(...fitted.candidates);
  report.chosen = fitted.chosen;
  const file = fitted.file;
  report.kind = file.kind;

  // Held-out rows: measured as served (rounded to 0.01 as the wire does), with the served maths.
  const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [file] }).heads.get(t.template);
  if (!head) throw new Error('adapter: the fitted head did not parse');
  const ordinal = t.type === 'score';
  const prior = majorityPrior(trainY.map((y) => oneHot(k, y)));
  const beforeItems: MetricItem[] = [];
  const afterItems: MetricItem[] = [];
  const priorItems: MetricItem[] = [];
  for (const i of test) {
    const target = oneHot(k, ys[i] ?? 0);
    const row = t.rows[i] as TemplateRow;
    beforeItems.push({ p: asServed(row.base), t: target, ordinal });
    afterItems.push({ p: asServed(applyHead(head, row.base, row.state)), t: target, ordinal });
    priorItems.push({ p: prior, t: target, ordinal });
  }
  report.before = measured(beforeItems);
  report.after = measured(afterItems);
  report.prior = computeMetrics(priorItems);
  report.reliability = { before: bins(beforeItems), after: bins(afterItems) };
  const better = report.after.brier < report.before.brier && report.after.nll < report.before.nll;
  report.served = better;
  const fmt = (v: number) => v.toFixed(4);
  report.reason = better
    ? `served: on ${test.length} held-out examples Brier ${fmt(report.before.brier)} -> ${fmt(report.after.brier)}, NLL ${fmt(report.before.nll)} -> ${fmt(report.after.nll)}`
    : `not served: not better than the base model on ${test.length} held-out examples (Brier ${fmt(report.before.brier)} -> ${fmt(report.after.brier)}, NLL ${fmt(report.before.nll)} -> ${fmt(report.after.nll)})`;
  return done(better ? file : null);
}

const argmaxOf = (p: readonly number[]) => p.reduce((best, v, j) => (v > (p[best] ?? 0) ? j : best), 0);

/** KL(t || p) in nats, p clipped at 1e-12. */
function kl(t: readonly number[], p: readonly number[]): number {
  let s = 0;
  for (let j = 0; j < t.length; j++) {
    const tj = t[j] ?? 0;
    if (tj > 0) s += tj * (Math.log(tj) - Math.log(Math.max(1e-12, p[j] ?? 0)));
  }
  return s;
}

/** Held-out measures of answers `p` against the teacher's `t` (and the true labels where known). */
export function teacherAgreement(
  items: readonly { p: readonly number[]; t: readonly number[]; truth: number | null }[],
) {
  const n = Math.max(1, items.length);
  let agree = 0;
  let brier = 0;
  let div = 0;
  let right = 0;
  let known = 0;
  for (const it of items) {
    if (argmaxOf(it.p) === argmaxOf(it.t)) agree++;
    brier += brierScore(it.p, it.t);
    div += kl(it.t, it.p);
    if (it.truth !== null) {
      known++;
      if (argmaxOf(it.p) === it.truth) right++;
    }
  }
  const pairs = confidencePairs(items.map((it) => ({ p: it.p, t: oneHot(it.t.length, argmaxOf(it.t)) })));
  const out: TeacherAgreement = {
    agreement: agree / n,
    brier: brier / n,
    kl: div / n,
    ece: ece(pairs),
    accuracy: known > 0 ? right / known : null,
  };
  return out;
}

/**
 * Fits one template from a teacher's distributions (issue 34). The teacher's rows (`source:
 * 'teacher'`, `target` its distribution) are split as labelled rows are (25% held out, stratified by
 * the teacher's argmax, seeded by the template); the head is fitted by cross-entropy to the teacher's
 * distributions on the rest, with the account's true labels as rows of their own weighted
 * `humanWeight`: a training state's label (`truth`) and the human-only rows. A held-out state's label
 * is never fitted on: it only measures accuracy against the truth of the teacher, the base model and
 * the adapter side by side. Served only when the adapter is closer to the teacher than the base model
 * on the held-out states, by both KL and Brier against the teacher's distribution.
 */
export function fitDistilledTemplate(
  t: TemplateData,
  options: FitOptions & { distill: { teacher: string; humanWeight: number } },
  progress?: (message: string) => void,
) {
  const started = performance.now();
  const minExamples = options.minExamples ?? 20;
  const { teacher, humanWeight } = options.distill;
  const k = t.labels.length;
  const { report, done } = emptyReport(t, started);
  const teacherRows = t.rows.filter((r) => r.source !== 'human' && r.target?.length === k);
  const humanRows = t.rows.filter((r) => r.source === 'human');
  if (teacherRows.length < minExamples) {
    report.reason = `not fitted: the teacher labelled ${teacherRows.length} states, at least ${minExamples} are needed`;
    return done(null);
  }
  const holdout = options.holdout ?? 0.25;
  const folds = Math.max(2, Math.min(options.maxFolds ?? 5, Math.floor((teacherRows.length * (1 - holdout)) / 8)));
  const split = splitRows(
    teacherRows.map((r) => r.label),
    holdout,
    folds,
    hash32(t.template),
  );
  // The fitted rows: the teacher's training rows, their states' true labels, the human-only rows.
  const rows: FitRow[] = split.train.map((i) => ({ ...(teacherRows[i] as FitRow), weight: 1 }));
  for (const i of split.train) {
    const r = teacherRows[i] as FitRow;
    if (r.truth !== null && r.truth !== undefined)
      rows.push({ ...r, label: r.truth, target: undefined, weight: humanWeight, source: 'human' });
  }
  for (const r of humanRows) rows.push({ ...r, target: undefined, weight: humanWeight });
  const train = rows.map((_, i) => i);
  const fold = new Map(train.map((i) => [i, i % folds]));
  const data = toData({ ...t, rows }, options.project);
  report.nTrain = rows.length;
  report.nTest = split.test.length;
  const fitted = fitOnRows(t, data, train, fold, folds, options, progress);
  report.candidates.push(...fitted.candidates);
  report.chosen = fitted.chosen;
  report.kind = fitted.file.kind;
  const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [fitted.file] }).heads.get(
    t.template,
  );
  if (!head) throw new Error('adapter: the fitted head did not parse');
  const ordinal = t.type === 'score';
  const held = split.test.map((i) => teacherRows[i] as FitRow);
  const base = held.map((r) => ({ p: asServed(r.base), t: r.target as number[], truth: r.truth ?? null, ordinal }));
  const adapted = held.map((r) => ({
    p: asServed(applyHead(head, r.base, r.state)),
    t: r.target as number[],
    truth: r.truth ?? null,
    ordinal,
  }));
  // The standard fields measure against the teacher's distribution (its argmax for accuracy and ECE).
  report.before = measured(base);
  report.after = measured(adapted);
  report.prior = computeMetrics(
    held.map((r) => ({
      p: majorityPrior(rows.filter((x) => x.source !== 'human').map((x) => x.target as number[])),
      t: r.target as number[],
      ordinal,
    })),
  );
  report.reliability = { before: bins(base), after: bins(adapted) };
  const truthKnown = held.filter((r) => r.truth !== null && r.truth !== undefined);
  const distill: DistillReport = {
    teacher,
    nTest: held.length,
    nTruth: truthKnown.length,
    nHuman: rows.filter((r) => r.source === 'human').length,
    humanWeight,
    base: teacherAgreement(base),
    adapter: teacherAgreement(adapted),
    teacherAccuracy:
      truthKnown.length > 0
        ? truthKnown.filter((r) => argmaxOf(r.target as number[]) === r.truth).length / truthKnown.length
        : null,
  };
  report.distill = distill;
  const a = distill.adapter as TeacherAgreement;
  const closer = a.kl < distill.base.kl && a.brier < distill.base.brier;
  report.served = closer;
  const fmt = (v: number) => v.toFixed(4);
  const measuredOn = `on ${held.length} held-out states: KL to the teacher ${fmt(distill.base.kl)} -> ${fmt(a.kl)}, Brier to the teacher ${fmt(distill.base.brier)} -> ${fmt(a.brier)}, agreement ${fmt(distill.base.agreement)} -> ${fmt(a.agreement)}`;
  report.reason = closer
    ? `served: closer to the teacher than the base model ${measuredOn}`
    : `not served: not closer to the teacher than the base model ${measuredOn}`;
  return done(closer ? fitted.file : null);
}

/** Fits every template; the heads returned are the served ones. */
export function fitAdapter(templates: readonly TemplateData[], options: FitOptions = {}): FitResult {
  const heads: HeadFile[] = [];
  const reports: TemplateReport[] = [];
  templates.forEach((t, index) => {
    const fitOne = options.distill
      ? (x: TemplateData, o: FitOptions, p: (m: string) => void) =>
          fitDistilledTemplate(x, { ...o, distill: options.distill as NonNullable<FitOptions['distill']> }, p)
      : fitTemplate;
    const { head, report } = fitOne(t, options, (message) =>
      options.onProgress?.(index / templates.length, `${t.template}: ${message}`),
    );
    if (head) heads.push(head);
    reports.push(report);
    options.onProgress?.((index + 1) / templates.length, `${t.template}: ${report.reason}`);
  });
  return { heads, reports };
}

/** The stored artifact for served heads. */
export function adapterFile(base: string, features: string | null, heads: HeadFile[]): AdapterFile {
  return { format: ADAPTER_FORMAT, base, features: heads.some((h) => h.kind === 'probe') ? features : null, heads };
}
