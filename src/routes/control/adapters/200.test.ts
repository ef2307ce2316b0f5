import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ROUTING, storedAdapter } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import { createLogger } from '../../../observability/logger.ts';

describe('/control/v1/adapters 200: a fallback to a teacher this server no longer has', () => {
  let t: TestApp;
  let logs: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(...String(chunk).trim().split('\n'));
        done();
      },
    });
    // No teacher configured: the adapter's fallback names one that was removed from BRIER_TEACHERS.
    t = await makeTestApp({ logger: createLogger('info', sink) });
  });
  after(() => t.close());

  test('is said at start, in the adapter record and at its first unsure request; the adapter answers', async () => {
    const id = await storedAdapter(t, t.account.id);
    assert.equal(await t.teach.adapters.setFallback(t.account.id, id, { teacher: 'gone', threshold: 1 }), true);
    const missing = () => logs.filter((l) => l.includes('no such teacher on this server'));

    await t.checkFallbacks();
    assert.equal(missing().length, 1, 'at start');
    assert.match(missing()[0] ?? '', /"teacher":"gone","adapters":1/);

    const record = await (await t.req(`/control/v1/adapters/${encodeURIComponent(id)}`)).json();
    assert.deepEqual(record.fallback, { teacher: 'gone', threshold: 1, available: false });

    logs = [];
    for (let i = 0; i < 2; i++) {
      const res = await t.req('/v1/systemone', { body: { model: id, state: 'x', questions: { team: ROUTING } } });
      assert.equal(res.status, 200);
      // Under the threshold of 1, yet answered by the adapter: there is no teacher to ask.
      assert.equal((await res.json()).answers.team.x_answered_by, id);
    }
    assert.equal(missing().length, 1, 'once per adapter, at its first unsure request');
    assert.ok(missing()[0]?.includes(`"adapter":"${id}"`), missing()[0]);
  });
});
