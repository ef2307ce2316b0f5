import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { storedAdapter } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('/control/v1/adapters 404', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("another account's adapter is not found, listed or deletable, and stays", async () => {
    const id = await storedAdapter(t, t.account.id);
    const other = await signedInClient(t);
    const path = `/control/v1/adapters/${encodeURIComponent(id)}`;
    assert.equal((await other.request(path)).status, 404);
    assert.equal((await other.request(path, { method: 'DELETE' })).status, 404);
    assert.deepEqual((await (await other.request('/control/v1/adapters')).json()).data, []);
    assert.equal((await t.req(path)).status, 200);
  });
});
