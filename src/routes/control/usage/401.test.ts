import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/usage 401', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  async function refused(res: Response, message: string) {
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.detail.error_type, 'authentication_error');
    assert.equal(body.message, message);
  }

  test('no key and no session', async () => {
    await refused(
      await t.req('/control/v1/usage', { headers: { authorization: '' } }),
      'send Authorization: Bearer <API key>, or sign in for a session cookie',
    );
  });

  test('an unknown, revoked or malformed key, even beside a valid session: the header is what counts', async () => {
    const client = await signedInClient(t);
    const key = await (await client.request('/control/v1/keys', { body: { name: 'gone' } })).json();
    await client.request(`/control/v1/keys/${key.id}`, { method: 'DELETE' });
    for (const authorization of ['Bearer brier_sk_nope', `Bearer ${key.key}`]) {
      await refused(
        await client.request('/control/v1/usage', { headers: { authorization } }),
        'invalid or revoked API key',
      );
    }
    await refused(
      await client.request('/control/v1/usage', { headers: { authorization: 'Token abc' } }),
      'malformed Authorization header; expected Bearer <API key>',
    );
  });
});
