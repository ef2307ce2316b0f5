import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, ROUTING, row, tickets, upload, waitFor } from '../../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../../test/harness.ts';

describe('POST /control/v1/training-jobs/{id}/cancel 200', () => {
  let t: TestApp;
  let fitting: () => void = () => {};
  before(async () => {
    t = await makeTestApp({
      jobPollMs: 10,
      jobLeaseMs: 300,
      // A fitter that holds until the job is stopped, and says when it started.
      fitter: (_request, progress, signal) => {
        progress(0.5, 'fitting');
        fitting();
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
      },
    });
    await upload(t, jsonl(tickets(24).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
  });
  after(() => t.close());

  test('a queued job is cancelled at once and never runs', async () => {
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    const res = await t.req(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
    assert.equal(res.status, 200);
    const cancelled = await res.json();
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.message, 'cancelled by the account');
    assert.equal(cancelled.queue_position, null);
    assert.equal(await t.runner.runOnce(), false, 'nothing left to run');
  });

  test('a running job stops within its lease renewal and stores no adapter', async () => {
    const started = new Promise<void>((resolve) => {
      fitting = resolve;
    });
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    t.runner.start();
    await started;
    const res = await t.req(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).status, 'cancelled');
    await waitFor(async () => t.runner.current().length === 0, 5000, 'the runner to stop the job');
    const after = await (await t.req(`/control/v1/training-jobs/${job.id}`)).json();
    assert.equal(after.status, 'cancelled');
    assert.equal(after.adapter_id, null);
    assert.deepEqual((await (await t.req('/control/v1/adapters')).json()).data, []);
  });
});
