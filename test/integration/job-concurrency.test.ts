/**
 * Several training jobs at once where the server allows it (BRIER_TRAINING_CONCURRENCY), one at a
 * time per account (issue 33): with two slots, two accounts' jobs run together while the first
 * account's second job waits for its first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Fitter } from '../../src/jobs/runner.ts';
import { calibrationArtifact, jsonl, ROUTING, row, tickets, upload, waitFor } from '../fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../harness.ts';

describe('training jobs at once', () => {
  let t: TestApp;
  /** Fits in progress, by account (the fit request does not say: by its rows' count, 21 + the account's index). */
  const fitting = new Set<number>();
  let most = 0;
  let release: () => void = () => {};
  let held = new Promise<void>((r) => {
    release = r;
  });
  before(async () => {
    const fitter: Fitter = async (request) => {
      const who = request.templates[0]?.rows.length ?? 0;
      fitting.add(who);
      most = Math.max(most, fitting.size);
      await held;
      fitting.delete(who);
      return { artifact: null, reports: [] };
    };
    t = await makeTestApp({ fitter, trainingConcurrency: 2, jobPollMs: 10 });
  });
  after(() => t.close());

  test("two accounts' jobs run together; an account's second job waits for its first", async () => {
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const user = await t.accounts.ensure(`together-${i}@example.com`);
      const { key } = await t.keys.create(user.id, 'k');
      keys.push(key);
      const rows = tickets(21 + i).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
      assert.equal((await upload(t, jsonl(rows), key)).status, 201);
    }
    const post = (key: string) =>
      t.req('/control/v1/training-jobs', { body: {}, headers: { authorization: `Bearer ${key}` } });
    const first = await (await post(keys[0] ?? '')).json();
    const second = await (await post(keys[0] ?? '')).json();
    const other = await (await post(keys[1] ?? '')).json();
    t.runner.start();
    await waitFor(async () => fitting.size === 2, 10_000, 'two fits at once');
    assert.deepEqual([...fitting].sort(), [21, 22], "one job of each account, not the first account's two");
    const status = async (id: string, key: string) =>
      (await (await t.req(`/control/v1/training-jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json())
        .status;
    assert.equal(await status(second.id, keys[0] ?? ''), 'queued');
    const releaseNow = release;
    held = new Promise<void>((r) => {
      release = r;
    });
    releaseNow();
    await waitFor(
      async () => (await status(second.id, keys[0] ?? '')) !== 'queued',
      10_000,
      "the account's second job to start",
    );
    release();
    for (const [id, key] of [
      [first.id, keys[0]],
      [second.id, keys[0]],
      [other.id, keys[1]],
    ] as const) {
      await waitFor(async () => (await status(id, key ?? '')) === 'succeeded', 10_000, `${id} to succeed`);
    }
    assert.equal(most, 2);
  });
});

describe('the adapter limit with several queued jobs', () => {
  test('jobs queued at 19 adapters: the first stores the 20th, the next fails naming the limit, nothing past it', async () => {
    const fitter: Fitter = async (request) => ({ artifact: calibrationArtifact(request, 1), reports: [] });
    const t = await makeTestApp({ fitter });
    try {
      await upload(t, jsonl(tickets(20).map((x) => row(x.state, { team: ROUTING }, { team: x.team }))));
      for (let i = 0; i < 19; i++) {
        await t.db.kysely
          .insertInto('adapter')
          .values({
            id: `ft:x:${i}`,
            user_id: t.account.id,
            base_model: 'x',
            job_id: 'j',
            artifact: '{}',
            report: '[]',
            created_at: Date.now(),
          })
          .execute();
      }
      const a = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
      const b = await (await t.req('/control/v1/training-jobs', { body: {} })).json();
      assert.equal(await t.runner.runOnce(), true);
      assert.equal(await t.runner.runOnce(), true);
      const get = async (id: string) => (await t.req(`/control/v1/training-jobs/${id}`)).json();
      assert.equal((await get(a.id)).status, 'succeeded');
      const failed = await get(b.id);
      assert.equal(failed.status, 'failed');
      assert.match(failed.message, /20 adapters \(the limit\)/);
      const n = await t.db.kysely.selectFrom('adapter').select('id').where('user_id', '=', t.account.id).execute();
      assert.equal(n.length, 20);
    } finally {
      await t.close();
    }
  });
});
