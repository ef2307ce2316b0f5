import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/playground/systemone 413', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ maxBodyBytes: 32_768, controlMaxBodyBytes: 4096 });
  });
  after(() => t.close());

  test('a body over BRIER_MAX_BODY_BYTES (the inference limit, not the control one) is refused', async () => {
    const client = await signedInClient(t);
    const ask = (n: number) => ({ state: 's'.repeat(n), questions: { q: { type: 'noul' } } });
    assert.equal((await client.request('/control/v1/playground/systemone', { body: ask(20_000) })).status, 200);
    const res = await client.request('/control/v1/playground/systemone', { body: ask(40_000) });
    assert.equal(res.status, 413);
    assert.equal(
      (await res.json()).message,
      'request body is larger than 32768 bytes (the limit, BRIER_MAX_BODY_BYTES)',
    );
  });
});
