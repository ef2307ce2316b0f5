/**
 * Fitting and measuring brier-lite's zero-shot family maps (src/engines/embedded/zero-shot.ts), holding
 * whole source sets out in every fit and every number:
 *
 * - Reference pools (label-free): 200 states of each set, in each encoder; the pool that measures a
 *   held-out set is built without that set's states.
 * - Yes/no maps per family (topic, spam, polarity, pair): logistic regression on the family's signals,
 *   each source set weighted equally, then the smallest mix with the uniform answer (ALPHA_GRID) that
 *   keeps every other source set's held-out answers at or below the uniform answer's Brier (nested:
 *   those answers come from maps fitted without them either).
 * - A choice map over topic-like options: a softmax of the standardized cosines, fitted the same way.
 *
 * A negated question is answered as the complement of its plain wording (reading.ts), so its signals are
 * those of the plain wording; the negated items are measured, never fitted.
 */
import { EVD, Matrix, solve as solveLinear } from 'ml-matrix';
import {
  baseline,
  choiceAnswer,
  choiceSignalRows,
  type FamilyMap,
  noulAnswer,
  noulSignalRow,
  type PoolContext,
  type ReferencePool,
  type SignalMap,
  sigmoid,
  type ZeroShotInput,
} from '../engines/embedded/zero-shot.ts';
import { asServed, brierScore } from './evaluation.ts';

/** Rank of the pools' covariance kept exactly (the rest isotropic). */
export const POOL_RANK = 48;
/** States per set in the reference pool. */
export const POOL_PER_SET = 200;
/** Mixes with the uniform answer tried, gentlest first. */
export const ALPHA_GRID = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] as const;
/** L2 on the maps' weights (not the bias). */
const L2 = 1e-3;

/** Per-set sums from which a pool without any one set is assembled exactly. */
export interface PoolParts {
  dim: number;
  /** Per set: count, sum of vectors, sum of outer products (dim x dim, row-major). */
  sets: Map<string, { n: number; sum: Float64Array; outer: Float64Array }>;
}

export function poolParts(bySet: ReadonlyMap<string, readonly Float32Array[]>, dim: number): PoolParts {
  const sets = new Map<string, { n: number; sum: Float64Array; outer: Float64Array }>();
  for (const [set, vectors] of bySet) {
    const sum = new Float64Array(dim);
    const outer = new Float64Array(dim * dim);
    for (const v of vectors) {
      for (let a = 0; a < dim; a++) {
        const va = v[a] ?? 0;
        sum[a] = (sum[a] ?? 0) + va;
        if (va === 0) continue;
        const row = a * dim;
        for (let b = a; b < dim; b++) outer[row + b] = (outer[row + b] ?? 0) + va * (v[b] ?? 0);
      }
    }
    sets.set(set, { n: vectors.length, sum, outer });
  }
  return { dim, sets };
}

/** The pool of every set but `exclude` (null: every set), its covariance kept at rank POOL_RANK. */
export function assemblePool(parts: PoolParts, exclude: string | null, rank = POOL_RANK): ReferencePool {
  const d = parts.dim;
  let n = 0;
  const sum = new Float64Array(d);
  const outer = new Float64Array(d * d);
  for (const [set, p] of parts.sets) {
    if (set === exclude) continue;
    n += p.n;
    for (let i = 0; i < d; i++) sum[i] = (sum[i] ?? 0) + (p.sum[i] ?? 0);
    for (let i = 0; i < d * d; i++) outer[i] = (outer[i] ?? 0) + (p.outer[i] ?? 0);
  }
  const mean = Float64Array.from(sum, (v) => v / Math.max(1, n));
  const cov = new Matrix(d, d);
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      const v = (outer[a * d + b] ?? 0) / Math.max(1, n) - (mean[a] ?? 0) * (mean[b] ?? 0);
      cov.set(a, b, v);
      cov.set(b, a, v);
    }
  const evd = new EVD(cov, { assumeSymmetric: true });
  const values = evd.realEigenvalues;
  const vectors = evd.eigenvectorMatrix;
  const order = values.map((_, i) => i).sort((x, y) => (values[y] ?? 0) - (values[x] ?? 0));
  const r = Math.min(rank, d);
  const basis = new Float32Array(r * d);
  const variances = new Float32Array(r);
  let total = 0;
  for (const v of values) total += Math.max(0, v);
  let kept = 0;
  for (let k = 0; k < r; k++) {
    const idx = order[k] ?? 0;
    variances[k] = Math.max(0, values[idx] ?? 0);
    kept += variances[k] ?? 0;
    for (let i = 0; i < d; i++) basis[k * d + i] = vectors.get(i, idx);
  }
  return {
    dim: d,
    mean: Float32Array.from(mean),
    basis,
    variances,
    residual: Math.max(1e-9, (total - kept) / Math.max(1, d - r)),
  };
}

/** Both encoders' pools, each question vector's baseline computed once per pool. */
export function poolContext(minilm: ReferencePool, use: ReferencePool): PoolContext {
  const memo = new WeakMap<ReferencePool, WeakMap<Float32Array, { mu: number; sd: number }>>();
  return {
    minilm,
    use,
    baselineOf(pool, q) {
      let byVector = memo.get(pool);
      if (!byVector) {
        byVector = new WeakMap();
        memo.set(pool, byVector);
      }
      let b = byVector.get(q);
      if (!b) {
        b = baseline(pool, q);
        byVector.set(q, b);
      }
      return b;
    },
  };
}

/** One question on one state, as the zero-shot answer reads it, with its label. */
export interface FamilyItem {
  source: string;
  /** An example id (a labelled row's, or a generated item's). */
  id: string;
  type: 'noul' | 'choice';
  k: number;
  target: number;
  /** Worded with a negation: answered as the complement of its plain wording; measured, never fitted. */
  negated: boolean;
  /** Items sharing it are a plain and a negated wording of one question on one state. */
  pair: string | null;
  input: ZeroShotInput;
}

/** Weighted logistic regression by Newton's method: weights then bias; each row's weight given. */
export function fitLogistic(x: readonly (readonly number[])[], y: readonly number[], w: readonly number[]): FamilyMap {
  const m = x[0]?.length ?? 0;
  const theta = new Float64Array(m + 1);
  for (let iter = 0; iter < 50; iter++) {
    const g = new Float64Array(m + 1);
    const h = new Matrix(m + 1, m + 1);
    let total = 0;
    x.forEach((row, i) => {
      const wi = w[i] ?? 1;
      total += wi;
      let z = theta[m] ?? 0;
      for (let j = 0; j < m; j++) z += (theta[j] ?? 0) * (row[j] ?? 0);
      const p = sigmoid(z);
      const r = (p - (y[i] ?? 0)) * wi;
      const s = p * (1 - p) * wi;
      const f = [...row, 1];
      for (let a = 0; a <= m; a++) {
        g[a] = (g[a] ?? 0) + r * (f[a] ?? 0);
        for (let b = 0; b <= m; b++) h.set(a, b, h.get(a, b) + s * (f[a] ?? 0) * (f[b] ?? 0));
      }
    });
    for (let a = 0; a < m; a++) {
      g[a] = (g[a] ?? 0) + L2 * total * (theta[a] ?? 0);
      h.set(a, a, h.get(a, a) + L2 * total);
    }
    for (let a = 0; a <= m; a++) h.set(a, a, h.get(a, a) + 1e-9 * total);
    const step = solve(h, Array.from(g));
    let max = 0;
    step.forEach((s, a) => {
      theta[a] = (theta[a] ?? 0) - s;
      max = Math.max(max, Math.abs(s));
    });
    if (max < 1e-9) break;
  }
  return { weights: Array.from(theta.subarray(0, m)), bias: theta[m] ?? 0, alpha: 0 };
}

/** Softmax regression with shared weights over per-option signal rows (no bias: options are symmetric). */
export function fitChoice(items: readonly { rows: number[][]; target: number; weight: number }[]): FamilyMap {
  const m = items[0]?.rows[0]?.length ?? 0;
  const theta = new Float64Array(m);
  for (let iter = 0; iter < 50; iter++) {
    const g = new Float64Array(m);
    const h = new Matrix(m, m);
    let total = 0;
    for (const it of items) {
      total += it.weight;
      const p = choiceAnswer({ weights: Array.from(theta), bias: 0, alpha: 0 }, it.rows);
      const mean = new Float64Array(m);
      it.rows.forEach((row, j) => {
        for (let a = 0; a < m; a++) mean[a] = (mean[a] ?? 0) + (p[j] ?? 0) * (row[a] ?? 0);
      });
      const target = it.rows[it.target] ?? [];
      for (let a = 0; a < m; a++) g[a] = (g[a] ?? 0) + it.weight * ((mean[a] ?? 0) - (target[a] ?? 0));
      it.rows.forEach((row, j) => {
        for (let a = 0; a < m; a++)
          for (let b = 0; b < m; b++)
            h.set(
              a,
              b,
              h.get(a, b) +
                it.weight * (p[j] ?? 0) * ((row[a] ?? 0) - (mean[a] ?? 0)) * ((row[b] ?? 0) - (mean[b] ?? 0)),
            );
      });
    }
    for (let a = 0; a < m; a++) {
      g[a] = (g[a] ?? 0) + L2 * total * (theta[a] ?? 0);
      h.set(a, a, h.get(a, a) + L2 * total + 1e-9 * total);
    }
    const step = solve(h, Array.from(g));
    let max = 0;
    step.forEach((s, a) => {
      theta[a] = (theta[a] ?? 0) - s;
      max = Math.max(max, Math.abs(s));
    });
    if (max < 1e-9) break;
  }
  return { weights: Array.from(theta), bias: 0, alpha: 0 };
}

/** The Newton step h^-1 g (h is positive definite: a ridge is added above). */
function solve(h: Matrix, g: number[]): number[] {
  return solveLinear(h, Matrix.columnVector(g)).to1DArray();
}

/** Each source's rows weigh 1 in all, so a large set does not decide the map alone. */
export function sourceWeights(sources: readonly string[]): number[] {
  const counts = new Map<string, number>();
  for (const s of sources) counts.set(s, (counts.get(s) ?? 0) + 1);
  return sources.map((s) => 1 / (counts.get(s) ?? 1));
}

/** Source sets with fewer items than this do not constrain alpha (their Brier is mostly noise). */
export const MIN_GROUP = 30;

/** The smallest alpha of ALPHA_GRID keeping every group's Brier (as served) at or below uniform. */
export function chooseAlpha(
  groups: readonly { p: number[]; target: number }[][],
  answer: (p: number[], alpha: number) => number[],
): number {
  for (const alpha of ALPHA_GRID) {
    const ok = groups.every((g) => {
      if (g.length < MIN_GROUP) return true;
      let model = 0;
      let uniform = 0;
      for (const it of g) {
        const p = asServed(answer(it.p, alpha));
        const t = p.map((_, i) => (i === it.target ? 1 : 0));
        model += brierScore(p, t);
        uniform += brierScore(
          p.map(() => 1 / p.length),
          t,
        );
      }
      return model <= uniform + 1e-12;
    });
    if (ok) return alpha;
  }
  return 1;
}

/** Mixes an unshrunk answer with uniform. */
export function mix(p: readonly number[], alpha: number): number[] {
  return p.map((v) => (1 - alpha) * v + alpha / p.length);
}

export { choiceAnswer, noulAnswer };

/** A held-out answer: the item, its probabilities as its source set's leave-source-out map gives them. */
export interface HeldOutAnswer<I> {
  item: I;
  p: number[];
}

export interface FamilyFit<I> {
  /** The shipped map (every source, pools of every set). */
  map: FamilyMap;
  /** Per source: its items answered by a map fitted without it (pools without it too). */
  heldOut: HeldOutAnswer<I>[];
}

interface Protocol<I> {
  sourceOf(it: I): string;
  /** Fitted on (never negated) items under pools. */
  fit(items: readonly I[], p: PoolContext): FamilyMap;
  /** The answer before the mix with uniform (negated items: the complement). */
  raw(map: FamilyMap, it: I, p: PoolContext): number[];
  target(it: I): number;
  fittable(it: I): boolean;
  /** Whether a source's items may fit the map (the others are only answered, each held out as well). */
  trains(source: string): boolean;
}

/**
 * Leave-source-out: for each source S, the map fitted on the other sources under pools without S,
 * its alpha the smallest that keeps each other source T at or below uniform with a map fitted
 * without S and T (nested); the shipped map on every source, its alpha keeping every source's
 * held-out answers at or below uniform.
 */
function leaveSourceOut<I>(
  items: readonly I[],
  poolsWithout: (s: string | null) => PoolContext,
  pr: Protocol<I>,
): FamilyFit<I> {
  const sources = [...new Set(items.map(pr.sourceOf))].sort();
  const heldOut: HeldOutAnswer<I>[] = [];
  const rawHeldOut: { it: I; p: number[] }[] = [];
  for (const s of sources) {
    const p = poolsWithout(s);
    const train = items.filter((it) => pr.sourceOf(it) !== s && pr.fittable(it) && pr.trains(pr.sourceOf(it)));
    if (train.length === 0) {
      for (const it of items.filter((x) => pr.sourceOf(x) === s)) {
        const k = pr.raw({ weights: [], bias: 0, alpha: 1 }, it, p).length;
        heldOut.push({ item: it, p: Array.from({ length: k }, () => 1 / k) });
      }
      continue;
    }
    const map = pr.fit(train, p);
    const others = sources.filter((t) => t !== s && pr.trains(t));
    const groups = others.map((t) => {
      const inner = train.filter((it) => pr.sourceOf(it) !== t);
      const m = inner.length > 0 ? pr.fit(inner, p) : map;
      return items
        .filter((it) => pr.sourceOf(it) === t && pr.fittable(it))
        .map((it) => ({ p: pr.raw(m, it, p), target: pr.target(it) }));
    });
    const alpha = chooseAlpha(groups, mix);
    for (const it of items.filter((x) => pr.sourceOf(x) === s)) {
      const raw = pr.raw(map, it, p);
      rawHeldOut.push({ it, p: raw });
      heldOut.push({ item: it, p: mix(raw, alpha) });
    }
  }
  const all = poolsWithout(null);
  const map = pr.fit(
    items.filter((it) => pr.fittable(it) && pr.trains(pr.sourceOf(it))),
    all,
  );
  const bySource = sources
    .filter(pr.trains)
    .map((s) =>
      rawHeldOut
        .filter((r) => pr.sourceOf(r.it) === s && pr.fittable(r.it))
        .map((r) => ({ p: r.p, target: pr.target(r.it) })),
    );
  return { map: { ...map, alpha: chooseAlpha(bySource, mix) }, heldOut };
}

/** A yes/no map over `signals`, fitted and measured leave-source-out on plain and negated items. */
export function fitNoulMap(
  signals: readonly string[],
  items: readonly FamilyItem[],
  poolsWithout: (s: string | null) => PoolContext,
  trains: (source: string) => boolean = () => true,
): FamilyFit<FamilyItem> & { map: SignalMap } {
  const row = (it: FamilyItem, p: PoolContext) => noulSignalRow(signals, it.input, p);
  const fit = leaveSourceOut(items, poolsWithout, {
    sourceOf: (it) => it.source,
    trains,
    fittable: (it) => !it.negated,
    target: (it) => it.target,
    fit: (train, p) =>
      fitLogistic(
        train.map((it) => row(it, p)),
        train.map((it) => it.target),
        sourceWeights(train.map((it) => it.source)),
      ),
    raw: (map, it, p) => {
      const [no, yes] = noulAnswer({ ...map, alpha: 0 }, row(it, p));
      return it.negated ? [yes ?? 0.5, no ?? 0.5] : [no ?? 0.5, yes ?? 0.5];
    },
  });
  return { ...fit, map: { ...fit.map, signals: [...signals] } };
}

/** A choice map over `signals`, fitted and measured leave-source-out. */
export function fitChoiceMap(
  signals: readonly string[],
  items: readonly FamilyItem[],
  poolsWithout: (s: string | null) => PoolContext,
  trains: (source: string) => boolean = () => true,
): FamilyFit<FamilyItem> & { map: SignalMap } {
  const rows = (it: FamilyItem, p: PoolContext) => choiceSignalRows(signals, it.input, it.k, p);
  const fit = leaveSourceOut(items, poolsWithout, {
    sourceOf: (it) => it.source,
    trains,
    fittable: () => true,
    target: (it) => it.target,
    fit: (train, p) => {
      const w = sourceWeights(train.map((it) => it.source));
      return fitChoice(train.map((it, i) => ({ rows: rows(it, p), target: it.target, weight: w[i] ?? 1 })));
    },
    raw: (map, it, p) => choiceAnswer({ ...map, alpha: 0 }, rows(it, p)),
  });
  return { ...fit, map: { ...fit.map, signals: [...signals] } };
}

/**
 * What the maps read, per family (names of zero-shot.ts's signals). Chosen by the leave-source-out
 * numbers of stage Z (EXPERIMENTS.md lists the variants measured):
 * - content: MiniLM's standardized cosine alone had the lowest pooled ECE (0.063 against 0.107 with
 *   USE-lite's beside it, mean AUC 0.757 against 0.762); `spam` shifts the bias for spam questions.
 * - polarity: the emotion terms (a bias and a slope of their own) took pooled ECE 0.046 -> 0.020.
 * - choice: the gaps to the best other option took ag_news 0.758 -> 0.785 and clinc150 0.513 -> 0.588
 *   in accuracy, pooled ECE 0.075 -> 0.058.
 */
export const FAMILY_SIGNALS = {
  content: ['zMiniLM', 'spam'],
  polarity: ['side*s(z)', 'emotion', 'emotion*side*s(z)'],
  pair: ['pairMiniLM', 'pairUSE'],
  choice: ['zMiniLM', 'zUSE', 'gapMiniLM', 'gapUSE', 'residual', 'side*s(z)'],
} as const;

/** c of s(z) = c tanh(z / c) for the zero-shot polarity signal (brier-lite 3.7's fitted saturation). */
export const ZERO_SHOT_SATURATION = 2;
