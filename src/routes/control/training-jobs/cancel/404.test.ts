import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, ROUTING, row, tickets, upload } from '../../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../../test/harness.ts';

describe('POST /control/v1/training-jobs/{id}/cancel 404', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("another account's job, or no such job: 404, and the job is left as it was", async () => {
    await upload(t, jsonl(tickets(20).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    const other = await signedInClient(t);
    const res = await other.request(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
    assert.equal(res.status, 404);
    assert.match((await res.json()).message, /no training job job_\w+ in this account/);
    assert.equal((await (await t.req(`/control/v1/training-jobs/${job.id}`)).json()).status, 'queued');
    assert.equal((await t.req('/control/v1/training-jobs/job_nope/cancel', { method: 'POST' })).status, 404);
  });
});
