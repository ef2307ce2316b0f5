import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/keys 409', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ maxKeysPerAccount: 3 });
  });
  after(() => t.close());

  test('a fourth active key is refused with key_limit_reached; revoking one makes room', async () => {
    const client = await signedInClient(t);
    const created = [];
    for (const name of ['a', 'b', 'c']) {
      const res = await client.request('/control/v1/keys', { body: { name } });
      assert.equal(res.status, 201);
      created.push(await res.json());
    }
    const refused = await client.request('/control/v1/keys', { body: { name: 'd' } });
    assert.equal(refused.status, 409);
    assert.equal((await refused.json()).detail.error_type, 'key_limit_reached');
    await client.request(`/control/v1/keys/${created[0].id}`, { method: 'DELETE' });
    assert.equal((await client.request('/control/v1/keys', { body: { name: 'd' } })).status, 201);
  });
});
