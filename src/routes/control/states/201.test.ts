import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

const post = (t: TestApp, body: string) =>
  t.req('/control/v1/states', { body, headers: { 'content-type': 'application/jsonl' } });

describe('/control/v1/states 201, 200, 204', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('stores text and JSON states, counts them per account, deletes them', async () => {
    const res = await post(
      t,
      jsonl([{ state: 'where is my parcel' }, { id: 'r2', state: { order: 7, note: 'late' } }]),
    );
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { added: 2, total: 2 });
    const listed = await (await t.req('/control/v1/states')).json();
    assert.equal(listed.states, 2);
    assert.equal(listed.limit, 20000);
    assert.deepEqual(listed.soft_labels, []);
    const other = await signedInClient(t);
    assert.equal(
      (await (await other.request('/control/v1/states')).json()).states,
      0,
      "another account's are not seen",
    );
    assert.equal((await t.req('/control/v1/states', { method: 'DELETE' })).status, 204);
    assert.equal((await (await t.req('/control/v1/states')).json()).states, 0);
  });
});
