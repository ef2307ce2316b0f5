import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultOutDir, parseSeedList, train } from './train.ts';

describe('train options', () => {
  it('reads --seeds as one integer or integers separated by commas', () => {
    assert.deepEqual(parseSeedList('4'), [4]);
    assert.deepEqual(parseSeedList('4,5,6'), [4, 5, 6]);
  });

  it('refuses --seeds that are not integers, or missing', () => {
    for (const bad of ['x', '4,5.5', '4,,x', String(undefined)])
      assert.throws(() => parseSeedList(bad), /--seeds needs integers separated by commas/);
  });

  it('writes the shipped artifact by default and other seeds into a cache folder, never over it', () => {
    assert.ok(defaultOutDir().endsWith(join('models', 'brier-lite')));
    assert.ok(defaultOutDir([4, 5, 6]).endsWith(join('.cache', 'brier-lite', 'seeds-4-5-6')));
  });

  it('refuses an empty or non-integer seed list before any work', async () => {
    await assert.rejects(train({ seeds: [], log: () => {} }), /--seeds needs integers/);
    await assert.rejects(train({ seeds: [1.5], log: () => {} }), /--seeds needs integers/);
  });
});
