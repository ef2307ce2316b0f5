import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/keys 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a missing, blank or overlong name is a validation error naming the field; nothing is created', async () => {
    const client = await signedInClient(t);
    for (const body of [{}, { name: '   ' }, { name: 'n'.repeat(65) }, { name: 7 }]) {
      const res = await client.request('/control/v1/keys', { body });
      assert.equal(res.status, 422, JSON.stringify(body));
      const json = await res.json();
      assert.deepEqual(json.detail[0].loc, ['body', 'name']);
      assert.match(json.message, /^name: /);
    }
    assert.deepEqual(await (await client.request('/control/v1/keys')).json(), { data: [] });
  });
});
