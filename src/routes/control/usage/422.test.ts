import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/usage 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a window outside 1 to 366 days, or not a whole number, names days', async () => {
    for (const days of ['0', '367', '1.5', 'week']) {
      const res = await t.req(`/control/v1/usage?days=${days}`);
      assert.equal(res.status, 422, days);
      const body = await res.json();
      assert.equal(body.detail[0].loc.at(-1), 'days');
      assert.match(body.message, /^days: /);
    }
  });
});
