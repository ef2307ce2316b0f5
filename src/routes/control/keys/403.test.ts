import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/keys 403 (CSRF)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('the session cookie from another origin, or with no origin at all, creates nothing', async () => {
    const client = await signedInClient(t);
    for (const origin of ['https://evil.example', '']) {
      const res = await client.request('/control/v1/keys', { body: { name: 'x' }, headers: { origin } });
      assert.equal(res.status, 403, origin || 'no origin');
      assert.equal((await res.json()).detail.error_type, 'csrf_rejected');
    }
    assert.deepEqual(await (await client.request('/control/v1/keys')).json(), { data: [] });
  });
});
