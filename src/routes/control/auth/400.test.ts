import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import { AUTH_FIELD_LIMITS } from './protocol.ts';

describe('/control/v1/auth 400 (free-text fields past their limits)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const post = (path: string, body: unknown) =>
    t.req(`/control/v1/auth${path}`, { body, headers: { authorization: '' } });

  async function refused(res: Response, message: RegExp) {
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.equal(json.detail.error_type, 'invalid_request');
    assert.match(json.message, message);
    assert.match(json.request_id, /^req_/);
  }

  const email = 'ada@example.com';
  const password = 'correct-horse-battery';

  test('sign-up refuses a name, email or password past its limit, naming the field and the limit, and stores nothing', async () => {
    await refused(
      await post('/sign-up/email', { email, password, name: 'n'.repeat(101) }),
      /^name: must be at most 100 characters \(the limit\); it has 101$/,
    );
    await refused(
      await post('/sign-up/email', { email: `${'e'.repeat(250)}@x.co`, password }),
      /^email: must be at most 254 characters \(the limit\); it has 255$/,
    );
    await refused(
      await post('/sign-up/email', { email, password: 'p1'.repeat(65) }),
      /^password: must be at most 128 characters \(the limit\); it has 130$/,
    );
    const users = await t.db.kysely.selectFrom('user').select('email').where('email', 'like', '%x.co').execute();
    assert.deepEqual(users, []);
    assert.equal((await t.db.kysely.selectFrom('user').select('id').where('email', '=', email).execute()).length, 0);
  });

  test('sign-in, reset and verification-email requests refuse overlong fields the same way', async () => {
    await refused(await post('/sign-in/email', { email, password: 'p'.repeat(129) }), /^password: must be at most 128/);
    await refused(await post('/request-password-reset', { email: 'e'.repeat(300) }), /^email: must be at most 254/);
    await refused(
      await post('/send-verification-email', { email, callbackURL: `/${'c'.repeat(2048)}` }),
      /^callbackURL: must be at most 2048/,
    );
    await refused(
      await post('/reset-password', { token: 't'.repeat(513), newPassword: password }),
      /^token: must be at most 512/,
    );
  });

  test('a field of the wrong type is refused by name', async () => {
    await refused(await post('/sign-in/email', { email: ['a'], password }), /^email: must be a string$/);
  });

  test('every limit is at least what a real user needs', () => {
    assert.ok((AUTH_FIELD_LIMITS.email ?? 0) >= 254 && (AUTH_FIELD_LIMITS.name ?? 0) >= 64);
  });
});

describe('/control/v1/auth 400 (a verification link works once)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('opening the link again is refused, and the marker it leaves holds no token', async () => {
    const email = 'once@example.com';
    const signUp = await t.req('/control/v1/auth/sign-up/email', {
      body: { email, password: 'correct-horse-battery' },
      headers: { authorization: '' },
    });
    assert.equal(signUp.status, 200);
    const link = t.outbox.find((m) => m.to === email)?.link ?? '';
    assert.ok([200, 302].includes((await t.req(link, { headers: { authorization: '' } })).status));
    const again = await t.req(link, { headers: { authorization: '' } });
    assert.equal(again.status, 400);
    assert.equal(
      (await again.json()).message,
      'this verification link was already used; sign in, or ask for a new link',
    );
    const token = new URL(link).searchParams.get('token') ?? '';
    const rows = await t.db.kysely.selectFrom('verification').select(['identifier', 'value']).execute();
    assert.ok(rows.some((r) => r.identifier.startsWith('brier-used-verify:')));
    assert.ok(!JSON.stringify(rows).includes(token));
  });
});
