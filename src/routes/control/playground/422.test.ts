import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/playground/systemone 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('the request is validated as /v1/systemone validates it', async () => {
    const client = await signedInClient(t);
    for (const body of [{ state: 's' }, { questions: { q: { type: 'noul' } } }, { state: 's', questions: { q: {} } }]) {
      const res = await client.request('/control/v1/playground/systemone', { body });
      const viaKey = await t.req('/v1/systemone', { body });
      assert.equal(res.status, 422, JSON.stringify(body));
      const { request_id: _a, ...detail } = await res.json();
      const { request_id: _b, ...expected } = await viaKey.json();
      assert.deepEqual(detail, expected);
    }
  });
});
