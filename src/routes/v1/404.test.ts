import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../test/harness.ts';

describe('/v1: every URL needs an API key, known or not', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('an unknown /v1 URL, or a method no route takes, is 404 not_found for a caller with a key', async () => {
    for (const [url, method] of [
      ['/v1/completions', 'GET'],
      ['/v1', 'GET'],
      ['/v1/models', 'POST'],
      ['/v1/systemone', 'GET'],
    ] as const) {
      const res = await t.req(url, { method });
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal((await res.json()).detail.error_type, 'not_found');
    }
  });

  test('without a key it is 403, with a bad key 401, before it is a 404', async () => {
    assert.equal((await t.req('/v1/completions', { headers: { authorization: '' } })).status, 403);
    assert.equal((await t.req('/v1/completions', { headers: { authorization: 'Bearer brier_sk_x' } })).status, 401);
  });

  test('its body is bounded like any /v1 body before it is a 404', async () => {
    const res = await t.req('/v1/completions', { body: '{"prompt": ' });
    assert.equal(res.status, 422);
    assert.equal((await res.json()).detail[0].type, 'json_invalid');
  });
});
