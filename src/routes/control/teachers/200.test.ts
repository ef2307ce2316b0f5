import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/teachers 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({
      teachers: [
        {
          id: 'jev',
          kind: 'systemone',
          target: 'http://10.1.2.3:8080',
          upstreamModel: undefined,
          apiKey: 'sk-never-shown-0123456789',
          timeoutMs: 1000,
          concurrency: 3,
          retries: 1,
        },
      ],
    });
  });
  after(() => t.close());

  test('lists ids, kinds, concurrency and time per call (null until measured), never the address or key', async () => {
    for (const res of [
      await t.req('/control/v1/teachers'),
      await (await signedInClient(t)).request('/control/v1/teachers'),
    ]) {
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.deepEqual(JSON.parse(text), {
        data: [{ id: 'jev', kind: 'systemone', concurrency: 3, ms_per_call: null, calls: 0, failed_attempts: 0 }],
      });
      assert.ok(!text.includes('10.1.2.3') && !text.includes('sk-never-shown'));
    }
  });

  test('an empty list where none is configured', async () => {
    const bare = await makeTestApp();
    try {
      assert.deepEqual(await (await bare.req('/control/v1/teachers')).json(), { data: [] });
    } finally {
      await bare.close();
    }
  });
});
