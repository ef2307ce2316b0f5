import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('DELETE /control/v1/keys/{id} 404', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("an unknown key, another account's key or an already revoked one is 404, and nothing changes", async () => {
    const client = await signedInClient(t);
    const other = await signedInClient(t);
    const theirs = await (await other.request('/control/v1/keys', { body: { name: 'theirs' } })).json();
    const mine = await (await client.request('/control/v1/keys', { body: { name: 'mine' } })).json();
    assert.equal((await client.request(`/control/v1/keys/${mine.id}`, { method: 'DELETE' })).status, 204);
    for (const id of ['key_nope', theirs.id, mine.id]) {
      const res = await client.request(`/control/v1/keys/${id}`, { method: 'DELETE' });
      assert.equal(res.status, 404, id);
      const body = await res.json();
      assert.equal(body.detail.error_type, 'not_found');
      assert.equal(body.message, `no active API key ${id} in this account`);
    }
    const stillWorks = await t.req('/v1/models', { headers: { authorization: `Bearer ${theirs.key}` } });
    assert.equal(stillWorks.status, 200);
  });
});
