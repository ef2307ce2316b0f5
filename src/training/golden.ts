/**
 * Synthetic, seeded inputs whose answers `npm run train` records in models/brier-lite/golden.json;
 * the tests recompute them from the committed artifact, so code and artifact cannot drift apart.
 */

import type { QuestionInput, QuestionType } from '../engines/embedded/features.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import { mulberry32 as rng } from '../lib/seeded.ts';

/** A deterministic unit vector for a seed. */
export function seededUnitVector(seed: number): Float32Array {
  const r = rng(seed);
  const v = new Float32Array(EMBEDDING_DIM);
  let n = 0;
  for (let i = 0; i < EMBEDDING_DIM; i++) {
    const x = r() * 2 - 1;
    v[i] = x;
    n += x * x;
  }
  n = Math.sqrt(n);
  for (let i = 0; i < EMBEDDING_DIM; i++) v[i] = (v[i] ?? 0) / n;
  return v;
}

export function goldenInputs(): QuestionInput[] {
  const cases: [QuestionType, number, boolean][] = [
    ['noul', 2, false],
    ['noul', 2, true],
    ['choice', 2, false],
    ['choice', 4, false],
    ['choice', 255, false],
    ['score', 2, false],
    ['score', 5, true],
    ['score', 10, false],
  ];
  return cases.map(([type, k, pair], c) => ({
    type,
    k,
    s: seededUnitVector(1000 + c),
    i: seededUnitVector(2000 + c),
    o: Array.from({ length: k }, (_, j) => (type === 'noul' && j === 0 ? null : seededUnitVector(3000 + 300 * c + j))),
    pairSim: pair ? 0.5 + 0.05 * c : null,
    sentLen: 0.7 * (c - 4),
    structured: c % 3 === 1,
  }));
}
