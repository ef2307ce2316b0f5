import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';

describe('GET /metrics with BRIER_METRICS=off', () => {
  test('off: no route', async () => {
    const t = await makeTestApp({ metricsEnabled: false });
    try {
      assert.equal((await t.req('/metrics', { headers: { authorization: '' } })).status, 404);
    } finally {
      await t.close();
    }
  });
});
