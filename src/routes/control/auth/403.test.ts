import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppClient } from '../../../../test/fixtures/app-client.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/auth 403', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('sign-in before the email is verified is email_not_verified, naming what to do', async () => {
    const client = createAppClient(t.app, '192.0.2.30');
    const body = { email: 'early@example.com', password: 'correct-horse-battery' };
    assert.equal((await client.request('/control/v1/auth/sign-up/email', { body })).status, 200);
    const res = await client.request('/control/v1/auth/sign-in/email', { body });
    assert.equal(res.status, 403);
    const json = await res.json();
    assert.equal(json.detail.error_type, 'email_not_verified');
    assert.match(json.message, /verification email/);
    assert.equal(res.headers.getSetCookie().length, 0);
  });

  test('a sign-up posted from another origin is refused as cross-site', async () => {
    const client = createAppClient(t.app, '192.0.2.31');
    const res = await client.request('/control/v1/auth/sign-up/email', {
      body: { email: 'csrf@example.com', password: 'correct-horse-battery' },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).detail.error_type, 'csrf_rejected');
    assert.deepEqual(
      await t.db.kysely.selectFrom('user').select('id').where('email', '=', 'csrf@example.com').execute(),
      [],
    );
  });
});
