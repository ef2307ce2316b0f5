import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row, upload } from '../../../../test/fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../../../../test/harness.ts';

for (const kind of databases()) {
  describe(`POST /control/v1/examples 409 (per-account limits, ${kind})`, () => {
    let t: TestApp;
    before(async () => {
      notePostgresSkip();
      t = await makeTestApp({ db: kind, exampleLimits: { perAccount: 10, templatesPerAccount: 2 } });
    });
    after(() => t.close());

    test('an upload that would pass the account limit stores nothing and names the limit', async () => {
      const six = (from: number) =>
        jsonl(Array.from({ length: 6 }, (_, i) => row(`s${from + i}`, { q: REFUND }, { q: i % 2 === 0 })));
      assert.equal((await upload(t, six(0))).status, 201);
      const res = await upload(t, six(6));
      assert.equal(res.status, 409);
      assert.match(
        (await res.json()).message,
        /has 6 labelled examples and the upload adds 6: at most 10 per account \(the limit\); nothing was stored/,
      );
      assert.equal((await (await t.req('/control/v1/examples')).json()).total, 6);
    });

    test('a third template is refused when two are the limit', async () => {
      assert.equal((await upload(t, jsonl([row('a', { team: ROUTING }, { team: 'tech' })]))).status, 201);
      const third = { type: 'noul', instructions: 'Is this spam?' };
      const res = await upload(t, jsonl([row('b', { spam: third }, { spam: false })]));
      assert.equal(res.status, 409);
      assert.match((await res.json()).message, /has 2 question templates and the upload adds 1: at most 2 per account/);
    });

    test('ten concurrent uploads never store past the limit together', async () => {
      const other = await t.keys.create((await t.accounts.ensure('many@example.com')).id, 'k');
      const one = (i: number) => jsonl([row(`x${i}`, { q: REFUND }, { q: true })]);
      const results = await Promise.all(Array.from({ length: 14 }, (_, i) => upload(t, one(i), other.key)));
      assert.deepEqual(results.map((r) => r.status).sort(), [...Array(10).fill(201), ...Array(4).fill(409)]);
    });
  });
}
