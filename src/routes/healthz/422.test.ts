import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../test/harness.ts';

describe('GET /healthz 422', () => {
  test('an unknown probe is named as the query parameter probe, with the values it takes and what was sent', async () => {
    const t = await makeTestApp();
    try {
      const res = await t.req('/healthz?probe=ready', { headers: { authorization: '' } });
      assert.equal(res.status, 422);
      const body = await res.json();
      assert.deepEqual(body.detail[0].loc, ['query', 'probe']);
      assert.match(body.message, /^query parameter probe: .*"readiness"\|"liveness", got "ready"$/);
    } finally {
      await t.close();
    }
  });
});
