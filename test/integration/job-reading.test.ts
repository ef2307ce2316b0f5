/**
 * How a training job reads its examples (issue 33): several states at once through the engine (its
 * batch path) while no live request is about, one at a time while live traffic is; and in the
 * examples' own order whatever order the engine answers in, so that the same examples give the same
 * rows, split and adapter on one server or through workers. The fake engine, with answers that take
 * a random time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FitRequest } from '../../src/engines/adapters/fit-protocol.ts';
import type { DecisionEngine } from '../../src/engines/engine.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import type { Fitter } from '../../src/jobs/runner.ts';
import { mulberry32 } from '../../src/lib/seeded.ts';
import { jsonl, REFUND, ROUTING, row, tickets, upload } from '../fixtures/teach.ts';
import { makeTestApp } from '../harness.ts';

/** An app whose engine answers after a random delay and records how many answers ran at once. */
async function appWith(seed: number, options: { trainingMaxExamples?: number } = {}) {
  const inner = createFakeEngine();
  const random = mulberry32(seed);
  const seen = { now: 0, most: 0, answers: 0 };
  const engine: DecisionEngine = {
    ...inner,
    info: inner.info,
    limits: inner.limits,
    async answer(request, signal) {
      seen.now++;
      seen.most = Math.max(seen.most, seen.now);
      seen.answers++;
      try {
        await new Promise((r) => setTimeout(r, 1 + Math.floor(random() * 8)));
        return await inner.answer(request, signal);
      } finally {
        seen.now--;
      }
    },
  };
  const fits: FitRequest[] = [];
  const fitter: Fitter = async (request) => {
    fits.push(request);
    return { artifact: null, reports: [] };
  };
  const t = await makeTestApp({ engine, fitter, ...options });
  const rows = tickets(40).map((x, i) =>
    row(x.state, { team: ROUTING, refund: REFUND }, { team: x.team, refund: i % 3 === 0 }),
  );
  assert.equal((await upload(t, jsonl(rows))).status, 201);
  return { t, seen, fits };
}

describe('a training job reads its examples', () => {
  test('several states at once when no live request is about, in the same order whatever order they are answered in', async () => {
    const a = await appWith(1);
    const b = await appWith(2);
    try {
      for (const x of [a, b]) {
        assert.equal((await x.t.req('/control/v1/training-jobs', { body: {} })).status, 202);
        assert.equal(await x.t.runner.runOnce(), true);
      }
      assert.equal(a.seen.most, 4, 'four states at once (the batch)');
      const rowsOf = (f: FitRequest | undefined) =>
        f?.templates.map((x) => ({ template: x.template, rows: x.rows.map((r) => [r.label, ...r.base]) }));
      assert.deepEqual(rowsOf(a.fits[0]), rowsOf(b.fits[0]), 'the same rows in the same order');
      assert.equal(
        a.fits[0]?.templates.reduce((n, x) => n + x.rows.length, 0),
        80,
      );
    } finally {
      await a.t.close();
      await b.t.close();
    }
  });

  test('one state at a time while live traffic is about', async () => {
    const a = await appWith(3);
    try {
      let live = true;
      const traffic = (async () => {
        while (live) {
          await a.t.req('/v1/systemone', { body: { state: 'live', questions: { q: REFUND } } });
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await a.t.req('/control/v1/training-jobs', { body: {} })).status, 202);
      a.seen.most = 0;
      const job = a.t.runner.runOnce();
      // The job's own answers: never more than one at a time beside the one live request.
      await job;
      live = false;
      await traffic;
      assert.ok(a.seen.most <= 2, `at most one job answer beside a live one (${a.seen.most} at once)`);
    } finally {
      await a.t.close();
    }
  });

  test('a deployment bounds the examples one job reads (BRIER_TRAINING_MAX_EXAMPLES): the newest, and the job says so', async () => {
    const a = await appWith(4, { trainingMaxExamples: 30 });
    try {
      const queued = await (await a.t.req('/control/v1/training-jobs', { body: {} })).json();
      assert.equal(queued.examples, 30, 'the job is sized by the bound');
      assert.equal(await a.t.runner.runOnce(), true);
      assert.equal(
        a.fits[0]?.templates.reduce((n, x) => n + x.rows.length, 0),
        30,
      );
      const done = await (await a.t.req(`/control/v1/training-jobs/${queued.id}`)).json();
      assert.match(done.message, /read the newest 30 examples \(the bound per job\); 50 older ones left out/);
    } finally {
      await a.t.close();
    }
  });
});
