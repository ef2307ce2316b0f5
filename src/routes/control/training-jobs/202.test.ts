import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, ROUTING, row, tickets, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/training-jobs 202, 200, 404, 409', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('queues jobs behind each other with their queue position; at most 5 per account; only its account sees them', async () => {
    await upload(t, jsonl(tickets(20).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
    const res = await t.req('/control/v1/training-jobs', { body: {} });
    assert.equal(res.status, 202);
    const job = await res.json();
    assert.equal(job.status, 'queued');
    assert.equal(job.progress, 0);
    assert.equal(job.templates.length, 1);
    assert.equal(job.examples, 20);
    assert.equal(job.queue_position, 1);
    for (let i = 2; i <= 5; i++) {
      const again = await t.req('/control/v1/training-jobs', { body: {} });
      assert.equal(again.status, 202);
      assert.equal((await again.json()).queue_position, i, "an account's jobs run oldest first");
    }
    const sixth = await t.req('/control/v1/training-jobs', { body: {} });
    assert.equal(sixth.status, 409);
    assert.match((await sixth.json()).message, /5 training jobs queued or running: at most 5 \(the limit\)/);
    assert.equal((await t.req(`/control/v1/training-jobs/${job.id}`)).status, 200);
    assert.equal((await (await t.req('/control/v1/training-jobs')).json()).data.length, 5);
    const other = await signedInClient(t);
    assert.equal((await other.request(`/control/v1/training-jobs/${job.id}`)).status, 404);
  });

  test('202 without any body, as curl -X POST sends it (no content-type, no bytes)', async () => {
    const fresh = await makeTestApp();
    try {
      await upload(fresh, jsonl(tickets(20).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
      // An empty body stream without a content-type: what curl -X POST sends.
      const res = await fresh.app.request('/control/v1/training-jobs', {
        method: 'POST',
        headers: { authorization: `Bearer ${fresh.key}` },
        body: new Uint8Array(0),
      });
      assert.equal(res.status, 202, await res.clone().text());
    } finally {
      await fresh.close();
    }
  });
});
