import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calibrate, resolveCalibration } from '../engines/embedded/calibration.ts';
import { DESCRIPTORS } from '../engines/embedded/features.ts';
import { combine } from '../engines/embedded/head.ts';
import { mulberry32 } from '../lib/seeded.ts';
import {
  type BRow,
  fitSoftness,
  type HeldOut,
  hardBrier,
  hindsightCalibration,
  leaveTasksOut,
  uniformBrier,
} from './stage-b.ts';

/**
 * `n` three-option rows of one task: one feature that marks an option, the right one with
 * probability `hit` (otherwise one of the other two).
 */
function task(name: string, n: number, hit: number, seed: number, level = 0): BRow[] {
  const rand = mulberry32(seed);
  const d = DESCRIPTORS.map((x, i) => (i === 0 ? 1 : x === '10*(mean cos(s,o) - 0.2)' ? level : 0));
  return Array.from({ length: n }, () => {
    const target = Math.floor(rand() * 3);
    const marked = rand() < hit ? target : (target + 1 + Math.floor(rand() * 2)) % 3;
    const psi = Float64Array.from([0, 1, 2], (j) => (j === marked ? 1 : 0));
    return { task: name, d, k: 3, bil: new Float64Array(3), psi, target };
  });
}

/**
 * Three tasks where the feature is right 85% of the time and one where it is right 45% (chance:
 * 33%), not told apart by any descriptor.
 */
function strongAndWeak(): BRow[] {
  return [
    ...task('a', 90, 0.85, 1),
    ...task('b', 90, 0.85, 2),
    ...task('c', 90, 0.85, 3),
    ...task('weak', 90, 0.45, 4),
  ];
}

describe('leave-tasks-out calibration (training, stage B)', () => {
  it("keeps every fitted task's Brier at or below the uniform answer's, however the others pull", () => {
    // without the cap, the fit answers the weak task as confidently as the others, worse than uniform there
    const rows = strongAndWeak();
    const fit = leaveTasksOut(rows, 1, 1e-2);
    for (const name of ['a', 'b', 'c', 'weak']) {
      const own = rows.filter((r) => r.task === name);
      let brier = 0;
      for (const r of own) {
        const logits = combine(r.bil, r.psi, fit.beta, r.k);
        brier += hardBrier(calibrate(logits, resolveCalibration(fit.calibration, r.d)), r.target);
      }
      // (the cap holds on the out-of-task logits the calibration is fitted on; the shipped betas,
      // fitted on every task, move a capped task's Brier by far less than 0.005; without the cap the
      // weak task's is 0.31)
      assert.ok(brier / own.length <= uniformBrier(3) + 0.005, `${name}: ${brier / own.length} > ${uniformBrier(3)}`);
    }
    // and the cap does not simply answer uniform: the marked option keeps more than 1/3
    const p = calibrate(
      combine(new Float64Array(3), Float64Array.from([1, 0, 0]), fit.beta, 3),
      resolveCalibration(fit.calibration, rows[0]?.d ?? []),
    );
    assert.ok((p[0] ?? 0) > 0.4, `confidence in the marked option: ${p[0]}`);
  });

  it("answers a left-out task uniformly where its descriptors lie beyond every fitted task's", () => {
    // the fourth task's options resemble its states far more than any other task's do
    const rows = [
      ...task('a', 60, 0.85, 1),
      ...task('b', 60, 0.85, 2),
      ...task('c', 60, 0.85, 3),
      ...task('far', 60, 0.85, 4, 5),
    ];
    const fit = leaveTasksOut(rows, 1, 1e-2);
    const far = fit.heldOut.filter((h) => h.task === 'far');
    assert.equal(far.length, 60);
    for (const h of far) assert.deepEqual(h.p, [1 / 3, 1 / 3, 1 / 3]);
    const near = fit.heldOut.find((h) => h.task === 'a')?.p ?? [];
    assert.ok(Math.max(...near) - Math.min(...near) > 0.05, `${near}`);
    // the shipped fit has seen it
    assert.deepEqual(
      fit.calibration.support?.find((r) => r.index === DESCRIPTORS.indexOf('10*(mean cos(s,o) - 0.2)')),
      {
        index: DESCRIPTORS.indexOf('10*(mean cos(s,o) - 0.2)'),
        min: 0,
        max: 5,
      },
    );
  });

  it('answers a left-out task the same whatever its own labels: nothing fitted for it has seen them', () => {
    const rows = [...task('a', 60, 0.85, 1), ...task('b', 60, 0.85, 2), ...task('c', 60, 0.85, 3)];
    // the same questions of task c, labelled so that the feature points away from the answer
    const relabelled = rows.map((r) => (r.task === 'c' ? { ...r, target: (r.target + 1) % 3 } : r));
    const answers = (fit: ReturnType<typeof leaveTasksOut>, name: string): number[][] =>
      fit.heldOut.filter((h) => h.task === name).map((h) => h.p);
    const before = leaveTasksOut(rows, 1, 1e-2);
    const after = leaveTasksOut(relabelled, 1, 1e-2);
    assert.deepEqual(answers(after, 'c'), answers(before, 'c'));
    // while the other tasks' answers do depend on them (c's labels fit their beta and calibration)
    assert.notDeepEqual(answers(after, 'a'), answers(before, 'a'));
  });

  it("diagnoses, with hindsight, what each left-out task's own (T, alpha) would have scored", () => {
    // the weak task's descriptors equal the others', so the shared map must under-trust the strong ones
    const rows = strongAndWeak();
    const fit = leaveTasksOut(rows, 1, 1e-2);
    const hindsight = new Map(hindsightCalibration(fit.heldOut).map((h) => [h.task, h]));
    assert.deepEqual([...hindsight.keys()], ['a', 'b', 'c', 'weak']);
    const brierOf = (name: string): number => {
      const own = fit.heldOut.filter((h) => h.task === name);
      return own.reduce((s, h) => s + hardBrier(h.p, h.target), 0) / own.length;
    };
    for (const [name, h] of hindsight) {
      assert.equal(h.k, 3);
      assert.deepEqual(h.meanD, rows[0]?.d);
      assert.ok(h.brier <= uniformBrier(3) + 1e-12, `${name}: ${h.brier}`);
    }
    const a = hindsight.get('a');
    const weak = hindsight.get('weak');
    // a strong task, trusted by its own labels, is sharper and scores better than the shared map let it
    assert.ok(a && weak && a.brier < brierOf('a') - 0.01, `${a?.brier} vs ${brierOf('a')}`);
    assert.ok(a.alpha < 1 && (weak.alpha === 1 || weak.temperature > a.temperature), JSON.stringify({ a, weak }));
  });

  describe('softness of the shrink outside the fitted ranges', () => {
    // one descriptor (index 1) ranged [0, 1]; a confident map (alpha 0, T 1) on logits [2, 0]
    const model = { t: [0, 0], a: [-20, 0], support: [{ index: 1, min: 0, max: 1 }] };
    const rows = (task: string, v: number, rightRate: number, n = 100) =>
      Array.from({ length: n }, (_, i) => ({
        task,
        target: i < n * rightRate ? 0 : 1,
        logits: [2, 0],
        d: [1, v],
        p: [],
        model,
      })) as (HeldOut & { model: typeof model })[];
    const cap = () => uniformBrier(2);

    it('is as smooth as the grid allows when the map still helps just outside its ranges', () => {
      assert.equal(fitSoftness([...rows('inside', 0.5, 0.9), ...rows('beyond', 1.2, 0.9)], cap), 2);
    });

    it('is a step when keeping any of the map outside its ranges puts a set above uniform', () => {
      assert.equal(fitSoftness([...rows('inside', 0.5, 0.9), ...rows('beyond', 1.2, 0.3)], cap), 0);
    });

    it('is in between when a little of the map helps outside its ranges and much of it hurts', () => {
      // 62% right: a weak pull toward the map's answer helps, a strong one costs more than uniform
      const s = fitSoftness([...rows('inside', 0.5, 0.9), ...rows('beyond', 1.5, 0.62)], cap);
      assert.equal(s, 1);
    });
  });
});
