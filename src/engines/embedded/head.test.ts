import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { seededInput, seededUnitVector } from '../../../test/fixtures/embedded.ts';
import { goldenInputs } from '../../training/golden.ts';
import type { CalibrationFile, WeightsFile } from './artifacts.ts';
import { calibrate, resolveCalibration } from './calibration.ts';
import { descriptors, type QuestionInput, SCALAR_FEATURES, scalarFeatures } from './features.ts';
import { DEFAULT_MODEL_DIR, EMBEDDED_MODEL_ID } from './index.ts';
import { loadModel, parseModel, predict } from './model.ts';

const model = loadModel(DEFAULT_MODEL_DIR);
/** A fresh copy of one committed artifact file, to alter. */
const readArtifact = <T>(file: string): T => JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, file), 'utf8')) as T;

function assertDistribution(p: number[], k: number): void {
  assert.equal(p.length, k);
  for (const v of p) assert.ok(Number.isFinite(v) && v >= 0 && v <= 1, `bad probability ${v}`);
  assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
}

describe('head with the committed artifact', () => {
  it('gives a proper distribution for every type and option count', () => {
    for (let k = 2; k <= 255; k++) assertDistribution(predict(seededInput('choice', k, 7 * k), model).probabilities, k);
    for (let k = 2; k <= 10; k++) {
      assertDistribution(predict(seededInput('score', k, 11 * k), model).probabilities, k);
      assertDistribution(predict(seededInput('score', k, 13 * k, 0.8), model).probabilities, k);
    }
    assertDistribution(predict(seededInput('noul', 2, 5), model).probabilities, 2);
    assertDistribution(predict(seededInput('noul', 2, 6, 0.9), model).probabilities, 2);
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
      const x = seededInput('choice', k, 100 + k);
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
            ...seededInput(type, type === 'noul' ? 2 : 2 + (seed % 9), 500 + seed, seed % 2 ? 0.7 : null),
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
});

describe('bilinear head math', () => {
  it('score features are ordinal: level position terms are antisymmetric around the middle', () => {
    const psi = scalarFeatures(seededInput('score', 5, 3));
    const d = SCALAR_FEATURES.score.length;
    assert.equal(psi[0 * d], -1);
    assert.equal(psi[2 * d], 0);
    assert.equal(psi[4 * d], 1);
    assert.equal(psi[0 * d + 1], psi[4 * d + 1]);
  });
});
