import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROUTING, storedAdapter } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/adapters 200 and 204', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("lists and shows the account's adapters; DELETE stops one at once", async () => {
    const id = await storedAdapter(t, t.account.id);
    const list = await (await t.req('/control/v1/adapters')).json();
    assert.deepEqual(
      list.data.map((a: { id: string; servable: boolean }) => [a.id, a.servable]),
      [[id, true]],
    );
    const path = `/control/v1/adapters/${encodeURIComponent(id)}`;
    assert.equal((await (await t.req(path)).json()).base_model, 'brier-fake-3.0.0');
    const ask = () => t.req('/v1/systemone', { body: { model: id, state: 'x', questions: { team: ROUTING } } });
    const before = await (await ask()).json();
    assert.equal(before.answers.team.choice, 'billing');
    assert.equal(before.answers.team.probabilities.billing, 0.91, 'softmax of biases 3, 0, 0');
    assert.equal((await t.req(path, { method: 'DELETE' })).status, 204);
    assert.equal((await ask()).status, 400);
    assert.equal((await t.req(path)).status, 404);
  });

  test('an adapter fitted on an earlier release lists as not servable, says to fit it again, and is refused', async () => {
    const id = await storedAdapter(t, t.account.id, 'brier-fake-2.0.0');
    const listed = (await (await t.req('/control/v1/adapters')).json()).data.find((a: { id: string }) => a.id === id);
    assert.equal(listed.servable, false);
    assert.match(
      listed.retrain,
      /fitted on brier-fake-2\.0\.0; this server runs brier-fake-3\.0\.0: start a training job/,
    );
    const res = await t.req('/v1/systemone', { body: { model: id, state: 'x', questions: { team: ROUTING } } });
    assert.equal(res.status, 400);
    assert.match(
      (await res.json()).message,
      /an adapter of brier-fake-2\.0\.0 and this server runs brier-fake-3\.0\.0; fit it again/,
    );
  });
});
