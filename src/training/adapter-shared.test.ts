import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32 } from '../lib/seeded.ts';
import { toData } from './adapter-data.ts';
import { fitSharedModel, SHARED_FOLDS, type SharedInput, sharedObjectiveOf } from './adapter-shared.ts';

test("the shared model chooses its penalties over the templates' folds merged into SHARED_FOLDS (3), or fewer where they have fewer", () => {
  assert.equal(SHARED_FOLDS, 3);
  const random = mulberry32(9);
  const d = 4;
  const inputs = (folds: number): SharedInput[] =>
    [0, 1].map((n) => {
      const rows = Array.from({ length: 20 }, (_, i) => ({
        base: [0.5, 0.5],
        state: Float32Array.from({ length: d }, () => random() - 0.5 + (i % 2)),
        label: i % 2,
      }));
      const t = { template: `t${n}`, type: 'noul' as const, labels: ['false', 'true'], rows };
      const train = rows.map((_, i) => i);
      return { template: t, data: toData(t, false), train, fold: new Map(train.map((i) => [i, i % folds])) };
    });
  assert.equal(fitSharedModel(inputs(5), { maxIterations: 20 })?.folds, 3);
  assert.equal(fitSharedModel(inputs(2), { maxIterations: 20 })?.folds, 2);
});

test("the shared model's gradient is its objective's (finite differences), over yes/no, choice and score templates", () => {
  const random = mulberry32(5);
  const d = 6;
  const vec = () => Float32Array.from({ length: d }, () => random() - 0.5);
  const template = (type: 'noul' | 'choice' | 'score', labels: string[], withOptions: boolean) => {
    const k = labels.length;
    const rows = Array.from({ length: 7 }, (_, i) => {
      const p = Array.from({ length: k }, () => 0.1 + random());
      const sum = p.reduce((a, b) => a + b, 0);
      return { base: p.map((v) => v / sum), state: vec(), label: i % k };
    });
    // a yes/no question's no option has no text: its class is shared by label
    const labelStates = withOptions ? labels.map((_, j) => (type === 'noul' && j === 0 ? null : vec())) : null;
    return { template: `t_${type}_${labels.length}_${withOptions}`, type, labels, rows, labelStates };
  };
  const inputs: SharedInput[] = [
    template('noul', ['false', 'true'], true),
    template('noul', ['false', 'true'], false),
    template('choice', ['a', 'b', 'c'], true),
    template('score', ['1', '2', '3'], false),
  ].map((t) => {
    const data = toData(t, false);
    return {
      template: t,
      data,
      train: [0, 1, 2, 3, 4, 5, 6],
      fold: new Map([0, 1, 2, 3, 4, 5, 6].map((i) => [i, i % 2])),
    };
  });
  const { size, objective } = sharedObjectiveOf(inputs, { lambda: 0.01, ownBias: 0.003 });
  const x = Float64Array.from({ length: size }, () => (random() - 0.5) * 0.5);
  const g = new Float64Array(size);
  objective(x, g);
  const scratch = new Float64Array(size);
  const h = 1e-6;
  for (let p = 0; p < size; p++) {
    const up = Float64Array.from(x);
    up[p] = (up[p] ?? 0) + h;
    const down = Float64Array.from(x);
    down[p] = (down[p] ?? 0) - h;
    const numeric = (objective(up, scratch) - objective(down, scratch)) / (2 * h);
    assert.ok(Math.abs(numeric - (g[p] ?? 0)) < 1e-6, `parameter ${p}: ${numeric} vs ${g[p]}`);
  }
});
