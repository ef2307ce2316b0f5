import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mulberry32 } from '../lib/seeded.ts';
import { classStatistics, ldaLogits, shrinkageLda } from './lda.ts';

/** Rows of two classes in `d` dimensions: class means +-`shift` on dimension 0, noise `noise` on every dimension, except dimension 1 which carries a large noise shared with dimension 0. */
function correlated(n: number, d: number, seed: number) {
  const random = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const states = new Float32Array(n * d);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    y[i] = c;
    const shared = 3 * gauss();
    for (let t = 0; t < d; t++) states[i * d + t] = 0.3 * gauss();
    // dimension 0 carries the class and the shared noise, dimension 1 the shared noise alone
    states[i * d] = (states[i * d] ?? 0) + (c === 1 ? 1 : -1) + shared;
    states[i * d + 1] = (states[i * d + 1] ?? 0) + shared;
  }
  return { states, y };
}

function accuracy(lda: ReturnType<typeof shrinkageLda>, states: Float32Array, y: Int32Array, d: number): number {
  const z = new Float64Array(2);
  let right = 0;
  for (let i = 0; i < y.length; i++) {
    ldaLogits(lda, states, d, i, z);
    if (((z[1] ?? 0) > (z[0] ?? 0) ? 1 : 0) === y[i]) right++;
  }
  return right / y.length;
}

describe('shrinkage LDA', () => {
  test('class statistics are the class means, counts and the pooled within-class covariance', () => {
    // two classes in 2 dimensions: class 0 at (0, 0) +- (1, 0); class 1 at (4, 2) +- (0, 1)
    const states = Float32Array.from([-1, 0, 1, 0, 4, 1, 4, 3]);
    const s = classStatistics(states, 2, [0, 1, 2, 3], [0, 0, 1, 1], 2);
    assert.deepEqual(s.counts, [2, 2]);
    assert.deepEqual(s.means.to2DArray(), [
      [0, 0],
      [4, 2],
    ]);
    // scatter (2, 0; 0, 2) over n - classes = 2
    assert.deepEqual(s.covariance.to2DArray(), [
      [1, 0],
      [0, 1],
    ]);
    // only the rows named are used
    assert.deepEqual(classStatistics(states, 2, [0, 2], [0, 0, 1, 1], 2).counts, [1, 1]);
  });

  test('gamma 1 is the nearest class mean: weights proportional to the means, offsets from the priors', () => {
    const states = Float32Array.from([-1, 0, 1, 0, 4, 1, 4, 3, 4, 2]);
    const lda = shrinkageLda(classStatistics(states, 2, [0, 1, 2, 3, 4], [0, 0, 1, 1, 1], 2), 1);
    const ratio = (lda.weights[2] ?? 0) / 4;
    assert.ok(ratio > 0);
    assert.ok(Math.abs((lda.weights[3] ?? 0) - 2 * ratio) < 1e-9);
    assert.deepEqual([lda.weights[0], lda.weights[1]], [0, 0]);
    assert.ok(Math.abs((lda.offsets[0] ?? 0) - Math.log(2 / 5)) < 1e-9);
  });

  test('the shared covariance removes noise that the nearest class mean cannot', () => {
    const d = 8;
    const train = correlated(200, d, 1);
    const test = correlated(2000, d, 2);
    const stats = classStatistics(
      train.states,
      d,
      Array.from({ length: 200 }, (_, i) => i),
      train.y,
      2,
    );
    const nearestMean = accuracy(shrinkageLda(stats, 1), test.states, test.y, d);
    const lda = accuracy(shrinkageLda(stats, 0.1), test.states, test.y, d);
    assert.ok(nearestMean < 0.7, `nearest mean ${nearestMean}`);
    assert.ok(lda > 0.95, `LDA ${lda}`);
  });

  test('a class without rows gets a finite, low logit', () => {
    const states = Float32Array.from([0, 1, 0, 2, 1, 0]);
    const lda = shrinkageLda(classStatistics(states, 2, [0, 1, 2], [0, 0, 1], 3), 0.5);
    const z = ldaLogits(lda, states, 2, 0, new Float64Array(3));
    assert.ok(z.every(Number.isFinite));
    assert.ok((z[2] ?? 0) < (z[0] ?? 0));
  });
});
