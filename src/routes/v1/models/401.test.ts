import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /v1/models', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('403 without a key, 401 with a bad one', async () => {
    assert.equal((await t.req('/v1/models', { headers: { authorization: '' } })).status, 403);
    assert.equal((await t.req('/v1/models', { headers: { authorization: 'Bearer brier_sk_x' } })).status, 401);
  });

  test('a revoked key is 401 at once', async () => {
    await t.keys.revoke(t.account.id, t.keyId);
    const res = await t.req('/v1/models');
    assert.equal(res.status, 401);
    assert.equal((await res.json()).message, 'invalid or revoked API key');
  });
});
