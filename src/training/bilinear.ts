/**
 * Building bilinear heads for training: empty or randomly initialised weights (stage A), and the
 * mean of several heads as one (the shipped head of a type averages its seeds' heads).
 */
import type { QuestionType } from '../engines/embedded/features.ts';
import type { BilinearWeights, LowRank } from '../engines/embedded/head.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';

export function emptyBilinear(rank: number, init?: () => number): BilinearWeights {
  const m = (): Float32Array => {
    const a = new Float32Array(EMBEDDING_DIM * rank);
    if (init) for (let i = 0; i < a.length; i++) a[i] = init();
    return a;
  };
  return {
    noul: { rank, U: m(), V: m() },
    choice: { rank, U: m(), V: m() },
    score: { rank, U: m(), V: m(), P: m(), Q: m() },
  };
}

/**
 * The mean of several heads as one head, per type: each bilinear score is a sum over rank
 * components, so the mean of M heads is the head whose factors are theirs side by side (rank = sum
 * of their ranks), with the state-side factors (U, P) scaled by 1/M. Each type averages its own
 * list of heads.
 */
export function averageBilinear(byType: Record<QuestionType, readonly BilinearWeights[]>): BilinearWeights {
  /** The heads' `pick` matrices side by side (EMBEDDING_DIM x rank), each entry times `scale`. */
  const side = (
    heads: readonly BilinearWeights[],
    type: QuestionType,
    rank: number,
    pick: (h: BilinearWeights) => Float32Array,
    scale: number,
  ): Float32Array => {
    const out = new Float32Array(EMBEDDING_DIM * rank);
    for (let d = 0; d < EMBEDDING_DIM; d++) {
      let offset = d * rank;
      for (const h of heads) {
        const m = pick(h);
        const r = h[type].rank;
        for (let a = 0; a < r; a++) out[offset + a] = (m[d * r + a] ?? 0) * scale;
        offset += r;
      }
    }
    return out;
  };
  const lowRank = (type: QuestionType): LowRank => {
    const heads = byType[type];
    if (heads.length === 0) throw new Error(`averageBilinear: no heads for ${type}`);
    const rank = heads.reduce((a, h) => a + h[type].rank, 0);
    return {
      rank,
      U: side(heads, type, rank, (h) => h[type].U, 1 / heads.length),
      V: side(heads, type, rank, (h) => h[type].V, 1),
    };
  };
  const score = lowRank('score');
  const scoreHeads = byType.score;
  return {
    noul: lowRank('noul'),
    choice: lowRank('choice'),
    score: {
      ...score,
      P: side(scoreHeads, 'score', score.rank, (h) => h.score.P, 1 / scoreHeads.length),
      Q: side(scoreHeads, 'score', score.rank, (h) => h.score.Q, 1),
    },
  };
}
