import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { calibrate } from '../engines/embedded/calibration.ts';
import { mulberry32 } from '../lib/seeded.ts';
import {
  fitModelCalibration,
  fitType,
  formatCalibrationReport,
  parseCalibrationSet,
  type RawAnswer,
  readCalibrationSet,
  selectRows,
} from './model-calibration.ts';

/**
 * Synthetic raw answers of one set: `k` options, the model puts `confidence` on its pick, which is
 * the label with probability `accuracy` (else another option).
 */
function answers(set: string, type: RawAnswer['type'], n: number, k: number, accuracy: number, confidence: number) {
  const random = mulberry32(n * 31 + k + Math.round(accuracy * 100) + set.length);
  return Array.from({ length: n }, (_, i): RawAnswer => {
    const target = Math.floor(random() * k);
    const pick = random() < accuracy ? target : (target + 1 + Math.floor(random() * (k - 1))) % k;
    const p = Array.from({ length: k }, (_, j) => (j === pick ? confidence : (1 - confidence) / (k - 1)));
    return { id: `${set}/${i}`, set, type, p, target };
  });
}

const uniformBrier = (k: number) => (1 - 1 / k) / k;

describe('fitting a model calibration per question type', () => {
  test('an overconfident model is brought to or below uniform on every set, held out', () => {
    // right 40% of the time at 95% confidence on 4 options (uniform: 25%)
    const rows = [
      ...answers('a', 'choice', 60, 4, 0.4, 0.95),
      ...answers('b', 'choice', 60, 4, 0.45, 0.95),
      ...answers('c', 'choice', 60, 4, 0.35, 0.95),
    ];
    const fit = fitModelCalibration(rows);
    const choice = fit.types.choice;
    assert.ok(choice, 'choice fitted');
    assert.ok(choice.temperature > 1 || choice.alpha > 0.3, `softened: ${JSON.stringify(choice)}`);
    for (const r of fit.report) {
      assert.ok(r.before.brier > r.uniform_brier, `${r.set}: raw worse than uniform`);
      assert.ok(r.after.brier <= r.uniform_brier + 1e-9, `${r.set}: after ${r.after.brier} vs ${r.uniform_brier}`);
      assert.ok(r.held_out, `${r.set}: held out measured`);
      assert.ok(r.held_out.brier <= r.uniform_brier + 1e-9, `${r.set}: held out ${r.held_out.brier}`);
      assert.ok(r.after.nll < r.before.nll);
    }
    assert.equal(fit.report[0]?.set, null, 'the first row is the whole type');
    assert.equal(fit.report[0]?.n, 180);
  });

  test('an informative model keeps beating uniform after calibration', () => {
    const rows = [...answers('a', 'noul', 80, 2, 0.85, 0.99), ...answers('b', 'noul', 80, 2, 0.8, 0.99)];
    const fit = fitModelCalibration(rows);
    const all = fit.report[0];
    assert.ok(all && all.after.brier < 0.6 * uniformBrier(2), `after ${all?.after.brier}`);
    assert.ok(all && all.after.brier < all.before.brier);
    assert.ok((fit.types.noul?.alpha ?? 1) < 0.5);
  });

  test('a set the others do not predict raises the alpha floor until it is not worse than uniform held out', () => {
    // two sets where the model is right, one where it is confidently wrong
    const good = [...answers('a', 'score', 60, 3, 0.9, 0.9), ...answers('b', 'score', 60, 3, 0.9, 0.9)];
    const bad = answers('c', 'score', 60, 3, 0.1, 0.9);
    const fit = fitType([...good, ...bad]);
    assert.ok(fit.alphaFloor > 0, 'floor raised');
    const held = fit.heldOut?.get('c') ?? [];
    const brier = bad.reduce((s, a, i) => {
      const p = held[i] ?? [];
      return s + p.reduce((t, v, j) => t + (v - (j === a.target ? 1 : 0)) ** 2, 0) / p.length;
    }, 0);
    assert.ok(brier / bad.length <= uniformBrier(3) + 1e-9, `held-out c: ${brier / bad.length}`);
    assert.ok(fit.params.alpha >= fit.alphaFloor);
    // the served map is the one fitted on every set
    const p = calibrate([Math.log(0.9), Math.log(0.05), Math.log(0.05)], fit.params);
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  });

  test('one source set: fitted in-sample within its cap, no held-out number', () => {
    const fit = fitModelCalibration(answers('only', 'noul', 50, 2, 0.3, 0.9));
    const [all, only] = fit.report;
    assert.equal(all?.held_out, null);
    assert.equal(only?.set, 'only');
    assert.ok((all?.after.brier ?? 1) <= uniformBrier(2) + 1e-9);
    assert.match(formatCalibrationReport(fit.report), /noul\s+only\s+50/);
  });
});

describe('the shipped calibration set', () => {
  test('parses into rows of three question types from several source sets', () => {
    const { rows, sha256 } = readCalibrationSet();
    assert.match(sha256, /^[0-9a-f]{64}$/);
    assert.ok(rows.length >= 300, `${rows.length} rows`);
    const sets = (type: string) => new Set(rows.filter((r) => r.type === type).map((r) => r.set));
    assert.ok(sets('noul').size >= 2 && sets('choice').size >= 2 && sets('score').size >= 2);
    for (const r of rows) {
      const q = r.request.questions[0];
      assert.ok(q && r.target >= 0 && r.target < q.options.length, r.id);
    }
    assert.equal(selectRows(rows, 2).length, 2 * new Set(rows.map((r) => r.set)).size);
    assert.deepEqual(new Set(selectRows(rows, 1, ['hellaswag']).map((r) => r.set)), new Set(['hellaswag']));
  });

  test('a row whose label is not an option is refused, naming the line', () => {
    const line = JSON.stringify({
      id: 'x',
      set: 's',
      state: 'hello',
      question: { type: 'choice', instructions: 'Which?', criteria: { a: null, b: null } },
      label: 'c',
    });
    assert.throws(() => parseCalibrationSet(`\n${line}\n`), /line 2: label not an option/);
  });
});
