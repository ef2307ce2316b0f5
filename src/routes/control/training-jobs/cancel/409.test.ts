import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, ROUTING, row, tickets, upload } from '../../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../../test/harness.ts';

describe('POST /control/v1/training-jobs/{id}/cancel 409', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('a job that has ended cannot be cancelled, and says how it ended', async () => {
    await upload(t, jsonl(tickets(30).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    assert.equal(await t.runner.runOnce(), true);
    const res = await t.req(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
    assert.equal(res.status, 409);
    assert.match((await res.json()).message, /has already succeeded; only a queued or running job can be cancelled/);
  });
});
