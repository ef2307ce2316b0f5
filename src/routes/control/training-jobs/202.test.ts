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

  test('queues one job per account at a time; only its account sees it', async () => {
    await upload(t, jsonl(tickets(20).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
    const res = await t.req('/control/v1/training-jobs', { body: {} });
    assert.equal(res.status, 202);
    const job = await res.json();
    assert.equal(job.status, 'queued');
    assert.equal(job.progress, 0);
    assert.equal(job.templates.length, 1);
    const again = await t.req('/control/v1/training-jobs', { body: {} });
    assert.equal(again.status, 409);
    assert.match((await again.json()).message, /still queued or running; one at a time/);
    assert.equal((await t.req(`/control/v1/training-jobs/${job.id}`)).status, 200);
    assert.equal((await (await t.req('/control/v1/training-jobs')).json()).data.length, 1);
    const other = await signedInClient(t);
    assert.equal((await other.request(`/control/v1/training-jobs/${job.id}`)).status, 404);
  });
});
