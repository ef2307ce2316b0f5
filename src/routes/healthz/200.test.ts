import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';

describe('GET /healthz', () => {
  test('200 without credentials when the engine and database are ready', async () => {
    const t = await makeTestApp();
    try {
      const res = await t.req('/healthz', { headers: { authorization: '' } });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(body, {
        status: 'ok',
        engine: { ready: true, model: 'brier-fake-3.0.0' },
        database: { ready: true, dialect: 'sqlite' },
        rate_limits: { store: 'memory', shared: false },
      });
    } finally {
      await t.close();
    }
  });
});
