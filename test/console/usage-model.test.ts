import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UsageDay } from '../../console/src/api.ts';
import { axisTicks, daysWithTraffic } from '../../console/src/usage-model.ts';

const day = (date: string, requests: number, errors = 0): UsageDay => ({
  date,
  requests,
  errors,
  questions: requests,
  input_tokens: 10 * requests,
  output_tokens: requests,
  teacher_calls: 0,
});

test('the usage table lists only the days with traffic, newest first', () => {
  const daily = [day('2026-11-01', 0), day('2026-11-02', 3), day('2026-11-03', 0), day('2026-11-04', 0, 1)];
  assert.deepEqual(
    daysWithTraffic(daily).map((d) => d.date),
    ['2026-11-04', '2026-11-02'],
  );
  assert.deepEqual(
    daily.map((d) => d.date),
    ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04'],
    'the input is not reordered',
  );
});

test("a day whose only traffic is a distillation job's teacher calls is listed (issue 41)", () => {
  const daily = [day('2026-11-01', 0), { ...day('2026-11-02', 0), teacher_calls: 70 }];
  assert.deepEqual(
    daysWithTraffic(daily).map((d) => d.date),
    ['2026-11-02'],
  );
});

test('a window of zeros has no day to list (the page shows its empty state instead)', () => {
  assert.deepEqual(
    daysWithTraffic(Array.from({ length: 30 }, (_, i) => day(`2026-11-${String(i + 1).padStart(2, '0')}`, 0))),
    [],
  );
});

describe('usage chart: the y axis', () => {
  test('whole, evenly spaced ticks that reach the highest bar', () => {
    assert.deepEqual(axisTicks(3), { top: 3, ticks: [0, 1, 2, 3] });
    assert.deepEqual(axisTicks(1), { top: 1, ticks: [0, 1] });
    assert.deepEqual(axisTicks(0), { top: 1, ticks: [0, 1] });
    assert.deepEqual(axisTicks(7), { top: 8, ticks: [0, 2, 4, 6, 8] });
    assert.deepEqual(axisTicks(1234), { top: 1500, ticks: [0, 500, 1000, 1500] });
    for (let max = 1; max <= 2000; max += 7) {
      const { top, ticks } = axisTicks(max);
      assert.ok(top >= max && ticks.at(-1) === top && ticks[0] === 0);
      assert.ok(ticks.length <= 6, `${max}: ${ticks}`);
      const steps = new Set(ticks.slice(1).map((t, i) => t - (ticks[i] ?? 0)));
      assert.equal(steps.size, 1, `evenly spaced: ${ticks}`);
      assert.ok(ticks.every(Number.isInteger));
    }
  });
});
