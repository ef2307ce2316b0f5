import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/model 401', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('without a session (an API key is none) it is 401', async () => {
    for (const authorization of ['', `Bearer ${t.key}`]) {
      const res = await t.req('/control/v1/model', { headers: { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.equal((await res.json()).detail.error_type, 'authentication_error');
    }
  });
});
