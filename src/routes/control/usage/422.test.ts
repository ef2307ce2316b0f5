import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/usage 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a window outside 1 to 366 days, or not a whole number, names the query parameter days and the range', async () => {
    for (const days of ['0', '367', '1.5', 'week']) {
      const res = await t.req(`/control/v1/usage?days=${days}`);
      assert.equal(res.status, 422, days);
      const body = await res.json();
      assert.deepEqual(body.detail[0].loc, ['query', 'days'], days);
      assert.equal(body.detail[0].input, days);
      assert.equal(body.message, `query parameter days: expected an integer from 1 to 366, got "${days}"`);
      assert.doesNotMatch(body.message, /NaN|received/);
    }
  });
});
