import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/auth-providers 200', () => {
  test('without credentials: email and password, and no third-party provider unless configured', async () => {
    const t = await makeTestApp();
    try {
      const res = await t.req('/control/v1/auth-providers', { headers: { authorization: '' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.deepEqual(await res.json(), { email_password: true, providers: [] });
    } finally {
      await t.close();
    }
  });

  test('lists the configured providers by the id sign-in/social takes, never their secrets', async () => {
    const client = { clientId: 'client-id-123', clientSecret: 'client-secret-456' };
    const t = await makeTestApp({ github: client, google: client });
    try {
      const res = await t.req('/control/v1/auth-providers', { headers: { authorization: '' } });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.deepEqual(JSON.parse(text), {
        email_password: true,
        providers: [
          { id: 'github', name: 'GitHub' },
          { id: 'google', name: 'Google' },
        ],
      });
      assert.ok(!text.includes('client-secret-456'));
    } finally {
      await t.close();
    }
  });
});
