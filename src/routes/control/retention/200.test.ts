import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, databaseText, REFUND } from '../../../../test/fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, signedInClient, type TestApp } from '../../../../test/harness.ts';

for (const kind of databases()) {
  describe(`/control/v1/retention: opt-in retention of request content (${kind})`, () => {
    let t: TestApp;
    before(async () => {
      notePostgresSkip();
      t = await makeTestApp({ db: kind });
    });
    after(() => t.close());

    test('off by default: nothing of a request is kept anywhere in the database', async () => {
      const client = await signedInClient(t);
      const policy = await (await client.request('/control/v1/retention')).json();
      assert.deepEqual(policy, { account_days: null, keys: [], max_days: 90, retained: 0 });
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'app' } })).json();
      const marker = `marker-${Math.random().toString(36).slice(2)}`;
      const { res } = await ask(t, key, `My parcel ${marker} never arrived`, {
        q: { ...REFUND, instructions: `Refund ${marker}?` },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-brier-retained-days'), null);
      await t.usage.flush();
      assert.ok(!(await databaseText(t)).includes(marker), 'the state and the question are nowhere in the database');
    });

    test('on for the account: each request is kept for the period and the response says so', async () => {
      const client = await signedInClient(t);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'app' } })).json();
      const set = await client.request('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
      assert.equal(set.status, 200);
      assert.equal((await set.json()).account_days, 7);
      const { res, requestId } = await ask(t, key, 'kept state', { q: REFUND });
      assert.equal(res.headers.get('x-brier-retained-days'), '7');
      const row = await t.db.kysely
        .selectFrom('retained_request')
        .selectAll()
        .where('request_id', '=', requestId)
        .executeTakeFirstOrThrow();
      assert.equal(row.state, '"kept state"');
      assert.equal(Number(row.expires_at) - Number(row.created_at), 7 * 86_400_000);
      assert.equal((await (await client.request('/control/v1/retention')).json()).retained, 1);
    });

    test('per key: only the opted-in key keeps; revoking it deletes what it kept', async () => {
      const client = await signedInClient(t);
      const a = await (await client.request('/control/v1/keys', { body: { name: 'a' } })).json();
      const b = await (await client.request('/control/v1/keys', { body: { name: 'b' } })).json();
      const put = await client.request('/control/v1/retention', { method: 'PUT', body: { days: 30, key_id: a.id } });
      assert.deepEqual((await put.json()).keys, [{ key_id: a.id, days: 30 }]);
      const kept = await ask(t, a.key, 'from a', { q: REFUND });
      const notKept = await ask(t, b.key, 'from b', { q: REFUND });
      assert.equal(kept.res.headers.get('x-brier-retained-days'), '30');
      assert.equal(notKept.res.headers.get('x-brier-retained-days'), null);
      const rows = () =>
        t.db.kysely.selectFrom('retained_request').select('key_id').where('user_id', '=', client.userId).execute();
      assert.deepEqual(
        (await rows()).map((r) => r.key_id),
        [a.id],
      );
      assert.equal((await client.request(`/control/v1/keys/${a.id}`, { method: 'DELETE' })).status, 204);
      assert.deepEqual(await rows(), [], 'deleted with the key');
      const after = await (await client.request('/control/v1/retention')).json();
      assert.deepEqual(after.keys, [], "the key's policy went with it");
    });

    test('turning it off deletes what was kept; deleting the account deletes everything', async () => {
      const client = await signedInClient(t);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'app' } })).json();
      await client.request('/control/v1/retention', { method: 'PUT', body: { days: 3 } });
      await ask(t, key, 'one', { q: REFUND });
      const count = async () =>
        (
          await t.db.kysely
            .selectFrom('retained_request')
            .select('request_id')
            .where('user_id', '=', client.userId)
            .execute()
        ).length;
      assert.equal(await count(), 1);
      const off = await client.request('/control/v1/retention', { method: 'PUT', body: { days: 0 } });
      assert.equal((await off.json()).account_days, null);
      assert.equal(await count(), 0);
      await client.request('/control/v1/retention', { method: 'PUT', body: { days: 3 } });
      await ask(t, key, 'two', { q: REFUND });
      assert.equal(await count(), 1);
      assert.equal((await client.request('/control/v1/account', { method: 'DELETE' })).status, 200);
      assert.equal(await count(), 0);
      const policies = await t.db.kysely
        .selectFrom('retention_policy')
        .selectAll()
        .where('user_id', '=', client.userId)
        .execute();
      assert.deepEqual(policies, []);
    });

    test("a bearer key may set only its own retention; another account's key is a 404; days are bounded", async () => {
      const client = await signedInClient(t);
      const mine = await (await client.request('/control/v1/keys', { body: { name: 'mine' } })).json();
      const own = await t.req('/control/v1/retention', {
        method: 'PUT',
        body: { days: 2 },
        headers: { authorization: `Bearer ${mine.key}` },
      });
      assert.equal(own.status, 200);
      assert.deepEqual((await own.json()).keys, [{ key_id: mine.id, days: 2 }]);
      const other = await t.req('/control/v1/retention', {
        method: 'PUT',
        body: { days: 2, key_id: 'key_someone_else' },
        headers: { authorization: `Bearer ${mine.key}` },
      });
      assert.equal(other.status, 403);
      const foreign = await client.request('/control/v1/retention', {
        method: 'PUT',
        body: { days: 2, key_id: t.keyId },
      });
      assert.equal(foreign.status, 404);
      assert.match((await foreign.json()).message, /key_id: no active API key/);
      const long = await client.request('/control/v1/retention', { method: 'PUT', body: { days: 91 } });
      assert.equal(long.status, 422);
      assert.match((await long.json()).message, /at most 90 days/);
    });
  });
}
