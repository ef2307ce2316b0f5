import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededUnitVector } from '../../test/fixtures/embedded.ts';
import { baseline } from '../engines/embedded/zero-shot.ts';
import { mulberry32 } from '../lib/seeded.ts';
import { assemblePool, chooseAlpha, fitChoice, fitLogistic, mix, poolParts, sourceWeights } from './families.ts';

describe('families: reference pools', () => {
  const dim = 8;
  const rand = mulberry32(7);
  const vectors = (n: number, shift: number) =>
    Array.from({ length: n }, () => Float32Array.from({ length: dim }, (_, d) => rand() + (d === 0 ? shift : 0)));
  const bySet = new Map([
    ['a', vectors(50, 0)],
    ['b', vectors(50, 3)],
  ]);
  const parts = poolParts(bySet, dim);

  it("at full rank, gives each question the pool's exact mean and spread of cosines", () => {
    const pool = assemblePool(parts, null, dim);
    const q = seededUnitVector(3, dim);
    const all = [...(bySet.get('a') ?? []), ...(bySet.get('b') ?? [])];
    const cos = all.map((v) => v.reduce((s, x, d) => s + x * (q[d] ?? 0), 0));
    const mean = cos.reduce((s, x) => s + x, 0) / cos.length;
    const sd = Math.sqrt(cos.reduce((s, x) => s + (x - mean) ** 2, 0) / cos.length);
    const b = baseline(pool, q);
    assert.ok(Math.abs(b.mu - mean) < 1e-5, `${b.mu} vs ${mean}`);
    assert.ok(Math.abs(b.sd - sd) < 1e-4, `${b.sd} vs ${sd}`);
  });

  it('leaves the excluded set out of the pool', () => {
    const without = assemblePool(parts, 'b', dim);
    const onlyA = assemblePool(poolParts(new Map([['a', bySet.get('a') ?? []]]), dim), null, dim);
    assert.deepEqual(
      [...without.mean].map((x) => x.toFixed(5)),
      [...onlyA.mean].map((x) => x.toFixed(5)),
    );
    assert.ok((assemblePool(parts, null, dim).mean[0] ?? 0) > (without.mean[0] ?? 0) + 1);
  });
});

describe('families: fits', () => {
  it('recovers a logistic map from its own draws', () => {
    const rand = mulberry32(11);
    const x: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const a = rand() * 4 - 2;
      x.push([a]);
      y.push(rand() < 1 / (1 + Math.exp(-(1.5 * a - 0.5))) ? 1 : 0);
    }
    const m = fitLogistic(x, y, sourceWeights(x.map(() => 's')));
    assert.ok(Math.abs((m.weights[0] ?? 0) - 1.5) < 0.15, `${m.weights}`);
    assert.ok(Math.abs(m.bias + 0.5) < 0.15, `${m.bias}`);
  });

  it('recovers a softmax weight over per-option signals', () => {
    const rand = mulberry32(5);
    const items = Array.from({ length: 1500 }, () => {
      const rows = [0, 1, 2].map(() => [rand() * 2 - 1]);
      const e = rows.map((r) => Math.exp(2 * (r[0] ?? 0)));
      const u = rand() * e.reduce((a, b) => a + b, 0);
      let target = 0;
      for (let c = u; target < 2 && c > (e[target] ?? 0); target++) c -= e[target] ?? 0;
      return { rows, target, weight: 1 };
    });
    const m = fitChoice(items);
    assert.ok(Math.abs((m.weights[0] ?? 0) - 2) < 0.3, `${m.weights}`);
  });

  it('weighs each source set as one, however many rows it has', () => {
    assert.deepEqual(sourceWeights(['a', 'a', 'a', 'b']), [1 / 3, 1 / 3, 1 / 3, 1]);
  });

  it('mixes with uniform as little as keeps every group at or below the uniform Brier', () => {
    const good = Array.from({ length: 40 }, (_, i) => ({ p: [0.2, 0.8], target: i % 5 === 0 ? 0 : 1 }));
    const bad = Array.from({ length: 40 }, (_, i) => ({ p: [0.1, 0.9], target: i % 5 < 3 ? 0 : 1 }));
    assert.equal(chooseAlpha([good], mix), 0);
    const alpha = chooseAlpha([good, bad], mix);
    assert.ok(alpha > 0 && alpha <= 1);
    assert.equal(chooseAlpha([good, bad.slice(0, 5)], mix), 0, 'a group under MIN_GROUP does not constrain');
  });
});
