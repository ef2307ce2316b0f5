import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row, upload } from '../../../../test/fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../../../../test/harness.ts';

for (const kind of databases()) {
  describe(`POST /control/v1/examples 201 (${kind})`, () => {
    let t: TestApp;
    before(async () => {
      notePostgresSkip();
      t = await makeTestApp({ db: kind });
    });
    after(() => t.close());

    test('stores every labelled question of every row, grouped by template, and lists them', async () => {
      const body = jsonl([
        row('I was charged twice.', { team: ROUTING, refund: REFUND }, { team: 'billing', refund: true }),
        row({ subject: 'App', body: 'crashes' }, { team: ROUTING }, { team: 'tech' }),
        // The same template with its labels in another order is the same template.
        row(
          'Where is your office?',
          { t: { ...ROUTING, criteria: { other: null, tech: 'bugs and outages', billing: 'charges and refunds' } } },
          { t: 'other' },
        ),
      ]);
      const res = await upload(t, body);
      assert.equal(res.status, 201);
      const json = await res.json();
      assert.equal(json.added, 4);
      assert.equal(json.rows, 3);
      assert.equal(json.total, 4);
      assert.equal(json.templates.length, 2);
      const list = await (await t.req('/control/v1/examples')).json();
      assert.equal(list.total, 4);
      const team = list.templates.find((x: { type: string }) => x.type === 'choice');
      assert.deepEqual(team.labels, { billing: 1, other: 1, tech: 1 });
      assert.equal(team.question.instructions, ROUTING.instructions);
      const refund = list.templates.find((x: { type: string }) => x.type === 'noul');
      assert.deepEqual(refund.labels, { true: 1 });
      assert.equal(list.limits.rows_per_upload, 5000);
    });

    test('score labels are level indices or level texts; blank lines are skipped', async () => {
      const urgency = { type: 'score', instructions: 'How urgent?', criteria: ['low', 'medium', 'high'] };
      const body = `${JSON.stringify(row('a', { u: urgency }, { u: 2 }))}\n\n${JSON.stringify(row('b', { u: urgency }, { u: 'low' }))}\n`;
      const res = await upload(t, body, t.key, 'application/x-ndjson');
      assert.equal(res.status, 201);
      const list = await (await t.req('/control/v1/examples')).json();
      const score = list.templates.find((x: { type: string }) => x.type === 'score');
      assert.deepEqual(score.labels, { 0: 1, 2: 1 });
    });
  });
}
