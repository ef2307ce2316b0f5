import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../../../../test/harness.ts';

notePostgresSkip();
const body = { state: 's', questions: { q: { type: 'noul' } } };

for (const db of databases()) {
  describe(`POST /v1/systemone 401/403 (${db})`, () => {
    let t: TestApp;
    before(async () => {
      t = await makeTestApp({ db });
    });
    after(() => t.close());

    test('no Authorization header is 403 authentication_error', async () => {
      const res = await t.req('/v1/systemone', { body, headers: { authorization: '' } });
      assert.equal(res.status, 403);
      const json = await res.json();
      assert.equal(json.detail.error_type, 'authentication_error');
      assert.match(json.message, /missing Authorization header/);
      assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_[0-9a-f]{32}$/);
    });

    test('an unknown key is 401 authentication_error', async () => {
      for (const key of ['brier_sk_nope', 'sk-something-else']) {
        const res = await t.req('/v1/systemone', { body, headers: { authorization: `Bearer ${key}` } });
        assert.equal(res.status, 401);
        assert.equal((await res.json()).detail.error_type, 'authentication_error');
      }
    });

    test('a revoked key stops working at once', async () => {
      const created = await t.keys.create(t.account.id, 'to revoke');
      const auth = { authorization: `Bearer ${created.key}` };
      assert.equal((await t.req('/v1/systemone', { body, headers: auth })).status, 200);
      assert.equal(await t.keys.revoke(t.account.id, created.id), true);
      assert.equal((await t.req('/v1/systemone', { body, headers: auth })).status, 401);
      assert.equal((await t.req('/v1/models', { headers: auth })).status, 401);
    });

    test('keys are stored only as hashes', async () => {
      const rows = await t.db.kysely.selectFrom('api_key').selectAll().execute();
      for (const row of rows) {
        assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v === t.key));
        assert.ok(!t.key.includes(row.hash));
      }
      const own = rows.find((r) => r.id === t.keyId);
      assert.ok(own && t.key.startsWith(own.prefix) && own.prefix.length < 20);
    });
  });
}
