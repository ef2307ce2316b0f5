/**
 * Stage A: trains the low-rank bilinear matrices of the head (plus per-type scalar weights with
 * beta_0 fixed at 1) by task-balanced softmax cross-entropy with Adam and weight decay.
 * Minibatches hold rows of one task, so option projections are computed once per batch.
 */
import type { QuestionInput, QuestionType } from '../engines/embedded/features.ts';
import { levelPosition, SCALAR_FEATURES, scalarFeatures } from '../engines/embedded/features.ts';
import { type BilinearWeights, bilinearForward, combine, softmax } from '../engines/embedded/head.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import { shuffled } from '../lib/seeded.ts';
import { emptyBilinear } from './bilinear.ts';
import { mulberry32 } from './data.ts';

export interface Row {
  task: string;
  x: QuestionInput;
  psi: Float64Array;
  target: number;
}

export interface StageAOptions {
  rank: number;
  epochs: number;
  lr: number;
  decay: number;
  batch: number;
  seed: number;
}

export interface StageAResult {
  weights: BilinearWeights;
  beta: Record<QuestionType, number[]>;
}

const TYPES: QuestionType[] = ['noul', 'choice', 'score'];

/** The matrices stage A trains, by name (one list for training and its gradient test). */
export function namedMatrices(w: BilinearWeights): [string, Float32Array][] {
  return [
    ['noul.U', w.noul.U],
    ['noul.V', w.noul.V],
    ['choice.U', w.choice.U],
    ['choice.V', w.choice.V],
    ['score.U', w.score.U],
    ['score.V', w.score.V],
    ['score.P', w.score.P],
    ['score.Q', w.score.Q],
  ];
}

function matrices(w: BilinearWeights): Float32Array[] {
  return namedMatrices(w).map(([, m]) => m);
}

export function trainStageA(rows: Row[], o: StageAOptions): StageAResult {
  const rand = mulberry32(o.seed);
  const gauss = (): number => {
    const u = Math.max(1e-12, rand());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  const w = emptyBilinear(o.rank, () => 0.05 * gauss());
  const beta: Record<QuestionType, number[]> = {
    noul: [1, ...SCALAR_FEATURES.noul.map(() => 0)],
    choice: [1, ...SCALAR_FEATURES.choice.map(() => 0)],
    score: [1, ...SCALAR_FEATURES.score.map(() => 0)],
  };
  const ws = matrices(w);
  const m1 = ws.map((a) => new Float32Array(a.length));
  const m2 = ws.map((a) => new Float32Array(a.length));
  const bm1 = TYPES.map((t) => new Float64Array(beta[t].length));
  const bm2 = TYPES.map((t) => new Float64Array(beta[t].length));
  const taskCount = new Map<string, number>();
  for (const r of rows) taskCount.set(r.task, (taskCount.get(r.task) ?? 0) + 1);
  const nTasks = taskCount.size;
  // batches: rows of one task, shuffled each epoch
  const byTask = new Map<string, Row[]>();
  for (const r of rows) {
    const list = byTask.get(r.task) ?? [];
    list.push(r);
    byTask.set(r.task, list);
  }
  let step = 0;
  const g = emptyBilinear(o.rank);
  const gs = matrices(g);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    const batches: Row[][] = [];
    for (const list of byTask.values()) {
      const order = shuffled(list, rand);
      for (let i = 0; i < order.length; i += o.batch) batches.push(order.slice(i, i + o.batch));
    }
    for (let i = batches.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      const t = batches[i] as Row[];
      batches[i] = batches[j] as Row[];
      batches[j] = t;
    }
    for (const batch of batches) {
      for (const a of gs) a.fill(0);
      const gb: Record<QuestionType, Float64Array> = {
        noul: new Float64Array(beta.noul.length),
        choice: new Float64Array(beta.choice.length),
        score: new Float64Array(beta.score.length),
      };
      batchGradient(batch, w, beta, g, gb, (row) => 1 / ((taskCount.get(row.task) ?? 1) * nTasks));
      step++;
      const b1 = 0.9;
      const b2 = 0.999;
      const c1 = 1 - b1 ** step;
      const c2 = 1 - b2 ** step;
      ws.forEach((param, idx) => {
        const grad = gs[idx] as Float32Array;
        const a1 = m1[idx] as Float32Array;
        const a2 = m2[idx] as Float32Array;
        for (let j = 0; j < param.length; j++) {
          const gj = (grad[j] ?? 0) * nTasks + o.decay * (param[j] ?? 0);
          a1[j] = b1 * (a1[j] ?? 0) + (1 - b1) * gj;
          a2[j] = b2 * (a2[j] ?? 0) + (1 - b2) * gj * gj;
          param[j] = (param[j] ?? 0) - (o.lr * ((a1[j] ?? 0) / c1)) / (Math.sqrt((a2[j] ?? 0) / c2) + 1e-8);
        }
      });
      TYPES.forEach((t, ti) => {
        const bt = beta[t];
        const grad = gb[t];
        const a1 = bm1[ti] as Float64Array;
        const a2 = bm2[ti] as Float64Array;
        for (let j = 1; j < bt.length; j++) {
          const gj = (grad[j] ?? 0) * nTasks;
          a1[j] = b1 * (a1[j] ?? 0) + (1 - b1) * gj;
          a2[j] = b2 * (a2[j] ?? 0) + (1 - b2) * gj * gj;
          bt[j] = (bt[j] ?? 0) - (o.lr * 3 * ((a1[j] ?? 0) / c1)) / (Math.sqrt((a2[j] ?? 0) / c2) + 1e-8);
        }
      });
    }
  }
  return { weights: w, beta };
}

/**
 * Adds one batch's gradients to `g` (the bilinear matrices) and `gb` (the scalar weights beta_1..;
 * beta_0 is fixed at 1) and returns its loss: the sum over its rows of weight(row) times the
 * softmax cross-entropy. Every type has the same rank (stage A trains one). Option projections
 * are computed once per distinct option text and type, and each option's V gradient is summed
 * before its outer product.
 */
export function batchGradient(
  batch: readonly Row[],
  w: BilinearWeights,
  beta: Record<QuestionType, number[]>,
  g: BilinearWeights,
  gb: Record<QuestionType, Float64Array>,
  weight: (row: Row) => number,
): number {
  const r = w.noul.rank;
  if (w.choice.rank !== r || w.score.rank !== r) throw new Error('stage A: every type must have the same rank');
  let loss = 0;
  // per type: an option text's projection and gradient depend on its type's V
  const perType = (): Record<QuestionType, Map<Float32Array, Float64Array>> => ({
    noul: new Map(),
    choice: new Map(),
    score: new Map(),
  });
  const yCache = perType();
  const hV = perType();
  for (const row of batch) {
    const x = row.x;
    const gl = g[x.type];
    const scale = weight(row);
    const { bil, xs, ys, ps, qi } = bilinearForward(x, w, yCache[x.type]);
    const bt = beta[x.type];
    const logits = combine(bil, row.psi, bt, x.k);
    const p = softmax(logits);
    loss -= Math.log(Math.max(1e-12, p[row.target] ?? 0)) * scale;
    const d = bt.length - 1;
    const gbt = gb[x.type];
    const gBil = new Float64Array(x.k);
    for (let k = 0; k < x.k; k++) {
      const gk = ((p[k] ?? 0) - (k === row.target ? 1 : 0)) * scale;
      gBil[k] = gk * (bt[0] ?? 1);
      for (let f = 0; f < d; f++) gbt[f + 1] = (gbt[f + 1] ?? 0) + gk * (row.psi[k * d + f] ?? 0);
    }
    // bilinear grads: dU += s (x) sum_k g_k y_k ; dV(o) += g_k xs (accumulated per distinct o)
    const sy = new Float64Array(r);
    for (let k = 0; k < x.k; k++) {
      const y = ys[k];
      const gk = gBil[k] ?? 0;
      const ov = x.o[k];
      if (!y || !ov || gk === 0) continue;
      for (let a = 0; a < r; a++) sy[a] = (sy[a] ?? 0) + gk * (y[a] ?? 0);
      let h = hV[x.type].get(ov);
      if (!h) {
        h = new Float64Array(r);
        hV[x.type].set(ov, h);
      }
      for (let a = 0; a < r; a++) h[a] = (h[a] ?? 0) + gk * (xs[a] ?? 0);
    }
    outer(gl.U, x.s, sy, r);
    if (ps && qi && x.i) {
      let gu = 0;
      for (let k = 0; k < x.k; k++) gu += (gBil[k] ?? 0) * levelPosition(k, x.k);
      const dp = new Float64Array(r);
      const dq = new Float64Array(r);
      for (let a = 0; a < r; a++) {
        dp[a] = gu * (qi[a] ?? 0);
        dq[a] = gu * (ps[a] ?? 0);
      }
      outer(g.score.P, x.s, dp, r);
      outer(g.score.Q, x.i, dq, r);
    }
  }
  for (const type of TYPES) for (const [ov, h] of hV[type]) outer(g[type].V, ov, h, r);
  return loss;
}

function outer(M: Float32Array, v: ArrayLike<number>, h: ArrayLike<number>, r: number): void {
  for (let d = 0; d < EMBEDDING_DIM; d++) {
    const vd = v[d] ?? 0;
    if (vd === 0) continue;
    const row = d * r;
    for (let a = 0; a < r; a++) M[row + a] = (M[row + a] ?? 0) + vd * (h[a] ?? 0);
  }
}

export function rowsFrom(task: string, x: QuestionInput, target: number): Row {
  return { task, x, psi: scalarFeatures(x), target };
}
