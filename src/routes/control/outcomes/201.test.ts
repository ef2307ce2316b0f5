import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, REFUND, ROUTING } from '../../../../test/fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, signedInClient, type TestApp } from '../../../../test/harness.ts';

for (const kind of databases()) {
  describe(`POST /control/v1/outcomes 201 and 200 (${kind})`, () => {
    let t: TestApp;
    before(async () => {
      notePostgresSkip();
      t = await makeTestApp({ db: kind });
    });
    after(() => t.close());

    test('an outcome by request id and question id becomes a labelled example of that template; posting again corrects it', async () => {
      const put = await t.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
      assert.equal(put.status, 200);
      const { requestId } = await ask(t, t.key, 'I was charged twice for one order.', {
        team: ROUTING,
        refund: REFUND,
      });
      assert.match(requestId, /^req_[0-9a-f]{32}$/);
      const res = await t.req('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: 'team', label: 'tech' },
      });
      assert.equal(res.status, 201);
      const first = await res.json();
      assert.equal(first.label, 'tech');
      assert.equal(first.replaced, false);
      const fixed = await t.req('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: 'team', label: 'billing' },
      });
      assert.equal(fixed.status, 200);
      assert.deepEqual(await fixed.json(), { ...first, label: 'billing', replaced: true });
      const list = await (await t.req('/control/v1/examples')).json();
      const team = list.templates.find((x: { id: string }) => x.id === first.template_id);
      assert.deepEqual(team.labels, { billing: 1 });
      assert.equal(team.outcomes, 1);
      const stored = await t.db.kysely
        .selectFrom('example')
        .selectAll()
        .where('id', '=', first.example_id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.state, '"I was charged twice for one order."');
      assert.equal(stored.source, 'outcome');
      // The other question of the same request is labelled on its own.
      const refund = await t.req('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: 'refund', label: true },
      });
      assert.equal(refund.status, 201);
    });

    test('the example records who served the answer: x_answered_by, or answered_by in answers retained before 0.2.0', async () => {
      await t.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
      const served = async (answers: Record<string, unknown>) => {
        const requestId = `req_${Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32)}`;
        await t.teach.retention.keep(
          t.account.id,
          {
            requestId,
            keyId: t.keyId,
            model: 'ft:brier-fake-3.0.0:adapter',
            state: '"charged twice"',
            questions: JSON.stringify({ refund: REFUND }),
            answers: JSON.stringify({ refund: { type: 'noul', noul: 0.7, ...answers } }),
          },
          7,
        );
        const res = await t.req('/control/v1/outcomes', {
          body: { request_id: requestId, question_id: 'refund', label: true },
        });
        assert.equal(res.status, 201);
        const { example_id } = await res.json();
        const row = await t.db.kysely
          .selectFrom('example')
          .select('served_by')
          .where('id', '=', example_id)
          .executeTakeFirstOrThrow();
        return row.served_by;
      };
      assert.equal(await served({ x_abstained: false, x_answered_by: 'brier-fake-3.0.0' }), 'brier-fake-3.0.0');
      assert.equal(await served({ abstained: false, answered_by: 'brier-fake-3.0.0' }), 'brier-fake-3.0.0');
      assert.equal(await served({ x_abstained: false }), 'ft:brier-fake-3.0.0:adapter', 'no extension: the model');
    });

    test('with the session cookie too', async () => {
      const client = await signedInClient(t);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'app' } })).json();
      await client.request('/control/v1/retention', { method: 'PUT', body: { days: 1 } });
      const { requestId } = await ask(t, key, 'ok', { q: REFUND });
      const res = await client.request('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: 'q', label: false },
      });
      assert.equal(res.status, 201);
    });
  });
}
