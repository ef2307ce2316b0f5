import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, REFUND } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/outcomes 404', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("another account's request is not found, exactly like one that never existed", async () => {
    await t.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
    const { requestId } = await ask(t, t.key, 'mine', { q: REFUND });
    const other = await signedInClient(t);
    await other.request('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
    const foreign = await other.request('/control/v1/outcomes', {
      body: { request_id: requestId, question_id: 'q', label: true },
    });
    const never = await other.request('/control/v1/outcomes', {
      body: { request_id: `req_${'0'.repeat(32)}`, question_id: 'q', label: true },
    });
    assert.equal(foreign.status, 404);
    assert.equal(never.status, 404);
    const a = (await foreign.json()).message.replace(requestId, 'ID');
    const b = (await never.json()).message.replace(`req_${'0'.repeat(32)}`, 'ID');
    assert.equal(a, b);
    assert.match(a, /^request_id: no retained request "ID" in this account/);
  });

  test('an unknown question id is a 404', async () => {
    const { requestId } = await ask(t, t.key, 'mine', { q: REFUND });
    const noQuestion = await t.req('/control/v1/outcomes', {
      body: { request_id: requestId, question_id: 'zz', label: true },
    });
    assert.equal(noQuestion.status, 404);
    assert.match((await noQuestion.json()).message, /^question_id: request "req_\w+" has no question "zz"/);
  });
});
