import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, jsonl, REFUND, ROUTING, row, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/outcomes 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
    await t.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
  });
  after(() => t.close());

  test('a label the question does not have is a 422 at label, the same refusal as in an upload', async () => {
    const { requestId } = await ask(t, t.key, 'mine', { q: REFUND, team: ROUTING });
    for (const [questionId, label, question] of [
      ['q', 3, REFUND],
      ['team', 'sales', ROUTING],
    ] as const) {
      const res = await t.req('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: questionId, label },
      });
      assert.equal(res.status, 422, questionId);
      const json = await res.json();
      assert.deepEqual(json.detail[0].loc, ['body', 'label']);
      assert.equal(json.detail[0].input, label);
      // The upload of the same label is refused with the same status and the same words.
      const uploaded = await upload(t, jsonl([row('mine', { [questionId]: question }, { [questionId]: label })]));
      assert.equal(uploaded.status, 422);
      const refusal = (await uploaded.json()).detail[0].msg.replace(/^line 1: labels\.\w+: /, '');
      assert.equal(json.message, `label: ${refusal}`);
    }
    assert.equal((await (await t.req('/control/v1/examples')).json()).total, 0);
  });
});
