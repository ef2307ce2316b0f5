/**
 * An adapter is never built from examples deleted before it was stored (issue 33): the delete of a
 * template's examples lands while its job is queued, reading, fitting, or between its fit and the
 * store; each time the job stores nothing from the deleted template, starts again without it, and
 * ends with an adapter of the other template only. Revoking retention (its outcomes go with it) and
 * deleting the account stop the jobs that read them too. SQLite, and PostgreSQL when
 * TEST_DATABASE_URL is set; the fake engine, gated so that a delete can land mid-read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DecisionEngine } from '../../src/engines/engine.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import type { Fitter } from '../../src/jobs/runner.ts';
import { gate } from '../fixtures/gate.ts';
import { ask, calibrationArtifact, jsonl, REFUND, ROUTING, row, tickets, upload, waitFor } from '../fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, signedInClient, type TestApp } from '../harness.ts';

for (const kind of databases()) {
  describe(`deletes reach the jobs that read the examples (${kind})`, () => {
    let t: TestApp;
    const reading = gate();
    const fitting = gate();
    /** Runs once between a fit's result and the store (the delete landing there). */
    let beforeStore: (() => Promise<void>) | undefined;
    const fits: string[][] = [];
    before(async () => {
      notePostgresSkip();
      const inner = createFakeEngine();
      const engine: DecisionEngine = {
        ...inner,
        info: inner.info,
        limits: inner.limits,
        async answer(request, signal) {
          await reading.pass(signal);
          return inner.answer(request, signal);
        },
      };
      const fitter: Fitter = async (request, progress, signal) => {
        progress(0.5, 'fitting');
        await fitting.pass(signal);
        fits.push(request.templates.map((x) => x.template));
        const hook = beforeStore;
        beforeStore = undefined;
        await hook?.();
        return { artifact: calibrationArtifact(request, request.templates.length, 0.1), reports: [] };
      };
      // Two jobs at once: a restarted job may be claimed again by this process while its first run winds down.
      t = await makeTestApp({ db: kind, engine, fitter, jobPollMs: 10, jobLeaseMs: 300, trainingConcurrency: 2 });
      t.runner.start();
    });
    after(() => t.close());

    /** A fresh account with 24 examples of ROUTING and of REFUND, and its key. */
    async function account() {
      const client = await signedInClient(t);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'k' } })).json();
      const rows = tickets(24).map((x, i) =>
        row(x.state, { team: ROUTING, refund: REFUND }, { team: x.team, refund: i % 2 === 0 }),
      );
      const up = await upload(t, jsonl(rows), key);
      assert.equal(up.status, 201);
      const templates = (await up.json()).templates as { id: string; type: string }[];
      const routing = templates.find((x) => x.type === 'choice')?.id ?? '';
      const refund = templates.find((x) => x.type === 'noul')?.id ?? '';
      const auth = { authorization: `Bearer ${key}` };
      const call = (path: string, init: { method?: string; body?: unknown } = {}) =>
        t.req(path, { ...init, headers: auth });
      return { client, key, routing, refund, call };
    }

    async function ended(call: (path: string) => Promise<Response>, id: string) {
      return waitFor(
        async () => {
          const j = await (await call(`/control/v1/training-jobs/${id}`)).json();
          return j.status === 'succeeded' || j.status === 'failed' || j.status === 'cancelled' ? j : undefined;
        },
        15_000,
        'the job to end',
      );
    }

    /** The templates of every adapter the account has. */
    async function adapterTemplates(call: (path: string) => Promise<Response>): Promise<string[][]> {
      const list = (await (await call('/control/v1/adapters')).json()).data as { id: string }[];
      const rows = await t.db.kysely
        .selectFrom('adapter')
        .select(['id', 'artifact'])
        .where('id', 'in', list.map((a) => a.id).concat(['-']))
        .execute();
      return rows.map((r) => (JSON.parse(r.artifact).heads as { template: string }[]).map((h) => h.template));
    }

    for (const stage of ['queued', 'reading', 'fitting', 'storing'] as const) {
      test(`a template's examples deleted while its job is ${stage}: the adapter has only the other template`, async () => {
        const a = await account();
        let blocked: Promise<void> | undefined;
        if (stage === 'queued') t.runner.stop();
        if (stage === 'reading') blocked = reading.close();
        if (stage === 'fitting') blocked = fitting.close();
        const del = async () => {
          const res = await a.call(`/control/v1/examples/${a.routing}`, { method: 'DELETE' });
          assert.equal(res.status, 204);
        };
        if (stage === 'storing') beforeStore = del;
        const job = await (await a.call('/control/v1/training-jobs', { method: 'POST', body: {} })).json();
        assert.deepEqual([...job.templates].sort(), [a.refund, a.routing].sort());
        if (blocked) await blocked;
        if (stage !== 'storing') await del();
        if (stage === 'queued') t.runner.start();
        if (stage === 'reading') {
          // Claimed again by this process (two jobs at once) while its first run is still blocked:
          // that run must not go on as if the job were still its own.
          await waitFor(
            async () => (await (await a.call(`/control/v1/training-jobs/${job.id}`)).json()).status === 'running',
            5000,
            'the job to be claimed again',
          );
        }
        reading.open();
        fitting.open();
        const done = await ended(a.call, job.id);
        assert.equal(done.status, 'succeeded', done.message);
        assert.deepEqual(done.templates, [a.refund]);
        assert.deepEqual(await adapterTemplates(a.call), [[a.refund]], 'no adapter holds the deleted template');
        if (stage === 'reading') {
          // The run that had read the deleted examples stopped before fitting them.
          assert.ok(!fits.some((f) => f.includes(a.routing)), `fitted: ${JSON.stringify(fits)}`);
        }
        assert.equal(done.attempts, 0, 'a restart is not a failure');
      });
    }

    test('deleting every template a job reads cancels it', async () => {
      const a = await account();
      const blocked = fitting.close();
      const job = await (await a.call('/control/v1/training-jobs', { method: 'POST', body: {} })).json();
      await blocked;
      assert.equal((await a.call(`/control/v1/examples/${a.routing}`, { method: 'DELETE' })).status, 204);
      assert.equal((await a.call(`/control/v1/examples/${a.refund}`, { method: 'DELETE' })).status, 204);
      fitting.open();
      const done = await ended(a.call, job.id);
      assert.equal(done.status, 'cancelled');
      assert.match(
        done.message,
        /^cancelled: the examples of template tpl_\w+ were deleted, and it had no other template/,
      );
      assert.deepEqual(await adapterTemplates(a.call), []);
    });

    test('turning retention off deletes the outcomes of its requests and restarts the job that read them', async () => {
      const a = await account();
      await a.client.request('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
      // 20 outcomes of a third template, from retained requests
      const URGENT = { type: 'noul', instructions: 'Is it urgent?' };
      for (let i = 0; i < 20; i++) {
        const { requestId } = await ask(t, a.key, `ticket ${i}`, { urgent: URGENT });
        const res = await a.call('/control/v1/outcomes', {
          method: 'POST',
          body: { request_id: requestId, question_id: 'urgent', label: i % 2 === 0 },
        });
        assert.equal(res.status, 201);
      }
      const blocked = fitting.close();
      const job = await (await a.call('/control/v1/training-jobs', { method: 'POST', body: {} })).json();
      assert.equal(job.templates.length, 3);
      await blocked;
      const off = await a.client.request('/control/v1/retention', { method: 'PUT', body: { days: 0 } });
      assert.equal(off.status, 200);
      fitting.open();
      const done = await ended(a.call, job.id);
      assert.equal(done.status, 'succeeded', done.message);
      assert.deepEqual([...done.templates].sort(), [a.refund, a.routing].sort(), 'the outcomes template is dropped');
      const [heads] = await adapterTemplates(a.call);
      assert.deepEqual([...(heads ?? [])].sort(), [a.refund, a.routing].sort());
      const outcomes = await t.db.kysely
        .selectFrom('example')
        .select('id')
        .where('user_id', '=', a.client.userId)
        .where('source', '=', 'outcome')
        .execute();
      assert.deepEqual(outcomes, [], 'the outcomes went with their requests');
    });

    test('deleting the account stops its running job; nothing of it is stored', async () => {
      const a = await account();
      const blocked = fitting.close();
      const job = await (await a.call('/control/v1/training-jobs', { method: 'POST', body: {} })).json();
      await blocked;
      const fitsBefore = fits.length;
      assert.equal((await a.client.request('/control/v1/account', { method: 'DELETE' })).status, 200);
      await waitFor(async () => !t.runner.current().some((j) => j.id === job.id), 5000, 'the runner to stop the job');
      fitting.open();
      assert.equal(fits.length, fitsBefore, 'the fit was stopped, not finished');
      const left = await t.db.kysely
        .selectFrom('adapter')
        .select('id')
        .where('user_id', '=', a.client.userId)
        .execute();
      assert.deepEqual(left, []);
    });
  });
}
