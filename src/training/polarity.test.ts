import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { polarityAnswer, polarityWeight } from '../engines/embedded/model.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import { fitPolarity, fitPolarityParams, POLARITY_WEIGHT, type PolarityItem } from './polarity.ts';
import { POLARITY_LEXICON } from './polarity-lexicon.ts';
import { hardBrier, uniformBrier } from './stage-b.ts';
import type { DiskStore } from './store.ts';
import { polarityAxis } from './train.ts';

/** A set of k-level rows whose state sits along the axis by its level (`signal`), plus seeded noise. */
function set(task: string, n: number, k: number, signal: number, scale = 0.9): PolarityItem[] {
  return Array.from({ length: n }, (_, i) => {
    const target = i % k;
    const noise = (((i * 2654435761) >>> 0) / 2 ** 32 - 0.5) * 2;
    return { task, k, scale, target, state: signal * ((2 * target) / (k - 1) - 1) + noise };
  });
}

describe('polarity answer', () => {
  it('reads a polarity scale where the state carries it, keeping every left-out set at or below uniform', () => {
    const items = [...set('a', 300, 3, 1), ...set('b', 300, 5, 1), ...set('c', 300, 3, 1)];
    const { calibration, heldOut } = fitPolarity(items);
    assert.ok(calibration.gamma > 0, JSON.stringify(calibration));
    assert.equal(heldOut.size, items.length);
    for (const task of ['a', 'b', 'c']) {
      const own = items.filter((it) => it.task === task);
      const brier = own.reduce((s, it) => s + hardBrier(heldOut.get(it) ?? [], it.target), 0) / own.length;
      assert.ok(brier < uniformBrier(own[0]?.k ?? 3), `${task}: ${brier}`);
    }
  });

  it('answers uniform where no set carries it', () => {
    const p = fitPolarityParams([...set('a', 300, 3, 0), ...set('b', 300, 3, 0)]);
    assert.equal(p.alpha === 1 || p.gamma === 0, true, JSON.stringify(p));
  });

  it('favours the middle levels where the sets are mostly in the middle', () => {
    // every other row a middle level whose state sits at 0
    const middling = (task: string) =>
      set(task, 300, 3, 1).map((it, i) => (i % 2 === 0 ? { ...it, target: 1, state: it.state / 4 } : it));
    const p = fitPolarityParams([...middling('a'), ...middling('b')]);
    assert.ok(p.gamma > 0 && p.delta < 0, JSON.stringify(p));
    const neutral = polarityAnswer(0, 1, 3, { ...POLARITY_WEIGHT, ...p });
    assert.ok((neutral[1] ?? 0) > (neutral[0] ?? 0) && (neutral[1] ?? 0) > (neutral[2] ?? 0), `${neutral}`);
  });

  it('levels off where a state said more strongly is no surer of its end', () => {
    // past |state| 0.5 a row is at the state's end three times in four, however far out it lies
    const levelled = (task: string) =>
      Array.from({ length: 400 }, (_, i): PolarityItem => {
        const u = ((i * 2654435761) >>> 0) / 2 ** 32;
        const state = (u - 0.5) * 8;
        const end = state > 0 ? 2 : 0;
        return { task, k: 3, scale: 0.9, state, target: Math.abs(state) < 0.5 || i % 4 === 0 ? 1 : end };
      });
    const p = fitPolarityParams([...levelled('a'), ...levelled('b')]);
    assert.ok(p.saturation !== undefined, JSON.stringify(p));
    const c = { ...POLARITY_WEIGHT, ...p };
    const far = polarityAnswer(4, 1, 3, c)[2] ?? 0;
    const near = polarityAnswer(1.5, 1, 3, c)[2] ?? 0;
    assert.ok(far - near < 0.1 && far < 0.85, `${near} ${far}`);
  });

  it('leaves out sets whose scale runs across the axis', () => {
    const { heldOut } = fitPolarity([...set('a', 50, 3, 1), ...set('b', 50, 3, 1), ...set('stars', 50, 5, 1, 0.05)]);
    assert.equal(heldOut.size, 100);
  });

  it('orders the answer by the state and the direction of the scale; weighs it by how much the scale is a polarity', () => {
    const c = { ...POLARITY_WEIGHT, gamma: 2, delta: 0, alpha: 0 };
    const up = polarityAnswer(1, 1, 3, c);
    assert.ok((up[2] ?? 0) > (up[1] ?? 0) && (up[1] ?? 0) > (up[0] ?? 0), `${up}`);
    const down = polarityAnswer(1, -1, 3, c);
    for (const [i, p] of [...up].reverse().entries()) assert.ok(Math.abs(p - (down[i] ?? 0)) < 1e-12);
    assert.ok(polarityWeight(0.9, c) > 0.99 && polarityWeight(-0.9, c) > 0.99);
    assert.ok(polarityWeight(0.05, c) < 0.01);
  });
});

describe('polarity directions', () => {
  /** A store where each lexicon sentence is a noisy copy of +e0 or -e0, and the two level words +-e1. */
  const fakeStore = (omit?: string): DiskStore => {
    const vectors = new Map<string, Float32Array>();
    const at = (d: number, sign: number, seed: number) => {
      const v = new Float32Array(EMBEDDING_DIM);
      v[d] = sign;
      v[2 + (seed % 100)] = 0.3;
      return v;
    };
    for (const [i, t] of POLARITY_LEXICON.positive.entries()) vectors.set(t, at(0, 1, i));
    for (const [i, t] of POLARITY_LEXICON.negative.entries()) vectors.set(t, at(0, -1, i));
    vectors.set('positive', at(1, 1, 50));
    vectors.set('negative', at(1, -1, 50));
    if (omit) vectors.delete(omit);
    return { get: (t) => vectors.get(t), set: () => {}, flush: () => {}, size: () => vectors.size };
  };

  it("places states along the lexicon's direction and reads scales along the two words'", () => {
    const states = [1, -1, 3].map((x) => Float32Array.from({ length: EMBEDDING_DIM }, (_, d) => (d === 0 ? x : 0)));
    const p = polarityAxis(fakeStore(), states);
    assert.ok(Math.abs((p.axis[0] ?? 0) - 1) < 1e-6, `axis ${p.axis.slice(0, 3)}`);
    assert.ok(Math.abs((p.levels[1] ?? 0) - 1) < 1e-6, `levels ${p.levels.slice(0, 3)}`);
    assert.ok(Math.abs((p.center[0] ?? 0) - 1) < 1e-6);
    assert.ok(Math.abs(p.scale - Math.sqrt(8 / 3)) < 1e-5, `${p.scale}`);
  });

  it('names a lexicon text the embedding cache lacks', () => {
    const missing = POLARITY_LEXICON.negative[3];
    assert.throws(() => polarityAxis(fakeStore(missing), []), new RegExp(`${missing}`));
  });
});
