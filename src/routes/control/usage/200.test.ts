import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

const ASK = { state: 'is my parcel late?', questions: { late: { type: 'noul' }, sure: { type: 'noul' } } };

describe('GET /control/v1/usage 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("with the session: the account's totals by day (playground included) and one item per active key", async () => {
    const client = await signedInClient(t);
    const a = await (await client.request('/control/v1/keys', { body: { name: 'a' } })).json();
    const b = await (await client.request('/control/v1/keys', { body: { name: 'b' } })).json();
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    assert.equal((await t.req('/v1/systemone', { body: ASK, headers: bearer(a.key) })).status, 200);
    assert.equal((await t.req('/v1/systemone', { body: ASK, headers: bearer(a.key) })).status, 200);
    assert.equal((await t.req('/v1/systemone', { body: { state: 's' }, headers: bearer(b.key) })).status, 422);
    assert.equal((await client.request('/control/v1/playground/systemone', { body: ASK })).status, 200);

    const res = await client.request('/control/v1/usage?days=7');
    assert.equal(res.status, 200);
    const report = await res.json();
    assert.equal(report.window.days, 7);
    assert.equal(report.daily.length, 7);
    assert.equal(report.totals.requests, 4);
    assert.equal(report.totals.errors, 1);
    assert.equal(report.totals.questions, 6);
    assert.deepEqual(
      report.keys.map((k: { id: string; totals: { requests: number } }) => [k.id, k.totals.requests]),
      [
        [a.id, 2],
        [b.id, 1],
      ],
    );
  });

  test('with an API key: that key alone, however many the account has', async () => {
    const client = await signedInClient(t);
    const a = await (await client.request('/control/v1/keys', { body: { name: 'a' } })).json();
    const b = await (await client.request('/control/v1/keys', { body: { name: 'b' } })).json();
    await t.req('/v1/systemone', { body: ASK, headers: { authorization: `Bearer ${b.key}` } });
    const res = await t.req('/control/v1/usage?days=1', { headers: { authorization: `Bearer ${a.key}` } });
    assert.equal(res.status, 200);
    const report = await res.json();
    assert.equal(report.totals.requests, 0);
    assert.deepEqual(
      report.keys.map((k: { id: string }) => k.id),
      [a.id],
    );
  });

  test('the window defaults to 30 days', async () => {
    const res = await t.req('/control/v1/usage');
    assert.equal(res.status, 200);
    assert.equal((await res.json()).daily.length, 30);
  });
});
