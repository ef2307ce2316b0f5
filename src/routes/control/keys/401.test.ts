import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../../../../test/harness.ts';

notePostgresSkip();

for (const db of databases()) {
  describe(`/control/v1/keys and /control/v1/usage without a session (${db})`, () => {
    let t: TestApp;
    before(async () => {
      t = await makeTestApp({ db });
    });
    after(() => t.close());

    test('no cookie, or a forged one, is 401 authentication_error; an API key is no session', async () => {
      const variants: Record<string, string>[] = [
        { authorization: '' },
        { authorization: '', cookie: 'brier.session_token=forged.value', origin: 'http://127.0.0.1' },
        { authorization: `Bearer ${t.key}` },
      ];
      for (const headers of variants) {
        const list = await t.req('/control/v1/keys', { headers });
        assert.equal(list.status, 401);
        const body = await list.json();
        assert.equal(body.detail.error_type, 'authentication_error');
        assert.match(body.message, /sign in/);
        assert.equal((await t.req('/control/v1/keys', { body: { name: 'x' }, headers })).status, 401);
      }
    });

    test('usage: no credentials is 401; a bearer key gets its own usage', async () => {
      const none = await t.req('/control/v1/usage', { headers: { authorization: '' } });
      assert.equal(none.status, 401);
      const bad = await t.req('/control/v1/usage', { headers: { authorization: 'Bearer brier_sk_nope' } });
      assert.equal(bad.status, 401);
      const own = await t.req('/control/v1/usage?days=1');
      assert.equal(own.status, 200);
      const report = await own.json();
      assert.equal(report.daily.length, 1);
      assert.deepEqual(
        report.keys.map((k: { id: string }) => k.id),
        [t.keyId],
      );
    });
  });
}
