import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeTestApp } from '../../../../test/harness.ts';
import { createFakeEngine } from '../../../engines/fake/fake-engine.ts';

const body = { state: 's', questions: { q: { type: 'noul' } } };

describe('POST /v1/systemone 503', () => {
  test('a full queue answers 503 overloaded with retry-after, and admitted requests still finish', async () => {
    const t = await makeTestApp({ engine: createFakeEngine({ delayMs: 150 }), queueLimit: 2 });
    try {
      const responses = await Promise.all(Array.from({ length: 5 }, () => t.req('/v1/systemone', { body })));
      const statuses = responses.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 200, 503, 503, 503]);
      const busy = responses.find((r) => r.status === 503);
      assert.ok(Number(busy?.headers.get('retry-after')) >= 1);
      const json = await busy?.json();
      assert.equal(json.detail.error_type, 'overloaded');
      assert.match(json.message, /2 requests are already waiting or running \(the queue limit\)/);
    } finally {
      await t.close();
    }
  });

  test('a request that would wait past its deadline is refused at once, below the queue limit', async () => {
    const t = await makeTestApp({ engine: createFakeEngine({ delayMs: 400 }), requestTimeoutMs: 1000 });
    try {
      assert.equal((await t.req('/v1/systemone', { body })).status, 200); // measures ~400 ms a request
      const responses = await Promise.all(Array.from({ length: 5 }, () => t.req('/v1/systemone', { body })));
      // Two fit in the deadline (~400 and ~800 ms) and are answered; the rest would finish past it.
      assert.deepEqual(responses.map((r) => r.status).sort(), [200, 200, 503, 503, 503]);
      const busy = responses.find((r) => r.status === 503);
      assert.ok(Number(busy?.headers.get('retry-after')) >= 1);
      const json = await busy?.json();
      assert.equal(json.detail.error_type, 'overloaded');
      assert.match(json.message, /past the 1000 ms request deadline/);
    } finally {
      await t.close();
    }
  });

  test('a request past its deadline answers 503 timeout with retry-after', async () => {
    const t = await makeTestApp({ engine: createFakeEngine({ delayMs: 2000 }), requestTimeoutMs: 100 });
    try {
      const res = await t.req('/v1/systemone', { body });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.match((await res.json()).message, /100 ms request deadline/);
    } finally {
      await t.close();
    }
  });

  test('an engine still loading answers 503 not_ready', async () => {
    const engine = createFakeEngine();
    const t = await makeTestApp({ engine });
    try {
      await engine.close();
      const res = await t.req('/v1/systemone', { body });
      assert.equal(res.status, 503);
      assert.equal((await res.json()).detail.error_type, 'not_ready');
      assert.ok(res.headers.get('retry-after'));
    } finally {
      await t.close();
    }
  });
});
