import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mulberry32 } from '../lib/seeded.ts';
import { calibrationReport, DRIFT } from './calibration.ts';
import type { ServedOutcome } from './examples.ts';

const WEEK = 7 * 86_400_000;
const MONDAY = Date.UTC(2026, 10, 2);

/** n outcomes of a yes/no template whose served P(true) is `p`; the truth is drawn with `truth(p)`. */
function outcomes(n: number, truth: (p: number) => number, seed: number, start = MONDAY): ServedOutcome[] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const p = 0.55 + 0.4 * random();
    return {
      templateId: 'tpl_a',
      label: random() < truth(p) ? 'true' : 'false',
      served: [1 - p, p],
      servedBy: 'brier-lite-3.7.0',
      createdAt: start + i * (WEEK / 40),
    };
  });
}

const LABELS = new Map([['tpl_a', ['false', 'true']]]);

describe('calibration of live answers', () => {
  test('answers as right as they say are not drifted; answers much surer than right are', () => {
    const calibrated = calibrationReport(
      outcomes(200, (p) => p, 1),
      LABELS,
    )[0];
    assert.equal(calibrated?.drifted, false, calibrated?.reason);
    assert.match(calibrated?.reason ?? '', /^calibrated: the last 50 outcomes have ECE/);
    const over = calibrationReport(
      outcomes(200, () => 0.4, 2),
      LABELS,
    )[0];
    assert.equal(over?.drifted, true, over?.reason);
    assert.match(
      over?.reason ?? '',
      /^drifted: the last 50 outcomes have ECE 0\.\d+, above 0\.\d+ \(the larger of 0\.1 and 2 x its chance floor/,
    );
    assert.equal(over?.recent?.n, DRIFT.window);
  });

  test('drift is judged only from 30 outcomes; weeks start on Monday and only weeks with outcomes are listed', () => {
    const few = calibrationReport(
      outcomes(29, () => 0, 3),
      LABELS,
    )[0];
    assert.equal(few?.drifted, false);
    assert.equal(few?.recent, null);
    assert.match(few?.reason ?? '', /29 outcomes; drift is judged on the last 50 once there are 30/);
    const spread = [...outcomes(40, (p) => p, 4, MONDAY), ...outcomes(40, (p) => p, 5, MONDAY + 3 * WEEK)];
    const r = calibrationReport(spread, LABELS)[0];
    assert.deepEqual(
      r?.weekly.map((w) => [w.week, w.n]),
      [
        ['2026-11-02', 40],
        ['2026-11-23', 40],
      ],
    );
    assert.equal(r?.overall.n, 80);
    assert.equal(r?.reliability.length, 15);
  });

  test('outcomes of templates the account no longer has are left out', () => {
    assert.deepEqual(
      calibrationReport(
        outcomes(40, (p) => p, 6),
        new Map(),
      ),
      [],
    );
  });
});
