import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/keys 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("lists the account's own active keys, oldest first, by prefix and never in full", async () => {
    const client = await signedInClient(t);
    const other = await signedInClient(t);
    assert.deepEqual(await (await client.request('/control/v1/keys')).json(), { data: [] });
    const a = await (await client.request('/control/v1/keys', { body: { name: 'a' } })).json();
    const b = await (await client.request('/control/v1/keys', { body: { name: 'b' } })).json();
    await other.request('/control/v1/keys', { body: { name: 'not mine' } });
    const res = await client.request('/control/v1/keys');
    assert.equal(res.status, 200);
    const { data } = await res.json();
    assert.deepEqual(
      data.map((k: { id: string }) => k.id),
      [a.id, b.id],
    );
    for (const k of data) assert.equal(k.key, undefined, 'the key itself is shown only once');
    assert.ok(!JSON.stringify(data).includes(a.key));
  });
});
