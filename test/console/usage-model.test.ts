import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UsageDay } from '../../console/src/api.ts';
import { daysWithTraffic } from '../../console/src/usage-model.ts';

const day = (date: string, requests: number, errors = 0): UsageDay => ({
  date,
  requests,
  errors,
  questions: requests,
  input_tokens: 10 * requests,
  output_tokens: requests,
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

test('a window of zeros has no day to list (the page shows its empty state instead)', () => {
  assert.deepEqual(
    daysWithTraffic(Array.from({ length: 30 }, (_, i) => day(`2026-11-${String(i + 1).padStart(2, '0')}`, 0))),
    [],
  );
});
