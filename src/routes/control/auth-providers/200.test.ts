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
      assert.deepEqual(await res.json(), { email_password: true, providers: [], mail_delivery: 'smtp' });
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
        mail_delivery: 'smtp',
      });
      assert.ok(!text.includes('client-secret-456'));
    } finally {
      await t.close();
    }
  });

  test('says where verification links go: by email with SMTP_URL, to the server log without it', async () => {
    for (const [options, expected] of [
      [{ mailer: undefined, smtpUrl: undefined }, 'log'],
      [{ mailer: undefined, smtpUrl: 'smtp://127.0.0.1:2525' }, 'smtp'],
    ] as const) {
      const t = await makeTestApp(options);
      try {
        const res = await t.req('/control/v1/auth-providers', { headers: { authorization: '' } });
        assert.equal((await res.json()).mail_delivery, expected, JSON.stringify(options));
      } finally {
        await t.close();
      }
    }
  });
});
