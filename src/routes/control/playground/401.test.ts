import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/playground/systemone 401', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('without a session (an API key is none) it is 401 and nothing is metered', async () => {
    const body = { state: 's', questions: { q: { type: 'noul' } } };
    for (const authorization of ['', `Bearer ${t.key}`]) {
      const res = await t.req('/control/v1/playground/systemone', { body, headers: { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.match((await res.json()).message, /sign in/);
    }
    await t.usage.flush();
    assert.deepEqual(await t.db.kysely.selectFrom('usage_event').select('id').execute(), []);
  });
});
