/**
 * Adapters end to end on the real service graph (SQLite, and PostgreSQL when TEST_DATABASE_URL is
 * set): upload labelled examples, queue a training job, run it (real fitting in the low-priority
 * child process), then serve the adapter as a model id of its account: matching questions answered by
 * it, others by the base model (x_answered_by says which), invisible to other accounts, and stopped at
 * once by a deletion. The fake engine has no state features, so its adapters are calibration-only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row, tickets, upload } from '../fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, signedInClient, type TestApp } from '../harness.ts';

for (const kind of databases()) {
  describe(`adapters: train, serve, isolate, delete (fake engine, ${kind})`, () => {
    let t: TestApp;
    let adapterId = '';
    before(async () => {
      notePostgresSkip();
      t = await makeTestApp({ db: kind });
    });
    after(() => t.close());

    test('a job fits an adapter from uploaded examples and reports held-out metrics before and after', async () => {
      const rows = tickets(90).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
      assert.equal((await upload(t, jsonl(rows))).status, 201);
      const queued = await t.req('/control/v1/training-jobs', { body: {} });
      assert.equal(queued.status, 202);
      const job = await queued.json();
      assert.equal(job.status, 'queued');
      // A second job of the account waits behind the first; cancelled, it never runs.
      const second = await t.req('/control/v1/training-jobs', { body: {} });
      assert.equal(second.status, 202);
      const queuedSecond = await second.json();
      assert.equal(queuedSecond.queue_position, 2);
      const cancelled = await t.req(`/control/v1/training-jobs/${queuedSecond.id}/cancel`, { method: 'POST' });
      assert.equal(cancelled.status, 200);
      assert.equal((await cancelled.json()).status, 'cancelled');
      assert.equal(await t.runner.runOnce(), true);
      const done = await (await t.req(`/control/v1/training-jobs/${job.id}`)).json();
      assert.equal(done.status, 'succeeded', done.message);
      assert.equal(done.progress, 1);
      const report = done.result.templates[0];
      assert.equal(report.n, 90);
      assert.ok(report.nTest >= 20);
      assert.equal(report.kind, 'calibration', 'no state features on this engine');
      assert.equal(report.served, true, report.reason);
      assert.ok(report.after.brier < report.before.brier);
      assert.equal(report.reliability.before.length, 15);
      assert.equal(typeof report.after.eceFloor, 'number');
      assert.match(done.adapter_id, /^ft:brier-fake-3\.0\.0:[0-9a-f]{12}$/);
      adapterId = done.adapter_id;
      const listed = await (await t.req('/control/v1/adapters')).json();
      assert.deepEqual(
        listed.data.map((a: { id: string }) => a.id),
        [adapterId],
      );
    });

    test("the adapter is a model of the key's account: listed, and answering its template while others fall back", async () => {
      const models = await (await t.req('/v1/models')).json();
      assert.deepEqual(
        models.models.map((m: { id: string }) => m.id),
        ['brier-fake-3.0.0', adapterId],
      );
      const questions = { team: ROUTING, refund: REFUND };
      const res = await t.req('/v1/systemone', { body: { model: adapterId, state: 'I was charged twice', questions } });
      assert.equal(res.status, 200);
      const json = await res.json();
      assert.equal(json.model, adapterId);
      assert.equal(json.answers.team.x_answered_by, adapterId);
      assert.equal(json.answers.refund.x_answered_by, 'brier-fake-3.0.0');
      const base = await (await t.req('/v1/systemone', { body: { state: 'I was charged twice', questions } })).json();
      assert.deepEqual(
        { ...json.answers.refund, x_answered_by: undefined },
        { ...base.answers.refund, x_answered_by: undefined },
        'the fallback is the base answer',
      );
      assert.notDeepEqual(json.answers.team.probabilities, base.answers.team.probabilities, 'the adapter changed it');
      assert.equal(base.answers.team.x_answered_by, undefined, 'no extension field without an adapter');
      // The same template with its labels in another order is the same template.
      const reordered = {
        ...ROUTING,
        criteria: { other: null, billing: 'charges and refunds', tech: 'bugs and outages' },
      };
      const again = await (
        await t.req('/v1/systemone', {
          body: { model: adapterId, state: 'I was charged twice', questions: { x: reordered } },
        })
      ).json();
      assert.equal(again.answers.x.x_answered_by, adapterId);
      assert.equal(again.answers.x.probabilities.billing, json.answers.team.probabilities.billing);
    });

    test('another account can neither use, list nor see it, and cannot tell it from an id that does not exist', async () => {
      const other = await signedInClient(t);
      const { key } = await (await other.request('/control/v1/keys', { body: { name: 'o' } })).json();
      const as = { authorization: `Bearer ${key}` };
      const models = await (await t.req('/v1/models', { headers: as })).json();
      assert.deepEqual(
        models.models.map((m: { id: string }) => m.id),
        ['brier-fake-3.0.0'],
      );
      const body = (model: string) => ({ model, state: 's', questions: { team: ROUTING } });
      const foreign = await t.req('/v1/systemone', { body: body(adapterId), headers: as });
      const missing = await t.req('/v1/systemone', { body: body('ft:brier-fake-3.0.0:000000000000'), headers: as });
      assert.equal(foreign.status, 400);
      assert.equal(missing.status, 400);
      const a = (await foreign.json()).message.replace(adapterId, 'ID');
      const b = (await missing.json()).message.replace('ft:brier-fake-3.0.0:000000000000', 'ID');
      assert.equal(a, b);
      const path = `/control/v1/adapters/${encodeURIComponent(adapterId)}`;
      assert.equal((await other.request(path)).status, 404);
      assert.equal((await other.request(path, { method: 'DELETE' })).status, 404);
      assert.deepEqual((await (await other.request('/control/v1/adapters')).json()).data, []);
      assert.deepEqual((await (await other.request('/control/v1/training-jobs')).json()).data, []);
      const job = (await (await t.req('/control/v1/training-jobs')).json()).data[0];
      assert.equal((await other.request(`/control/v1/training-jobs/${job.id}`)).status, 404);
      // The playground of the owner's session can name it; nobody else's can.
      assert.equal((await other.request('/control/v1/playground/systemone', { body: body(adapterId) })).status, 400);
    });

    test('an adapter whose examples were all deleted still serves, unchanged, until it is deleted itself', async () => {
      const ask = async () =>
        (
          await (
            await t.req('/v1/systemone', {
              body: { model: adapterId, state: 'refund my last payment', questions: { team: ROUTING } },
            })
          ).json()
        ).answers.team;
      const before = await ask();
      const templates = (await (await t.req('/control/v1/examples')).json()).templates as { id: string }[];
      for (const x of templates) {
        assert.equal((await t.req(`/control/v1/examples/${x.id}`, { method: 'DELETE' })).status, 204);
      }
      assert.deepEqual((await (await t.req('/control/v1/examples')).json()).templates, []);
      // The adapter holds fitted numbers and held-out metrics, no example: it is the account's model
      // until DELETE /control/v1/adapters/{id} (docs/guide/teach-your-task.md).
      const after = await ask();
      assert.equal(after.x_answered_by, adapterId);
      assert.deepEqual(after, before);
    });

    test('deleting the adapter stops it at once', async () => {
      const path = `/control/v1/adapters/${encodeURIComponent(adapterId)}`;
      assert.equal((await t.req(path)).status, 200);
      const ask = () =>
        t.req('/v1/systemone', { body: { model: adapterId, state: 's', questions: { team: ROUTING } } });
      assert.equal((await ask()).status, 200);
      assert.equal((await t.req(path, { method: 'DELETE' })).status, 204);
      assert.equal((await ask()).status, 400);
      assert.deepEqual(
        (await (await t.req('/v1/models')).json()).models.map((m: { id: string }) => m.id),
        ['brier-fake-3.0.0'],
      );
      assert.equal((await t.req(path)).status, 404);
    });

    test('a job needs templates with at least 20 examples, and names the shortfall', async () => {
      const client = await signedInClient(t);
      const none = await client.request('/control/v1/training-jobs', { body: {} });
      assert.equal(none.status, 400);
      assert.match((await none.json()).message, /no labelled examples yet/);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'k' } })).json();
      const few = jsonl(tickets(12).map((x) => row(x.state, { team: ROUTING }, { team: x.team })));
      assert.equal((await upload(t, few, key)).status, 201);
      const short = await client.request('/control/v1/training-jobs', { body: {} });
      assert.equal(short.status, 400);
      assert.match((await short.json()).message, /at least 20 labelled examples to be fitted; the most any has is 12/);
      const unknown = await client.request('/control/v1/training-jobs', { body: { templates: ['tpl_nope'] } });
      assert.equal(unknown.status, 404);
    });
  });
}
