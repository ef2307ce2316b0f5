import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppClient } from '../../../../test/fixtures/app-client.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/auth/sign-in/email 401', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a wrong password and an unknown account get the same answer, and no session', async () => {
    const known = await signedInClient(t);
    const client = createAppClient(t.app, '192.0.2.20');
    const answers = [];
    for (const email of [known.email, 'nobody@example.com']) {
      const res = await client.request('/control/v1/auth/sign-in/email', {
        body: { email, password: 'wrong-password-0' },
      });
      assert.equal(res.status, 401, email);
      assert.equal(res.headers.getSetCookie().length, 0);
      const { request_id: _, ...body } = await res.json();
      answers.push(body);
    }
    assert.deepEqual(answers[0], {
      detail: { error_type: 'authentication_error', message: 'invalid email or password' },
      message: 'invalid email or password',
    });
    assert.deepEqual(answers[1], answers[0]);
  });
});
