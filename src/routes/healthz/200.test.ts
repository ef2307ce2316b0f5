import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';
import { createFakeEngine } from '../../engines/fake/fake-engine.ts';

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
      });
    } finally {
      await t.close();
    }
  });

  test('503 while the engine is not ready', async () => {
    const engine = createFakeEngine();
    const t = await makeTestApp({ engine });
    try {
      await engine.close();
      const res = await t.req('/healthz');
      assert.equal(res.status, 503);
      assert.equal((await res.json()).engine.ready, false);
    } finally {
      await t.close();
    }
  });
});
