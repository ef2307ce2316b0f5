import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

const post = (t: TestApp, body: string) =>
  t.req('/control/v1/states', { body, headers: { 'content-type': 'application/jsonl' } });

describe('/control/v1/states 422, 400', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('invalid rows are named by line and field, and nothing is stored', async () => {
    const long = 'x'.repeat(16_385);
    const res = await post(t, `{"state":"ok"}\n{"text":"no state"}\n{"state":"${long}"}\nnot json\n`);
    assert.equal(res.status, 422);
    const body = await res.json();
    assert.match(body.message, /3 of 4 rows are invalid; nothing was stored/);
    const msgs = body.detail.map((d: { msg: string }) => d.msg).join(' | ');
    assert.match(msgs, /line 2/);
    assert.match(msgs, /line 3: state: is 16385 characters, the limit is 16384/);
    assert.match(msgs, /line 4: .*not valid JSON/);
    assert.equal((await (await t.req('/control/v1/states')).json()).states, 0);
  });

  test('an empty upload is a 400', async () => {
    const res = await post(t, '\n\n');
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /no rows/);
  });
});
