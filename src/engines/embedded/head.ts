/**
 * The decision head: pure math, no I/O. For every option k of a question,
 *
 *   logit_k = beta_0 * bil_k + sum_j beta_j * psi_kj
 *
 * where psi are the scalar features of features.ts and bil is a low-rank bilinear score between
 * the state and the option, learned by src/training on the permissively licensed training sets:
 *   noul:   bil = (U's) . (V'o)          o = instruction (+ the true/false descriptions)
 *   choice: bil = (U's) . (V'o_k)        o_k = the option's name and description
 *   score:  bil = (U's) . (V'o_k) + u_k (P's) . (Q'i)    u_k = level position in [-1, 1]
 * Shared weights per option make choice order-invariant; the u_k terms make score ordinal.
 * The betas and the calibration (calibration.ts) are chosen per question type and family.
 */
import { dot, levelPosition, type QuestionInput, type QuestionType } from './features.ts';
import { EMBEDDING_DIM } from './pool.ts';

export interface LowRank {
  rank: number;
  /** EMBEDDING_DIM x rank, row-major. */
  U: Float32Array;
  V: Float32Array;
}

export interface BilinearWeights {
  noul: LowRank;
  choice: LowRank;
  score: LowRank & { P: Float32Array; Q: Float32Array };
}

/** out[a] = sum_d v[d] * M[d][a] */
export function project(M: Float32Array, v: ArrayLike<number>, rank: number, out: Float64Array): Float64Array {
  out.fill(0);
  for (let d = 0; d < EMBEDDING_DIM; d++) {
    const vd = v[d] ?? 0;
    if (vd === 0) continue;
    const row = d * rank;
    for (let a = 0; a < rank; a++) out[a] = (out[a] ?? 0) + vd * (M[row + a] ?? 0);
  }
  return out;
}

/** Intermediate values of one bilinear forward pass, kept for the backward pass (src/training stage A). */
export interface BilinearTrace {
  bil: Float64Array;
  xs: Float64Array;
  ys: (Float64Array | null)[];
  ps: Float64Array | null;
  qi: Float64Array | null;
}

/**
 * The bilinear scores of a question's options. `options`, where given, keeps each option text's
 * projection V'o for the next call (training reuses them across a batch; it must hold projections
 * of this question type's V only).
 */
export function bilinearForward(
  x: QuestionInput,
  w: BilinearWeights,
  options?: Map<Float32Array, Float64Array>,
): BilinearTrace {
  const lr = w[x.type];
  const r = lr.rank;
  const xs = project(lr.U, x.s, r, new Float64Array(r));
  const ys = x.o.map((o) => {
    if (!o) return null;
    let y = options?.get(o);
    if (!y) {
      y = project(lr.V, o, r, new Float64Array(r));
      options?.set(o, y);
    }
    return y;
  });
  const bil = new Float64Array(x.k);
  for (let k = 0; k < x.k; k++) {
    const y = ys[k];
    bil[k] = y ? dot(xs, y) : 0;
  }
  let ps: Float64Array | null = null;
  let qi: Float64Array | null = null;
  if (x.type === 'score' && x.i) {
    ps = project(w.score.P, x.s, r, new Float64Array(r));
    qi = project(w.score.Q, x.i, r, new Float64Array(r));
    const t = dot(ps, qi);
    for (let k = 0; k < x.k; k++) bil[k] = (bil[k] ?? 0) + levelPosition(k, x.k) * t;
  }
  return { bil, xs, ys, ps, qi };
}

/** logits_k = beta_0 * bil_k + sum_j beta_{j+1} psi_kj (psi row-major k x d). */
export function combine(bil: ArrayLike<number>, psi: ArrayLike<number>, beta: ArrayLike<number>, k: number): number[] {
  const d = beta.length - 1;
  const out: number[] = new Array(k);
  for (let j = 0; j < k; j++) {
    let z = (beta[0] ?? 0) * (bil[j] ?? 0);
    for (let f = 0; f < d; f++) z += (beta[f + 1] ?? 0) * (psi[j * d + f] ?? 0);
    out[j] = z;
  }
  return out;
}

export function softmax(logits: ArrayLike<number>): number[] {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] ?? 0);
  const out: number[] = new Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const e = Math.exp((logits[i] ?? 0) - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / sum;
  return out;
}

export type { QuestionType };
