import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { brierScore } from '../../domain/metrics.ts';
import { mulberry32 } from '../../lib/seeded.ts';
import type { CalibrationFile, WeightsFile } from './artifacts.ts';
import {
  type CalibrationItem,
  calibrate,
  descriptorSupport,
  fitCalibration,
  fitCalibrationModel,
  fitDescriptorWeights,
  resolveCalibration,
} from './calibration.ts';
import { descriptors, type QuestionInput, SCALAR_FEATURES, scalarFeatures } from './features.ts';
import { goldenInputs, seededUnitVector } from './golden.ts';
import { averageBilinear, bilinearForward, emptyBilinear } from './head.ts';
import { DEFAULT_MODEL_DIR, EMBEDDED_MODEL_ID } from './index.ts';
import { loadModel, parseModel, predict } from './model.ts';

const model = loadModel(DEFAULT_MODEL_DIR);
/** A fresh copy of one committed artifact file, to alter. */
const readArtifact = <T>(file: string): T => JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, file), 'utf8')) as T;

function input(type: QuestionInput['type'], k: number, seed: number, pairSim: number | null = null): QuestionInput {
  return {
    type,
    k,
    s: seededUnitVector(seed),
    i: seededUnitVector(seed + 1),
    o: Array.from({ length: k }, (_, j) => (type === 'noul' && j === 0 ? null : seededUnitVector(seed + 10 + j))),
    pairSim,
    sentLen: 0,
    structured: false,
  };
}

function assertDistribution(p: number[], k: number): void {
  assert.equal(p.length, k);
  for (const v of p) assert.ok(Number.isFinite(v) && v >= 0 && v <= 1, `bad probability ${v}`);
  assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
}

describe('head with the committed artifact', () => {
  it('gives a proper distribution for every type and option count', () => {
    for (let k = 2; k <= 255; k++) assertDistribution(predict(input('choice', k, 7 * k), model).probabilities, k);
    for (let k = 2; k <= 10; k++) {
      assertDistribution(predict(input('score', k, 11 * k), model).probabilities, k);
      assertDistribution(predict(input('score', k, 13 * k, 0.8), model).probabilities, k);
    }
    assertDistribution(predict(input('noul', 2, 5), model).probabilities, 2);
    assertDistribution(predict(input('noul', 2, 6, 0.9), model).probabilities, 2);
    // no instruction, no option texts at all
    const bare: QuestionInput = {
      type: 'choice',
      k: 3,
      s: seededUnitVector(1),
      i: null,
      o: [null, null, null],
      pairSim: null,
      sentLen: 0,
      structured: false,
    };
    assertDistribution(predict(bare, model).probabilities, 3);
  });

  it('is invariant to the order of choice options', () => {
    for (const k of [2, 4, 9, 255]) {
      const x = input('choice', k, 100 + k);
      const perm = Array.from({ length: k }, (_, j) => (j * 7 + 3) % k);
      if (new Set(perm).size !== k) perm.sort((a, b) => b - a);
      const y: QuestionInput = { ...x, o: perm.map((j) => x.o[j] ?? null) };
      const px = predict(x, model).probabilities;
      const py = predict(y, model).probabilities;
      perm.forEach((j, pos) => {
        assert.ok(Math.abs((py[pos] ?? 0) - (px[j] ?? 0)) < 1e-12);
      });
    }
  });

  it('answers deterministically: the committed golden answers are reproduced', () => {
    const goldenPath = join(DEFAULT_MODEL_DIR, 'golden.json');
    assert.ok(existsSync(goldenPath));
    const golden = JSON.parse(readFileSync(goldenPath, 'utf8')) as { modelId: string; probabilities: number[][] };
    assert.equal(golden.modelId, model.id);
    // the id the engine reports is the committed artifact's: a retrain bumps both together
    assert.equal(model.id, EMBEDDED_MODEL_ID);
    const again = loadModel(DEFAULT_MODEL_DIR);
    goldenInputs().forEach((x, c) => {
      const p = predict(x, again).probabilities;
      const g = golden.probabilities[c] ?? [];
      assert.equal(p.length, g.length);
      p.forEach((v, j) => {
        assert.ok(Math.abs(v - (g[j] ?? 0)) < 1e-9, `case ${c} option ${j}: ${v} != ${g[j]}`);
      });
    });
  });

  it('refuses a calibration file whose descriptor ranges are malformed, and loads one without ranges', () => {
    const weights = readArtifact<WeightsFile>('weights.json');
    const withRange = (support: unknown): CalibrationFile => {
      const c = readArtifact<CalibrationFile>('calibration.json');
      Object.assign(c.types.choice.unseen, { support });
      return c;
    };
    for (const bad of [
      [{ index: 2, min: 1, max: 0 }],
      [{ index: 99, min: 0, max: 1 }],
      [{ index: 2, min: 0, max: null }],
    ])
      assert.throws(() => parseModel(weights, withRange(bad)), /calibration choice\/unseen malformed/);
    assert.equal(parseModel(weights, withRange(undefined)).id, EMBEDDED_MODEL_ID);
  });

  it('refuses weights whose per-type rank is missing or does not match the matrices', () => {
    const calibration = readArtifact<CalibrationFile>('calibration.json');
    const withRank = (rank: unknown): WeightsFile => {
      const w = readArtifact<WeightsFile>('weights.json');
      Object.assign(w.bilinear.score, { rank });
      return w;
    };
    for (const bad of [0, 2.5, undefined]) assert.throws(() => parseModel(withRank(bad), calibration), /score rank/);
    // a rank that does not fit the stored matrices
    const shipped = readArtifact<WeightsFile>('weights.json').bilinear.score.rank;
    assert.throws(() => parseModel(withRank(shipped + 1), calibration), /score\.U/);
    assert.equal(parseModel(withRank(shipped), calibration).weights.score.rank, shipped);
  });

  it('every calibration in the artifact is a valid monotone map', () => {
    for (const type of ['noul', 'choice', 'score'] as const) {
      for (const fam of ['seen', 'unseen'] as const) {
        const c = model.calibration.types[type][fam];
        assert.equal(c.beta.length, SCALAR_FEATURES[type].length + 1);
        for (let seed = 0; seed < 50; seed++) {
          const x = {
            ...input(type, type === 'noul' ? 2 : 2 + (seed % 9), 500 + seed, seed % 2 ? 0.7 : null),
            structured: seed % 3 === 0,
          };
          const r = resolveCalibration(c, descriptors(x));
          assert.ok(r.temperature > 0 && Number.isFinite(r.temperature) && r.alpha >= 0 && r.alpha <= 1);
        }
        for (const p of Object.values(c.tasks ?? {})) assert.ok(p.temperature > 0 && p.alpha >= 0 && p.alpha <= 1);
      }
    }
  });
});

describe('calibration map', () => {
  const brier = (p: number[], target: number) => (1 - (p[target] ?? 0)) ** 2;

  it('is monotone: raising one logit never lowers its probability nor reorders the others', () => {
    for (const temperature of [0.3, 1, 5, 20]) {
      for (const alpha of [0, 0.1, 0.5, 1]) {
        let prev = -1;
        for (let z = -10; z <= 10; z += 0.5) {
          const p = calibrate([z, 0.3, -1.2, 2], { temperature, alpha });
          assert.ok((p[0] ?? 0) >= prev - 1e-15);
          prev = p[0] ?? 0;
          assert.ok((p[3] ?? 0) >= (p[1] ?? 0) && (p[1] ?? 0) >= (p[2] ?? 0));
          assertDistribution(p, 4);
        }
      }
    }
  });

  it('alpha = 1 gives the uniform prior; alpha = 0, T = 1 is the softmax', () => {
    assert.deepEqual(calibrate([5, -3, 1], { temperature: 1, alpha: 1 }), [1 / 3, 1 / 3, 1 / 3]);
    const p = calibrate([Math.log(3), 0], { temperature: 1, alpha: 0 });
    assert.ok(Math.abs((p[0] ?? 0) - 0.75) < 1e-12);
  });

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

describe('bilinear head math', () => {
  it('the average of heads scores the mean of their bilinear scores, for every type', () => {
    const heads = [3, 5, 8].map((rank, h) => {
      const rand = mulberry32(100 + h);
      return emptyBilinear(rank, () => rand() - 0.5);
    });
    // noul and score average all three heads, choice only the first two
    const byType = { noul: heads, choice: heads.slice(0, 2), score: heads };
    const mean = averageBilinear(byType);
    assert.deepEqual([mean.noul.rank, mean.choice.rank, mean.score.rank], [16, 8, 16]);
    for (const type of ['noul', 'choice', 'score'] as const) {
      const x = input(type, type === 'noul' ? 2 : 5, 70);
      const got = bilinearForward(x, mean).bil;
      const own = byType[type];
      for (let k = 0; k < x.k; k++) {
        const want = own.reduce((a, h) => a + (bilinearForward(x, h).bil[k] ?? 0), 0) / own.length;
        assert.ok(Math.abs((got[k] ?? 0) - want) < 1e-5, `${type}[${k}]: ${got[k]} vs ${want}`);
      }
    }
    assert.throws(() => averageBilinear({ ...byType, choice: [] }), /no heads for choice/);
  });

  it('score features are ordinal: level position terms are antisymmetric around the middle', () => {
    const psi = scalarFeatures(input('score', 5, 3));
    const d = SCALAR_FEATURES.score.length;
    assert.equal(psi[0 * d], -1);
    assert.equal(psi[2 * d], 0);
    assert.equal(psi[4 * d], 1);
    assert.equal(psi[0 * d + 1], psi[4 * d + 1]);
  });
});
