/**
 * Synthetic, seeded inputs whose answers `npm run train` records in models/brier-lite/golden.json;
 * the tests recompute them from the committed artifact, so code and artifact cannot drift apart.
 */

import type { QuestionInput, QuestionType } from '../engines/embedded/features.ts';
import { MINILM_DIM } from '../engines/embedded/minilm.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import type { QuestionReading } from '../engines/embedded/reading.ts';
import { mulberry32 as rng } from '../lib/seeded.ts';

/** A deterministic unit vector for a seed (USE-lite's 512 dimensions unless told). */
export function seededUnitVector(seed: number, dim: number = EMBEDDING_DIM): Float32Array {
  const r = rng(seed);
  const v = new Float32Array(dim);
  let n = 0;
  for (let i = 0; i < dim; i++) {
    const x = r() * 2 - 1;
    v[i] = x;
    n += x * x;
  }
  n = Math.sqrt(n);
  for (let i = 0; i < dim; i++) v[i] = (v[i] ?? 0) / n;
  return v;
}

/** A reading (reading.ts) for the golden zero-shot cases. */
function reading(family: QuestionReading['family'], extra: Partial<QuestionReading> = {}): QuestionReading {
  return {
    family,
    negated: false,
    plain: null,
    direction: 0,
    emotion: false,
    optionSides: null,
    residual: null,
    ...extra,
  };
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
  const plain: QuestionInput[] = cases.map(([type, k, pair], c) => ({
    type,
    k,
    s: seededUnitVector(1000 + c),
    i: seededUnitVector(2000 + c),
    o: Array.from({ length: k }, (_, j) => (type === 'noul' && j === 0 ? null : seededUnitVector(3000 + 300 * c + j))),
    pairSim: pair ? 0.5 + 0.05 * c : null,
    sentLen: 0.7 * (c - 4),
    structured: c % 3 === 1,
  }));
  // brier-lite 4's zero-shot families: the same kind of inputs, read as each family, with MiniLM vectors
  const families: [QuestionType, number, QuestionReading][] = [
    ['noul', 2, reading('topic')],
    ['noul', 2, reading('spam')],
    ['noul', 2, reading('polarity', { direction: -1, negated: true })],
    ['noul', 2, reading('polarity', { direction: 1, emotion: true })],
    ['noul', 2, reading('pair')],
    ['choice', 5, reading('topic', { optionSides: [0, 0, 0, 0, 0], residual: [false, false, false, false, true] })],
    ['choice', 3, reading('polarity', { optionSides: [-1, 0, 1], residual: [false, false, false] })],
    ['score', 5, reading('polarity', { direction: 1 })],
    ['noul', 2, reading('other')],
  ];
  const zeroShot: QuestionInput[] = families.map(([type, k, r], c) => {
    const base = plain[0] as QuestionInput;
    const seed = 7000 + 100 * c;
    const o = Array.from({ length: k }, (_, j) => (type === 'noul' && j === 0 ? null : seededUnitVector(seed + j)));
    return {
      ...base,
      type,
      k,
      s: seededUnitVector(seed + 50),
      i: seededUnitVector(seed + 51),
      o,
      pairSim: r.family === 'pair' ? 0.6 : null,
      polarity: { state: 1.5 - 0.5 * c, scale: 0.1 },
      lnWords: 2 + 0.25 * c,
      reading: r,
      mini: {
        s: seededUnitVector(seed + 60, MINILM_DIM),
        o: o.map((v, j) => (v ? seededUnitVector(seed + 70 + j, MINILM_DIM) : null)),
        pairSim: r.family === 'pair' ? 0.7 : null,
      },
    };
  });
  return [...plain, ...zeroShot];
}
