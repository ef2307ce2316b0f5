import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('control plane 413 (bodies over BRIER_CONTROL_MAX_BODY_BYTES)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ controlMaxBodyBytes: 16_384 });
  });
  after(() => t.close());

  async function tooLarge(res: Response) {
    assert.equal(res.status, 413);
    const json = await res.json();
    assert.equal(json.detail.error_type, 'payload_too_large');
    assert.equal(json.message, 'request body is larger than 16384 bytes (the limit, BRIER_CONTROL_MAX_BODY_BYTES)');
  }

  test('an unauthenticated sign-up with a huge name is refused before parsing, and nothing is stored', async () => {
    const email = 'huge@example.com';
    const body = { email, password: 'correct-horse-battery', name: 'n'.repeat(200_000) };
    await tooLarge(await t.req('/control/v1/auth/sign-up/email', { body, headers: { authorization: '' } }));
    const users = await t.db.kysely.selectFrom('user').select('id').where('email', '=', email).execute();
    assert.deepEqual(users, []);
  });

  test('sign-in with a huge password is refused by size', async () => {
    const body = { email: 'a@example.com', password: 'p'.repeat(50_000) };
    await tooLarge(await t.req('/control/v1/auth/sign-in/email', { body, headers: { authorization: '' } }));
  });

  test('with a session, key creation is refused by size before the name is parsed', async () => {
    const client = await signedInClient(t);
    await tooLarge(await client.request('/control/v1/keys', { body: { name: 'k'.repeat(20_000) } }));
    assert.equal((await client.request('/control/v1/keys', { body: { name: 'fits' } })).status, 201);
  });

  test('the playground takes inference-sized bodies, past the control-plane limit', async () => {
    const client = await signedInClient(t);
    const res = await client.request('/control/v1/playground/systemone', {
      body: { state: 's'.repeat(20_000), questions: { q: { type: 'noul' } } },
    });
    assert.equal(res.status, 200);
  });
});
