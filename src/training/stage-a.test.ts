import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { QuestionInput, QuestionType } from '../engines/embedded/features.ts';
import { mulberry32 } from '../lib/seeded.ts';
import { emptyBilinear } from './bilinear.ts';
import { seededUnitVector } from './golden.ts';
import { batchGradient, namedMatrices, type Row, rowsFrom } from './stage-a.ts';

const RANK = 4;

function input(type: QuestionType, k: number, seed: number, options: Float32Array[]): QuestionInput {
  return {
    type,
    k,
    s: seededUnitVector(seed),
    i: seededUnitVector(seed + 1),
    // noul's `false` option has no text; the others come from a shared pool, so that two rows of a
    // batch share an option (its V gradient is summed across rows before the outer product)
    o: Array.from({ length: k }, (_, j) =>
      type === 'noul' && j === 0 ? null : (options[(seed + j) % options.length] ?? null),
    ),
    pairSim: type === 'noul' ? 0.4 : null,
    sentLen: 0.5,
    structured: false,
  };
}

/** A batch with rows of every type, two tasks, and options shared between rows. */
function batch(): Row[] {
  const options = Array.from({ length: 6 }, (_, j) => seededUnitVector(900 + j));
  const spec: [QuestionType, number, string][] = [
    ['noul', 2, 'a'],
    ['noul', 2, 'b'],
    ['choice', 4, 'a'],
    ['choice', 3, 'b'],
    ['score', 5, 'a'],
    ['score', 3, 'b'],
  ];
  return spec.map(([type, k, task], n) => rowsFrom(task, input(type, k, 10 * (n + 1), options), n % k));
}

function betas(rand: () => number): Record<QuestionType, number[]> {
  const of = (n: number): number[] => [1, ...Array.from({ length: n }, () => rand() - 0.5)];
  return { noul: of(4), choice: of(3), score: of(8) };
}

const weight = (row: Row): number => (row.task === 'a' ? 0.25 : 0.5);

function zeroBetas(): Record<QuestionType, Float64Array> {
  return { noul: new Float64Array(5), choice: new Float64Array(4), score: new Float64Array(9) };
}

/** d loss / d params[idx] by central difference (params[idx] restored afterwards). */
function slope(params: Float32Array | number[], idx: number, loss: () => number, h: number): number {
  const old = params[idx] ?? 0;
  params[idx] = old + h;
  const up = loss();
  params[idx] = old - h;
  const down = loss();
  params[idx] = old;
  return (up - down) / (2 * h);
}

describe('stage A (training, head weights)', () => {
  it("batch gradients match finite differences of the batch's weighted loss, for every matrix and beta", () => {
    const rand = mulberry32(7);
    const w = emptyBilinear(RANK, () => (rand() - 0.5) * 0.6);
    const beta = betas(rand);
    const rows = batch();
    const loss = (): number => batchGradient(rows, w, beta, emptyBilinear(RANK), zeroBetas(), weight);
    const g = emptyBilinear(RANK);
    const gb = zeroBetas();
    batchGradient(rows, w, beta, g, gb, weight);
    const grads = new Map(namedMatrices(g));
    const h = 1e-2;
    for (const [name, param] of namedMatrices(w)) {
      const dparam = grads.get(name) ?? new Float32Array();
      // the largest gradient entries (most dimensions carry a small share) and a few others
      const order = [...dparam.keys()].sort((i, j) => Math.abs(dparam[j] ?? 0) - Math.abs(dparam[i] ?? 0));
      const largest = Math.abs(dparam[order[0] ?? 0] ?? 0);
      assert.ok(largest > 1e-3, `${name}: no gradient at all`);
      for (const idx of [...order.slice(0, 3), 5, 1000, 2047]) {
        const numeric = slope(param, idx, loss, h);
        const analytic = dparam[idx] ?? 0;
        assert.ok(
          Math.abs(numeric - analytic) < 1e-3 * Math.abs(analytic) + 1e-6,
          `${name}[${idx}]: ${numeric} vs ${analytic}`,
        );
      }
    }
    for (const type of ['noul', 'choice', 'score'] as const) {
      for (let j = 1; j < beta[type].length; j++) {
        const numeric = slope(beta[type], j, loss, h);
        const got = gb[type][j] ?? 0;
        assert.ok(Math.abs(numeric - got) < 1e-3 * Math.abs(got) + 1e-6, `beta.${type}[${j}]: ${numeric} vs ${got}`);
      }
      // beta_0 (the bilinear weight) is fixed at 1 in stage A: no gradient
      assert.equal(gb[type][0], 0);
    }
  });

  it('refuses weights whose types have different ranks', () => {
    const w = { ...emptyBilinear(RANK), choice: emptyBilinear(RANK + 1).choice };
    assert.throws(
      () => batchGradient(batch(), w, betas(mulberry32(1)), emptyBilinear(RANK), zeroBetas(), weight),
      /same rank/,
    );
  });
});
