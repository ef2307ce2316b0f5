import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, row, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('DELETE /control/v1/examples/{id} 204 and 404', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("deletes a template's examples; another account's template is a 404 and stays", async () => {
    const created = await (await upload(t, jsonl([row('x', { q: REFUND }, { q: true })]))).json();
    const id = created.templates[0].id;
    const other = await signedInClient(t);
    const foreign = await other.request(`/control/v1/examples/${id}`, { method: 'DELETE' });
    assert.equal(foreign.status, 404);
    assert.equal(
      (await (await other.request('/control/v1/examples')).json()).total,
      0,
      'not listed to another account',
    );
    assert.equal((await (await t.req('/control/v1/examples')).json()).total, 1);
    const res = await t.req(`/control/v1/examples/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal((await (await t.req('/control/v1/examples')).json()).total, 0);
    assert.equal((await t.req(`/control/v1/examples/${id}`, { method: 'DELETE' })).status, 404);
  });
});
