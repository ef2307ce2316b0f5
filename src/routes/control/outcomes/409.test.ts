import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, REFUND } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/outcomes 409 retention_off', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('without retention the endpoint says the content was not kept and how to turn it on', async () => {
    const { requestId } = await ask(t, t.key, 'not kept', { q: REFUND });
    const res = await t.req('/control/v1/outcomes', { body: { request_id: requestId, question_id: 'q', label: true } });
    assert.equal(res.status, 409);
    const json = await res.json();
    assert.equal(json.detail.error_type, 'retention_off');
    assert.match(
      json.message,
      /^request_id: the content of request "req_[0-9a-f]+" was not kept.*retention is off for this account and all its keys \(the default\).*PUT \/control\/v1\/retention/,
    );
    assert.equal((await (await t.req('/control/v1/examples')).json()).total, 0);
  });
});
