import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppClient } from '../../../../test/fixtures/app-client.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/auth 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const password = 'correct-horse-battery';
  const sessionCookie = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('brier.session_token='));

  test('sign-up answers the new user with a default name, sets no session, and emails a verification link', async () => {
    const client = createAppClient(t.app, '192.0.2.10');
    const res = await client.request('/control/v1/auth/sign-up/email', {
      body: { email: 'grace@example.com', password },
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.user.email, 'grace@example.com');
    assert.equal(body.user.name, 'grace');
    assert.equal(body.user.emailVerified, false);
    assert.equal(body.token, undefined);
    assert.equal(sessionCookie(res), undefined);
    assert.match(t.outbox.find((m) => m.to === 'grace@example.com')?.link ?? '', /\/verify-email\?token=/);
  });

  test('the verification link and sign-in set an HttpOnly session cookie and put no token in a body', async () => {
    const client = createAppClient(t.app, '192.0.2.11');
    await client.request('/control/v1/auth/sign-up/email', { body: { email: 'linus@example.com', password } });
    const verified = await client.request(t.outbox.find((m) => m.to === 'linus@example.com')?.link ?? '');
    assert.ok([200, 302].includes(verified.status), String(verified.status));
    assert.match(sessionCookie(verified) ?? '', /HttpOnly/i);

    const signIn = await client.request('/control/v1/auth/sign-in/email', {
      body: { email: 'linus@example.com', password },
    });
    assert.equal(signIn.status, 200);
    assert.match(sessionCookie(signIn) ?? '', /HttpOnly.*SameSite=Lax|SameSite=Lax.*HttpOnly/i);
    const body = await signIn.json();
    assert.equal(body.token, undefined);
    assert.equal(body.user.email, 'linus@example.com');

    const session = await (await client.request('/control/v1/auth/get-session')).json();
    assert.equal(session.user.email, 'linus@example.com');
    assert.equal(session.session.token, undefined);

    const out = await client.request('/control/v1/auth/sign-out', { body: {} });
    assert.equal(out.status, 200);
    assert.equal(await (await client.request('/control/v1/auth/get-session')).json(), null);
  });
});
