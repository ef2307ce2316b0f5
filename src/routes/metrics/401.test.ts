import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';

describe('GET /metrics with BRIER_METRICS_TOKEN', () => {
  test('a token makes it need that bearer', async () => {
    const t = await makeTestApp({ metricsToken: 'metrics-token-0123456789' });
    try {
      const none = await t.req('/metrics', { headers: { authorization: '' } });
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      assert.equal((await t.req('/metrics')).status, 401, 'an API key is not the metrics token');
      const ok = await t.req('/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /brier_http_requests_total/);
    } finally {
      await t.close();
    }
  });
});
