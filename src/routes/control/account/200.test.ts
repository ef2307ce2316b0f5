import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/account 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('GET is the signed-in account: id, email, name, verified, created_at', async () => {
    const client = await signedInClient(t, 'ada.lovelace@example.com');
    const res = await client.request('/control/v1/account');
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(Object.keys(body), ['id', 'email', 'name', 'email_verified', 'created_at']);
    assert.equal(body.id, client.userId);
    assert.equal(body.email, 'ada.lovelace@example.com');
    assert.equal(body.name, 'ada.lovelace', 'the default display name');
    assert.equal(body.email_verified, true);
    assert.ok(Math.abs(Date.parse(body.created_at) - Date.now()) < 60_000, body.created_at);
  });

  test('DELETE revokes every key, clears the session cookies and ends the session', async () => {
    const client = await signedInClient(t);
    const keys = [];
    for (const name of ['a', 'b'])
      keys.push(await (await client.request('/control/v1/keys', { body: { name } })).json());
    const res = await client.request('/control/v1/account', { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { deleted: true, revoked_keys: 2 });
    const cleared = res.headers.getSetCookie().filter((c) => /Max-Age=0/.test(c));
    assert.deepEqual(cleared.map((c) => c.split('=')[0]).sort(), [
      'brier.dont_remember',
      'brier.session_data',
      'brier.session_token',
    ]);
    for (const key of keys) {
      assert.equal((await t.req('/v1/models', { headers: { authorization: `Bearer ${key.key}` } })).status, 401);
    }
    const user = await t.db.kysely.selectFrom('user').select('id').where('id', '=', client.userId).execute();
    assert.deepEqual(user, []);
  });
});
