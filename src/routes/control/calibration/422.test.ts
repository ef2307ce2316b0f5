import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/calibration 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a days that is not an integer from 1 to 366 is named as the query parameter, never "received NaN"', async () => {
    for (const days of ['x', '0', '2.5', '400']) {
      const res = await t.req(`/control/v1/calibration?days=${days}`);
      assert.equal(res.status, 422, days);
      const body = await res.json();
      assert.deepEqual(body.detail[0].loc, ['query', 'days']);
      assert.equal(body.message, `query parameter days: expected an integer from 1 to 366, got "${days}"`);
    }
  });
});
