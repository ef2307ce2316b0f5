import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/keys 201', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('creates a key, shown once in full, that works on /v1 at once', async () => {
    const client = await signedInClient(t);
    const res = await client.request('/control/v1/keys', { body: { name: '  production  ' } });
    assert.equal(res.status, 201);
    const key = await res.json();
    assert.deepEqual(Object.keys(key).sort(), ['created_at', 'id', 'key', 'last_used_at', 'name', 'prefix']);
    assert.equal(key.name, 'production', 'the name is trimmed');
    assert.match(key.key, /^brier_sk_/);
    assert.ok(key.key.startsWith(key.prefix));
    assert.equal(key.last_used_at, null);
    const models = await t.req('/v1/models', { headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(models.status, 200);
  });
});
