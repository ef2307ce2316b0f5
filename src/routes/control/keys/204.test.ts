import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('DELETE /control/v1/keys/{id} 204', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('revokes the key: no body, it stops working at once and is no longer listed', async () => {
    const client = await signedInClient(t);
    const key = await (await client.request('/control/v1/keys', { body: { name: 'short-lived' } })).json();
    const res = await client.request(`/control/v1/keys/${key.id}`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    const models = await t.req('/v1/models', { headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(models.status, 401);
    assert.deepEqual(await (await client.request('/control/v1/keys')).json(), { data: [] });
  });
});
