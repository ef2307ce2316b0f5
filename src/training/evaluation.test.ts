import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  asServed,
  baselineMetrics,
  brierScore,
  computeMetrics,
  ece,
  eceNoiseFloor,
  fromWire,
  majorityPrior,
  nll,
  oneHot,
  reliability,
  uniform,
} from './evaluation.ts';

const close = (a: number, b: number, eps = 1e-9): void => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

describe('metrics', () => {
  it('Brier is the CalDec convention: sum of squares divided by the number of options', () => {
    close(brierScore([0.5, 0.5], [0, 1]), 0.25);
    close(brierScore([1, 0, 0], [1, 0, 0]), 0);
    close(brierScore([0, 1, 0, 0], [1, 0, 0, 0]), 2 / 4);
    close(brierScore(uniform(4), oneHot(4, 2)), 3 / 16);
  });

  it('NLL is the cross-entropy with soft targets, clipped', () => {
    close(nll([0.25, 0.75], [0, 1]), -Math.log(0.75));
    close(nll([0.5, 0.5], [0.2, 0.8]), Math.log(2));
    assert.ok(Number.isFinite(nll([0, 1], [1, 0])));
  });

  it('ECE uses 15 equal-width bins on the top probability', () => {
    close(ece([{ confidence: 0.9, correct: true }]), 0.1);
    // two items in the same bin average before the gap is taken
    close(
      ece([
        { confidence: 0.61, correct: true },
        { confidence: 0.65, correct: false },
      ]),
      Math.abs(0.5 - 0.63),
    );
    // items in different bins do not cancel
    close(
      ece([
        { confidence: 0.95, correct: false },
        { confidence: 0.55, correct: true },
      ]),
      (0.95 + 0.45) / 2,
    );
    assert.equal(reliability([]).length, 15);
  });

  it('accuracy and ECE skip targets without a unique maximum; MAE only on ordinal items', () => {
    const m = computeMetrics([
      { p: [0.2, 0.8], t: [0, 1] },
      { p: [0.6, 0.4], t: [0.5, 0.5] },
      { p: [0.1, 0.2, 0.7], t: [0, 1, 0], ordinal: true },
    ]);
    assert.equal(m.n, 3);
    assert.equal(m.nHard, 2);
    close(m.accuracy, 0.5);
    close(m.scoreMae ?? -1, Math.abs(0.2 + 1.4 - 1));
  });

  it('ties at the top count as expected accuracy under random tie-breaking', () => {
    const m = computeMetrics([
      { p: [0.5, 0.5], t: [0, 1] },
      { p: [0.25, 0.25, 0.25, 0.25], t: [1, 0, 0, 0] },
      { p: [0.4, 0.4, 0.2], t: [0, 0, 1] },
    ]);
    close(m.accuracy, (0.5 + 0.25 + 0) / 3);
    // a uniform answer is calibrated whatever the label order
    close(
      computeMetrics([
        { p: [0.5, 0.5], t: [1, 0] },
        { p: [0.5, 0.5], t: [1, 0] },
      ]).ece,
      0,
    );
  });

  it('baselines: majority prior = label frequencies, uniform = 1/k', () => {
    const targets = [oneHot(2, 0), oneHot(2, 0), oneHot(2, 0), oneHot(2, 1)];
    assert.deepEqual(majorityPrior(targets), [0.75, 0.25]);
    const b = baselineMetrics([{ targets, ordinal: false }]);
    close(b.prior.accuracy, 0.75);
    close(b.uniform.brier, 0.25);
    close(b.prior.brier, (0.75 * (0.25 ** 2 * 2) + 0.25 * (0.75 ** 2 * 2)) / 2);
  });

  it('the ECE noise floor of a calibrated model shrinks with the sample size', () => {
    const confidences = (n: number) => Array.from({ length: n }, (_, i) => 0.3 + (0.6 * i) / n);
    const small = eceNoiseFloor(confidences(100));
    const large = eceNoiseFloor(confidences(10_000));
    assert.ok(small > 0.04 && small < 0.12, `n=100: ${small}`);
    assert.ok(large < 0.012, `n=10000: ${large}`);
    // Confidences of 0 or 1 are never wrong by chance; seeded, so the same every run.
    assert.equal(eceNoiseFloor([1, 1, 0]), 0);
    assert.equal(eceNoiseFloor(confidences(500)), eceNoiseFloor(confidences(500)));
    assert.equal(eceNoiseFloor([]), 0);
  });

  it('reads answers as served: rounded to 0.01, 0.00 read as 0.0025, renormalized', () => {
    assert.deepEqual(asServed([0.5002, 0.4998]), [0.5, 0.5]);
    const p = fromWire([1, 0]);
    close(p[1] ?? 0, 0.0025 / 1.0025);
    close((p[0] ?? 0) + (p[1] ?? 0), 1);
    const q = asServed([0.333, 0.333, 0.334]);
    close(q[0] ?? 0, 1 / 3);
    // A near-uniform answer is a tie once served: ECE credits it 1/k, whatever the tiny skew.
    close(computeMetrics([{ p: asServed([0.5001, 0.4999]), t: [0, 1], ordinal: false }]).ece, 0);
  });
});
