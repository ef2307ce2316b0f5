import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calibrate, resolveCalibration } from '../engines/embedded/calibration.ts';
import { mulberry32 } from '../lib/seeded.ts';
import {
  type CalibrationItem,
  descriptorSupport,
  fitCalibration,
  fitCalibrationModel,
  fitDescriptorWeights,
} from './calibration-fit.ts';
import { brierScore } from './evaluation.ts';

describe('calibration fit', () => {
  const brier = (p: number[], target: number) => (1 - (p[target] ?? 0)) ** 2;

  it('fitting with an ECE weight calibrates the pooled answers that task-balanced NLL leaves off', () => {
    // Same logits in two tasks: a big one right 95% of the time, a small one right 60%. The
    // task-balanced NLL fits about their mean accuracy (0.775); the pooled accuracy is 0.915.
    const items: CalibrationItem[] = [];
    const add = (task: string, right: number, wrong: number) => {
      for (let i = 0; i < right + wrong; i++) items.push({ task, logits: [0, 2], target: i < right ? 1 : 0, d: [1] });
    };
    add('big', 855, 45);
    add('small', 60, 40);
    const confidence = (fit: ReturnType<typeof fitCalibrationModel>) =>
      calibrate([0, 2], resolveCalibration(fit, [1]))[1] ?? 0;
    const plain = confidence(fitCalibrationModel(items, 1, brier));
    const pooled = confidence(fitCalibrationModel(items, 1, brier, undefined, { eceWeight: 10 }));
    assert.ok(Math.abs(plain - 0.775) < 0.05, `NLL alone: ${plain}`);
    assert.ok(Math.abs(pooled - 0.915) < 0.02, `with the ECE weight: ${pooled}`);
  });

  /**
   * Same logits, two kinds of question told apart only by a descriptor value (2 or 1, placed in d(q)
   * by `descriptor`): one kind is right 97% of the time, the other 60%.
   */
  function sureAndUnsure(descriptor: (v: number) => number[]): CalibrationItem[] {
    const items: CalibrationItem[] = [];
    const add = (task: string, v: number, right: number, wrong: number) => {
      for (let i = 0; i < right + wrong; i++)
        items.push({ task, logits: [0, 1], target: i < right ? 1 : 0, d: descriptor(v) });
    };
    add('sure', 2, 485, 15);
    add('unsure', 1, 300, 200);
    return items;
  }

  it('fits a temperature that depends on a descriptor: sharper for the questions it marks as informative', () => {
    // Only ln T = t0 + t1 * d, moved together, serves both kinds.
    const fit = fitCalibrationModel(
      sureAndUnsure((v) => [1, v]),
      2,
      brier,
    );
    const confidence = (d: number) => calibrate([0, 1], resolveCalibration(fit, [1, d]))[1] ?? 0;
    const temperature = (d: number) => resolveCalibration(fit, [1, d]).temperature;
    assert.ok(temperature(2) < temperature(1) / 2, `T: ${temperature(2)} vs ${temperature(1)}`);
    assert.ok(Math.abs(confidence(2) - 0.97) < 0.03, `sure: ${confidence(2)} (${JSON.stringify(fit)})`);
    assert.ok(Math.abs(confidence(1) - 0.6) < 0.06, `unsure: ${confidence(1)} (${JSON.stringify(fit)})`);
  });

  it('searches a descriptor past the tuned grids too (a new descriptor is never left at 0 unfitted)', () => {
    // The two kinds of question told apart only by the eighth descriptor: the tuned grids cover the
    // first six, so without a generic grid its weights stayed 0 whatever the data.
    const d = (v: number) => [1, 0, 0, 0, 0, 0, 0, v];
    const fit = fitCalibrationModel(sureAndUnsure(d), 8, brier);
    const temperature = (v: number) => resolveCalibration(fit, d(v)).temperature;
    assert.ok(
      temperature(2) < temperature(1) / 2,
      `T: ${temperature(2)} vs ${temperature(1)} (${JSON.stringify(fit)})`,
    );
  });

  /** Rows whose labels are drawn from calibrate(logits, truth): `n` rows of `k` random logits. */
  function drawn(n: number, k: number, truth: { temperature: number; alpha: number }, seed: number) {
    const rand = mulberry32(seed);
    return Array.from({ length: n }, () => {
      const logits = Array.from({ length: k }, () => 3 * rand());
      const p = calibrate(logits, truth);
      let u = rand();
      let target = 0;
      while (target < k - 1 && u >= (p[target] ?? 0)) u -= p[target++] ?? 0;
      return { task: 't', logits, target };
    });
  }

  it('fits a per-task temperature between the points of the coarse grid', () => {
    // 0.6 lies between the coarse grid's 0.5 and 0.7: only the fine search lands within 5%.
    const fit = fitCalibration(drawn(4000, 4, { temperature: 0.6, alpha: 0 }, 11));
    assert.ok(Math.abs(fit.temperature / 0.6 - 1) < 0.05, JSON.stringify(fit));
    assert.ok(fit.alpha <= 0.03, JSON.stringify(fit));
  });

  it('keeps the uniform answer for logits with no signal (a fit must beat it by more than noise)', () => {
    // Labels drawn uniformly: any (T, alpha) that beats the uniform answer on these rows fits noise.
    const fit = fitCalibration(drawn(150, 4, { temperature: 1, alpha: 1 }, 5));
    assert.deepEqual(fit, { temperature: 1, alpha: 1 });
  });

  it('leaves a descriptor that no fitted question has at weight 0', () => {
    // The second descriptor is 0 everywhere (like hasPair when the one pair task is left out):
    // any weight fits equally, and a question that has it must not inherit an arbitrary one.
    const items: CalibrationItem[] = [];
    for (let i = 0; i < 400; i++) items.push({ task: 't', logits: [0, 2], target: i % 5 === 0 ? 0 : 1, d: [1, 0] });
    const fit = fitCalibrationModel(items, 2, brier);
    assert.equal(fit.t[1], 0);
    assert.equal(fit.a[1], 0);
    const p = calibrate([0, 2], resolveCalibration(fit, [1, 0]))[1] ?? 0;
    assert.ok(Math.abs(p - 0.8) < 0.03, `fitted where it has data: ${p}`);
  });

  it('answers uniform outside the descriptor range it was fitted on, and as before inside it', () => {
    const m = { t: [0.2, -0.5], a: [-3, 0.5] };
    const ranged = { ...m, support: descriptorSupport([{ d: [1, -1] }, { d: [1, 2] }, { d: [1, 0.5] }], [1]) };
    assert.deepEqual(ranged.support, [{ index: 1, min: -1, max: 2 }]);
    for (const v of [-1, 0, 2]) assert.deepEqual(resolveCalibration(ranged, [1, v]), resolveCalibration(m, [1, v]));
    for (const v of [-1.01, 2.01, 40]) {
      assert.deepEqual(resolveCalibration(ranged, [1, v]), { temperature: 1, alpha: 1 });
      assert.notDeepEqual(resolveCalibration(m, [1, v]), { temperature: 1, alpha: 1 });
    }
  });

  it('with a softness, shrinks toward uniform gradually outside the range: continuous at its edge, uniform far away', () => {
    const m = { t: [0.2, -0.5], a: [-3, 0.5] };
    const soft = { ...m, support: [{ index: 1, min: -1, max: 2 }], softness: 0.25 };
    const alpha = (v: number) => resolveCalibration(soft, [1, v]).alpha;
    // inside the range: the map itself
    assert.deepEqual(resolveCalibration(soft, [1, 0.5]), resolveCalibration(m, [1, 0.5]));
    // at the edge and a hair beyond: no jump
    assert.ok(Math.abs(alpha(2) - alpha(2.001)) < 0.01, `${alpha(2)} -> ${alpha(2.001)}`);
    // further out: alpha grows steadily toward 1
    const path = [2, 2.3, 2.75, 3.5, 5, 20].map(alpha);
    for (let i = 1; i < path.length; i++) assert.ok((path[i] ?? 0) > (path[i - 1] ?? 0), `${path}`);
    assert.ok((path.at(-1) ?? 0) > 0.999, `${path}`);
    // the temperature is the map's own
    assert.equal(resolveCalibration(soft, [1, 3]).temperature, resolveCalibration(m, [1, 3]).temperature);
  });

  describe('one descriptor fitted on soft-target items, the rest fixed', () => {
    const base = { t: [0.5, 0], a: [-3, 0] };
    const softBrier = (p: number[], target: number) => {
      throw new Error(`hard target ${target} on soft items ${p}`);
    };
    const fitOn = (soft: number[]): { t: number[]; a: number[] } =>
      fitDescriptorWeights(
        base,
        1,
        Array.from({ length: 50 }, () => ({ task: 'site', logits: [4, 0, 0], target: -1, soft, d: [1, 1] })),
        softBrier,
        // every site at most the uniform answer's Brier
        () => brierScore([1 / 3, 1 / 3, 1 / 3], soft),
      );

    it('shrinks to the uniform answer where confident logits are worse than it (Brier cap)', () => {
      const fit = fitOn([0.1, 0.45, 0.45]);
      const p = calibrate([4, 0, 0], resolveCalibration(fit, [1, 1]));
      assert.ok(Math.abs((p[0] ?? 0) - 1 / 3) < 1e-3, `${p}`);
    });

    it('keeps the signal where the soft targets agree with the logits', () => {
      const fit = fitOn([0.9, 0.05, 0.05]);
      const p = calibrate([4, 0, 0], resolveCalibration(fit, [1, 1]));
      assert.ok((p[0] ?? 0) > 0.8, `${p}`);
    });

    it('leaves questions without the descriptor as they were', () => {
      const fit = fitOn([0.1, 0.45, 0.45]);
      assert.deepEqual(resolveCalibration(fit, [1, 0]), resolveCalibration(base, [1, 0]));
    });

    it("keeps the model's descriptor ranges", () => {
      const support = [{ index: 1, min: 0, max: 1 }];
      const fit = fitDescriptorWeights(
        { ...base, support },
        1,
        Array.from({ length: 50 }, () => ({
          task: 'site',
          logits: [4, 0, 0],
          target: -1,
          soft: [0.9, 0.05, 0.05],
          d: [1, 1],
        })),
        softBrier,
        () => 1,
      );
      assert.notDeepEqual(fit.a, base.a);
      assert.deepEqual(fit.support, support);
    });
  });
});
