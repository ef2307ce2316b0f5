/**
 * Jobs wait for what they need (issue 33): a job is not claimed while the model loads; one whose
 * engine becomes unavailable mid-read (the model reloading, every worker unreachable) goes back to the
 * queue with a backoff and is never failed for it; `attempts` stays 0. The fake engine, with its
 * readiness and availability switched by the test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DecisionEngine } from '../../src/engines/engine.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import { fail } from '../../src/lib/errors.ts';
import { jsonl, ROUTING, row, tickets, upload, waitFor } from '../fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../harness.ts';

describe('training jobs wait for the engine', () => {
  let t: TestApp;
  let ready = false;
  let refusing = false;
  let answered = 0;
  before(async () => {
    const inner = createFakeEngine();
    await inner.load();
    const engine: DecisionEngine = {
      ...inner,
      info: inner.info,
      limits: inner.limits,
      ready: () => ready,
      async answer(request, signal) {
        if (refusing) throw fail('NOT_READY', 'no inference worker is reachable; retry shortly', { retryAfter: 1 });
        answered++;
        return inner.answer(request, signal);
      },
    };
    t = await makeTestApp({ engine, jobPollMs: 10, jobLeaseMs: 1000, jobEngineWaitMs: 100 });
    await upload(t, jsonl(tickets(30).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
  });
  after(() => t.close());

  const get = async (id: string) => (await t.req(`/control/v1/training-jobs/${id}`)).json();

  test('a job queued while the model loads waits, then runs once it is ready', async () => {
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    t.runner.start();
    await new Promise((r) => setTimeout(r, 300));
    const waiting = await get(job.id);
    assert.equal(waiting.status, 'queued', 'not claimed while the model loads');
    assert.equal(waiting.attempts, 0);
    ready = true;
    const done = await waitFor(async () => ((await get(job.id)).status === 'succeeded' ? get(job.id) : undefined));
    assert.equal(done.attempts, 0);
  });

  test('the engine unavailable mid-job: back to the queue with a backoff, then done; never failed', async () => {
    refusing = true;
    const job = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
    const deferred = await waitFor(
      async () => {
        const j = await get(job.id);
        return j.status === 'queued' && j.not_before ? j : undefined;
      },
      10_000,
      'the job to wait in the queue',
    );
    assert.match(deferred.message, /^waiting: no inference worker is reachable; retry shortly; offered again in 2 s$/);
    assert.equal(deferred.attempts, 0);
    assert.ok(Date.parse(deferred.not_before) > Date.now(), 'not offered again before its backoff ends');
    const before = answered;
    refusing = false;
    const done = await waitFor(
      async () => {
        const j = await get(job.id);
        assert.notEqual(j.status, 'failed', j.message);
        return j.status === 'succeeded' ? j : undefined;
      },
      15_000,
      'the job to succeed',
    );
    assert.equal(done.attempts, 0, 'waiting is not a failure');
    assert.ok(answered > before);
  });
});
