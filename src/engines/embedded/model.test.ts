import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededUnitVector } from '../../../test/fixtures/embedded.ts';
import { readArtifactFiles } from './artifacts.ts';
import { polarityOf } from './features.ts';
import { DEFAULT_MODEL_DIR } from './index.ts';
import { familiarityWeight, loadModel, parseModel, polarityAnswer, predict } from './model.ts';

const model = loadModel(DEFAULT_MODEL_DIR);

/** A unit vector at cosine `c` with `v` (moved toward a fixed seeded direction). */
function atCosine(v: Float32Array, c: number): Float32Array {
  const u = seededUnitVector(777);
  let along = 0;
  for (let d = 0; d < v.length; d++) along += (u[d] ?? 0) * (v[d] ?? 0);
  const perp = Float32Array.from(u, (x, d) => x - along * (v[d] ?? 0));
  const n = Math.hypot(...perp);
  return Float32Array.from(v, (x, d) => c * x + Math.sqrt(1 - c * c) * ((perp[d] ?? 0) / n));
}

describe('the committed model: familiarity blend', () => {
  const spam = model.signatures.find((s) => s.task === 'sms_spam');
  assert.ok(spam, 'the artifact has the sms_spam signature');
  const ask = (instruction: Float32Array) =>
    predict(
      {
        type: 'noul',
        k: 2,
        s: seededUnitVector(5),
        i: instruction,
        o: [null, instruction],
        pairSim: null,
        sentLen: 0,
        structured: false,
      },
      model,
    );

  it("answers a training task's own question as that task, and a reworded one gradually less so", () => {
    const own = ask(spam.instruction);
    assert.equal(own.task, 'sms_spam');
    assert.ok(own.seenWeight >= 0.99, `${own.seenWeight}`);
    const cosines = [
      1, 0.97, 0.94, 0.93, 0.925, 0.92, 0.915, 0.91, 0.9, 0.89, 0.88, 0.87, 0.86, 0.85, 0.84, 0.83, 0.82, 0.81, 0.8,
    ];
    const answers = cosines.map((c) => ask(atCosine(spam.instruction, c)));
    for (let i = 1; i < answers.length; i++) {
      const [a, b] = [answers[i - 1], answers[i]];
      assert.ok(a && b && b.seenWeight <= a.seenWeight + 1e-12, 'the weight falls with the cosine');
      const jump = Math.abs((b?.probabilities[1] ?? 0) - (a?.probabilities[1] ?? 0));
      assert.ok(jump < 0.25, `no jump between cosines ${cosines[i - 1]} and ${cosines[i]}: ${jump}`);
    }
    const { center, width } = model.calibration.familiarity;
    const far = ask(atCosine(spam.instruction, center - 5 * width));
    assert.ok(
      far.seenWeight < 0.01,
      `far from the task (five widths under the fitted center): answered as unseen, ${far.seenWeight}`,
    );
    assert.equal(
      familiarityWeight(model.calibration.familiarity.center, model.calibration.familiarity),
      0.5,
      'half way at the fitted center',
    );
  });
});

describe('the committed model: polarity', () => {
  const levels = (texts: string[]) => texts.map((t) => seededUnitVector(1000 + t.length));
  const positive = model.polarity.axis;
  /** Level texts at the two ends of a polarity scale. */
  const lowest = model.polarity.levels.map((x) => -x);
  const highest = model.polarity.levels;
  const unit = (v: Float32Array) => {
    const n = Math.hypot(...v);
    return Float32Array.from(v, (x) => x / n);
  };
  /** A state placed `z` spreads along the axis from the training states' center. */
  const stateAt = (z: number) =>
    unit(Float32Array.from(model.polarity.center, (c, d) => c + z * model.polarity.scale * (positive[d] ?? 0)));

  it('moves a polarity-scale answer toward the end the state leans to, and leaves other scales alone', () => {
    const o = [unit(Float32Array.from(lowest)), seededUnitVector(3), unit(Float32Array.from(highest))];
    const x = (z: number, options: (Float32Array | null)[]) => {
      const s = stateAt(z);
      return {
        type: 'score' as const,
        k: 3,
        s,
        i: seededUnitVector(4),
        o: options,
        pairSim: null,
        sentLen: 0,
        structured: false,
        polarity: polarityOf('score', s, options, model.polarity),
      };
    };
    const happy = predict(x(3, o), model).probabilities;
    const sad = predict(x(-3, o), model).probabilities;
    assert.ok((happy[2] ?? 0) > (happy[0] ?? 0), `${happy}`);
    assert.ok((sad[0] ?? 0) > (sad[2] ?? 0), `${sad}`);
    // a scale across the axis (seeded level texts): the polarity answer weighs nothing
    const stars = levels(['1 star', '2 stars', '3 stars']);
    const across = x(3, stars);
    assert.ok(Math.abs(across.polarity.scale) < 0.3, `${across.polarity.scale}`);
    const withoutPolarity = predict({ ...across, polarity: undefined }, model).probabilities;
    const withPolarity = predict(across, model).probabilities;
    for (const [i, p] of withPolarity.entries()) assert.ok(Math.abs(p - (withoutPolarity[i] ?? 0)) < 0.01);
  });
});

describe('artifacts of brier-lite 3.5 (one polarity direction, no level-shape term)', () => {
  it("load, with the states' direction standing for the levels' and a linear polarity answer", () => {
    const { weights, calibration } = readArtifactFiles(DEFAULT_MODEL_DIR);
    const { levels: _levels, ...polarity } = weights.polarity;
    const { delta: _delta, saturation: _saturation, ...pc } = calibration.polarity;
    const old = parseModel({ ...weights, polarity }, { ...calibration, polarity: pc });
    assert.deepEqual(old.polarity.levels, old.polarity.axis);
    assert.notDeepEqual(model.polarity.levels, model.polarity.axis, 'the committed model has two directions');
    const c = { ...pc, gamma: 1, alpha: 0 };
    const p = polarityAnswer(1, 1, 3, c);
    const e = [Math.exp(-1), 1, Math.exp(1)];
    const sum = e.reduce((a, b) => a + b);
    for (const [i, v] of p.entries()) assert.ok(Math.abs(v - (e[i] ?? 0) / sum) < 1e-12, `${p}`);
  });
});

describe('artifacts of brier-lite 3.6 (no saturation)', () => {
  const { weights, calibration } = readArtifactFiles(DEFAULT_MODEL_DIR);
  const { saturation, ...linear } = calibration.polarity;

  it("load and read the state's place linearly, where the committed model levels off", () => {
    assert.ok(saturation !== undefined && saturation > 0, 'the committed model saturates');
    const old = parseModel(weights, { ...calibration, polarity: linear });
    /** How much surer of the lowest of five levels a state twice as far down makes the answer. */
    const surer = (c: typeof linear) =>
      (polarityAnswer(-2 * saturation, 1, 5, c)[0] ?? 0) - (polarityAnswer(-saturation, 1, 5, c)[0] ?? 0);
    const linearGain = surer(old.calibration.polarity);
    const saturatedGain = surer(model.calibration.polarity);
    assert.ok(saturatedGain > 0 && saturatedGain < linearGain / 2, `${saturatedGain} vs ${linearGain}`);
  });

  it('refuse a saturation that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN])
      assert.throws(
        () => parseModel(weights, { ...calibration, polarity: { ...linear, saturation: bad } }),
        /polarity malformed/,
      );
  });
});

describe('brier-lite 4: zeroshot.json', () => {
  const files = readArtifactFiles(DEFAULT_MODEL_DIR);
  const zs = files.zeroShot;

  it('ships with the committed model, and parses into pools of both encoders and the family maps', () => {
    assert.ok(zs, 'models/brier-lite/zeroshot.json exists');
    assert.ok(model.zeroShot);
    assert.equal(model.zeroShot.pools.minilm.dim, 384);
    assert.equal(model.zeroShot.pools.use.dim, 512);
    assert.ok(model.zeroShot.noul.polarity, 'polarity yes/no questions are answered');
    assert.ok(model.zeroShot.choice, 'choices over topics are answered');
  });

  it('refuses unknown signals, a mix outside [0, 1], wrong pool sizes and a bad saturation', () => {
    assert.ok(zs);
    const polarity = zs.noul.polarity;
    assert.ok(polarity);
    const bad = [
      { ...zs, noul: { ...zs.noul, polarity: { ...polarity, signals: ['mystery', ...polarity.signals.slice(1)] } } },
      { ...zs, noul: { ...zs.noul, polarity: { ...polarity, alpha: 1.5 } } },
      { ...zs, noul: { ...zs.noul, polarity: { ...polarity, weights: [1] } } },
      { ...zs, pools: { ...zs.pools, minilm: { ...zs.pools.minilm, dim: 512 } } },
      { ...zs, pools: { ...zs.pools, use: { ...zs.pools.use, variances: [1] } } },
      { ...zs, saturation: 0 },
      { ...zs, format: 'brier-lite-zeroshot/0' },
    ];
    for (const z of bad) assert.throws(() => parseModel(files.weights, files.calibration, z), /zeroshot/);
  });

  it('without it (brier-lite 3.x artifacts) reads nothing of the question words: a negated question is not flipped', () => {
    const old = parseModel(files.weights, files.calibration, null);
    assert.equal(old.zeroShot, null);
    const x = {
      type: 'noul' as const,
      k: 2,
      s: seededUnitVector(5),
      i: seededUnitVector(6),
      o: [null, seededUnitVector(6)],
      pairSim: null,
      sentLen: 0,
      structured: false,
      reading: {
        family: 'topic' as const,
        negated: true,
        plain: 'Is this about sports?',
        direction: 0,
        emotion: false,
        optionSides: null,
        residual: null,
      },
    };
    const plain = { ...x, reading: { ...x.reading, negated: false } };
    assert.deepEqual(predict(x, old).probabilities, predict(plain, old).probabilities);
    const a = predict(x, model).probabilities;
    const b = predict(plain, model).probabilities;
    assert.ok(Math.abs((a[1] ?? 0) - (b[0] ?? 0)) < 1e-12, 'brier-lite 4 answers the complement');
  });
});
