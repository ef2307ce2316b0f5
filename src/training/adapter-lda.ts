/**
 * The shrinkage LDA candidates of adapter fitting (lda.ts): a discriminant per shrinkage, its
 * out-of-fold scores stacked on the base model's log-probabilities, stored as a probe head.
 */
import {
  BIAS_PENALTY,
  type Candidate,
  crossEntropy,
  type Data,
  exponentiate,
  unprojected,
  weightOf,
  withoutLabels,
} from './adapter-data.ts';
import { lbfgs } from './lbfgs.ts';
import { classStatistics, ldaLogits, shrinkageLda } from './lda.ts';

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

/**
 * Stacking: a discriminant's out-of-fold logits l (n x k by row) on the base model's
 * log-probabilities, z_j = a ln p_base_j + c l_j + b_j, x = [a, c, b_0..b_k-1]: a temperature for
 * each and a bias per class, fitted (like a probe's temperature) on out-of-fold logits.
 */
export function stackLogits(data: Data, l: Float64Array, x: Float64Array, i: number, out: Float64Array) {
  const { k } = data;
  for (let j = 0; j < k; j++) {
    const v = (x[0] ?? 0) * (data.logBase[i * k + j] ?? 0) + (x[2 + j] ?? 0);
    out[j] = v + (x[1] ?? 0) * (l[i * k + j] ?? 0);
  }
  return out;
}

/** The stack's parameters by NLL on `rows`, and that NLL (with the biases' small penalty). */
export function fitStack(
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
export function foldStack(data: Data, stack: Float64Array, lda: { weights: Float64Array; offsets: Float64Array }) {
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
export function ldaCandidates(
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
