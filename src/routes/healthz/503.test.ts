import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';
import { createFakeEngine } from '../../engines/fake/fake-engine.ts';

describe('GET /healthz', () => {
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

  test('503 while the database does not answer', async () => {
    const t = await makeTestApp();
    try {
      const ping = t.db.ping;
      t.db.ping = async () => false;
      const res = await t.req('/healthz', { headers: { authorization: '' } });
      t.db.ping = ping;
      assert.equal(res.status, 503);
      assert.deepEqual((await res.json()).database, { ready: false, dialect: 'sqlite' });
    } finally {
      await t.close();
    }
  });
});
