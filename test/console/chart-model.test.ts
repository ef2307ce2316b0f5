import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DATE_LABEL_PX, labelEvery } from '../../console/src/chart-model.ts';

test('an axis labels every point that fits, and thins its labels to what the width holds', () => {
  assert.equal(labelEvery(7, 660), 1);
  // 30 days on a 390 px phone (about 300 px of axis): 6 labels fit, so every 5th day is labelled
  assert.equal(labelEvery(30, 300), 5);
  assert.equal(labelEvery(30, 664), 2);
  assert.equal(labelEvery(90, 664), 6);
  // never 0, even where no label fits
  assert.equal(labelEvery(3, 10), 3);
  assert.equal(labelEvery(0, 300), 1);
  for (const [count, width] of [
    [30, 300],
    [90, 1000],
    [12, 250],
  ] as const) {
    assert.ok(Math.ceil(count / labelEvery(count, width)) * DATE_LABEL_PX <= width);
  }
});
