import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { familiarityWeight } from '../engines/embedded/model.ts';
import { type BlendItem, blend, fitFamiliarity, IN_DISTRIBUTION_WEIGHT } from './familiarity.ts';
import { uniformBrier } from './stage-b.ts';

/** Rows of a task whose nearest other task's answer (at `similarity`) is right with probability `skill`. */
function task(name: string, n: number, similarity: number | null, skill: number): BlendItem[] {
  return Array.from({ length: n }, (_, i) => {
    const target = i % 2;
    const right = (i * 7919) % 100 < skill * 100;
    const p = right ? (target === 1 ? [0.1, 0.9] : [0.9, 0.1]) : target === 1 ? [0.9, 0.1] : [0.1, 0.9];
    return { task: name, target, pUnseen: [0.5, 0.5], seen: similarity === null ? null : { p, similarity } };
  });
}
const cap = () => uniformBrier(2);

describe('familiarity blend', () => {
  it('gives a training task asked as in training its own answer, and moves away from it smoothly', () => {
    const f = fitFamiliarity(task('unrelated', 40, 0.4, 0.5), cap);
    assert.ok(familiarityWeight(1, f) >= IN_DISTRIBUTION_WEIGHT);
    const steps = Array.from({ length: 31 }, (_, i) => familiarityWeight(0.7 + i * 0.01, f));
    for (let i = 1; i < steps.length; i++) {
      assert.ok((steps[i] ?? 0) >= (steps[i - 1] ?? 0), 'monotone');
      assert.ok(
        (steps[i] ?? 0) - (steps[i - 1] ?? 0) < 0.6,
        `no jump between cosines: ${steps.map((w) => w.toFixed(2))}`,
      );
    }
  });

  it('trusts a near task whose answers transfer, at the similarity it was measured at', () => {
    const f = fitFamiliarity([...task('twin', 100, 0.84, 0.95), ...task('other', 100, null, 0)], cap);
    assert.ok(familiarityWeight(0.84, f) > 0.5, JSON.stringify(f));
  });

  it('does not trust a near task whose answers do not transfer, and keeps the set at or below uniform', () => {
    const items = task('false-friend', 100, 0.84, 0.3);
    const f = fitFamiliarity(items, cap);
    assert.ok(familiarityWeight(0.84, f) < 0.1, JSON.stringify(f));
    const brier = items.reduce((s, it) => {
      const p = blend(it, f);
      return s + ((p[0] ?? 0) - (it.target === 0 ? 1 : 0)) ** 2 + ((p[1] ?? 0) - (it.target === 1 ? 1 : 0)) ** 2;
    }, 0);
    assert.ok(brier / items.length <= uniformBrier(2) * 2 + 1e-9);
  });

  it('blends the two answers by the weight, and answers as unseen where no task is near', () => {
    const f = { center: 0.8, width: 0.02 };
    const item: BlendItem = { task: 't', target: 1, pUnseen: [0.5, 0.5], seen: { p: [0.1, 0.9], similarity: 0.8 } };
    assert.deepEqual(blend(item, f), [0.3, 0.7]);
    assert.deepEqual(blend({ ...item, seen: null }, f), [0.5, 0.5]);
  });
});
