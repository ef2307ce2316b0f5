import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/account 401', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('without a session (an API key is none) GET and DELETE are 401 and delete nothing', async () => {
    for (const method of ['GET', 'DELETE']) {
      for (const authorization of ['', `Bearer ${t.key}`]) {
        const res = await t.req('/control/v1/account', { method, headers: { authorization } });
        assert.equal(res.status, 401, `${method} ${authorization}`);
        assert.equal((await res.json()).detail.error_type, 'authentication_error');
      }
    }
    assert.equal((await t.req('/v1/models')).status, 200, "the key's account still exists");
  });

  test('a session whose account was deleted meanwhile is 401', async () => {
    const client = await signedInClient(t);
    const cookies = new Map(client.jar);
    assert.equal((await client.request('/control/v1/account', { method: 'DELETE' })).status, 200);
    for (const [name, value] of cookies) client.jar.set(name, value);
    const res = await client.request('/control/v1/account');
    assert.equal(res.status, 401);
  });
});
