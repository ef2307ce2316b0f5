import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row, upload } from '../../../../test/fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../../../../test/harness.ts';
import { migrations } from '../../../db/migrations.ts';

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

    test('the same file uploaded again stores nothing and says how many labelled questions were duplicates', async () => {
      const { key } = await t.keys.create((await t.accounts.ensure(`again-${kind}@example.com`)).id, 'k');
      const body = jsonl([
        row('charged twice', { team: ROUTING, refund: REFUND }, { team: 'billing', refund: true }),
        row('app crashes', { team: ROUTING }, { team: 'tech' }),
      ]);
      const first = await (await upload(t, body, key)).json();
      assert.deepEqual([first.added, first.duplicates, first.total], [3, 0, 3]);
      const res = await upload(t, body, key);
      assert.equal(res.status, 201);
      const again = await res.json();
      assert.deepEqual([again.added, again.duplicates, again.rows, again.total], [0, 3, 2, 3]);
      assert.deepEqual(
        again.templates.map((x: { type: string; added: number; duplicates: number }) => [
          x.type,
          x.added,
          x.duplicates,
        ]),
        [
          ['choice', 0, 2],
          ['noul', 0, 1],
        ],
      );
      // A new label for the same state and question is new; so is the same row in another account.
      const changed = jsonl([row('app crashes', { team: ROUTING }, { team: 'other' })]);
      assert.deepEqual(
        await (await upload(t, changed, key)).json().then((j) => [j.added, j.duplicates, j.total]),
        [1, 0, 4],
      );
      assert.deepEqual(await (await upload(t, body)).json().then((j) => [j.added, j.duplicates]), [3, 0]);
    });

    test("a row repeated within a file is stored as often as it comes, less the account's copies", async () => {
      const { key } = await t.keys.create((await t.accounts.ensure(`repeat-${kind}@example.com`)).id, 'k');
      const twice = jsonl([
        row('same', { refund: REFUND }, { refund: true }),
        row('same', { refund: REFUND }, { refund: true }),
      ]);
      assert.deepEqual(await (await upload(t, twice, key)).json().then((j) => [j.added, j.duplicates]), [2, 0]);
      assert.deepEqual(await (await upload(t, twice, key)).json().then((j) => [j.added, j.duplicates]), [0, 2]);
      const thrice = jsonl(Array.from({ length: 3 }, () => row('same', { refund: REFUND }, { refund: true })));
      assert.deepEqual(
        await (await upload(t, thrice, key)).json().then((j) => [j.added, j.duplicates, j.total]),
        [1, 2, 3],
      );
    });

    test('concurrent uploads of one file store it once', async () => {
      const { key } = await t.keys.create((await t.accounts.ensure(`race-${kind}@example.com`)).id, 'k');
      const body = jsonl(
        Array.from({ length: 5 }, (_, i) => row(`ticket ${i}`, { refund: REFUND }, { refund: i % 2 === 0 })),
      );
      const results = await Promise.all(Array.from({ length: 6 }, () => upload(t, body, key).then((r) => r.json())));
      assert.deepEqual(results.map((j) => j.added).sort(), [0, 0, 0, 0, 0, 5]);
      assert.equal(results.at(-1).total, 5);
    });

    test('rows uploaded before the content hash (migration 0013) are recognised as duplicates too', async () => {
      const user = await t.accounts.ensure(`old-${kind}@example.com`);
      const { key } = await t.keys.create(user.id, 'k');
      const body = jsonl([row('old row', { team: ROUTING }, { team: 'tech' })]);
      assert.equal((await upload(t, body, key)).status, 201);
      // The row as the code before the migration left it: no hash.
      await t.db.kysely.updateTable('example').set({ content_hash: null }).where('user_id', '=', user.id).execute();
      await t.db.kysely.schema.dropIndex('example_content_idx').execute();
      await t.db.kysely.schema.alterTable('example').dropColumn('content_hash').execute();
      const upgrade = migrations(t.db.dialect)['0013_example_content_hash'];
      assert.ok(upgrade);
      await upgrade.up(t.db.kysely);
      assert.deepEqual(await (await upload(t, body, key)).json().then((j) => [j.added, j.duplicates]), [0, 1]);
    });
  });

  describe(`POST /control/v1/examples 201 at the account's limit (${kind})`, () => {
    let t: TestApp;
    before(async () => {
      t = await makeTestApp({ db: kind, exampleLimits: { perAccount: 4, templatesPerAccount: 50 } });
    });
    after(() => t.close());

    test('duplicates do not count against the limit: a full account can upload its file again', async () => {
      const four = jsonl(Array.from({ length: 4 }, (_, i) => row(`s${i}`, { q: REFUND }, { q: i % 2 === 0 })));
      assert.equal((await upload(t, four)).status, 201);
      const res = await upload(t, four);
      assert.equal(res.status, 201);
      assert.deepEqual(await res.json().then((j) => [j.added, j.duplicates, j.total]), [0, 4, 4]);
    });
  });
}
