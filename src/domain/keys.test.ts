import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databases, freshDb, notePostgresSkip } from '../../test/harness.ts';
import { createAccountService } from './accounts.ts';
import { createKeyService, hashKey, KEY_PREFIX } from './keys.ts';

notePostgresSkip();

for (const kind of databases()) {
  describe(`key service (${kind})`, () => {
    let db: Awaited<ReturnType<typeof freshDb>>;
    before(async () => {
      db = await freshDb(kind);
    });
    after(() => db.drop());

    test('10 concurrent creates yield exactly 3 keys', async () => {
      const { id } = await createAccountService(db).ensure('race@example.com');
      const keys = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 1000 });
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => keys.create(id, `k${i}`)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
      for (const r of results.filter((r) => r.status === 'rejected')) {
        assert.equal((r as PromiseRejectedResult).reason.code, 'KEY_LIMIT');
      }
      assert.equal((await keys.list(id)).length, 3);
    });

    test('keys look like brier_sk_..., verify by hash, and revocation frees a slot', async () => {
      const { id } = await createAccountService(db).ensure('life@example.com');
      const keys = createKeyService(db, { maxKeysPerAccount: 1, cacheTtlMs: 1000 });
      const k = await keys.create(id, 'only');
      assert.ok(k.key.startsWith(KEY_PREFIX) && k.key.length >= 50);
      assert.deepEqual(await keys.verify(k.key), { keyId: k.id, userId: id });
      assert.equal(await keys.verify(`${k.key}x`), null);
      await assert.rejects(keys.create(id, 'second'), /limit/);
      assert.equal(await keys.revoke(id, k.id), true);
      assert.equal(await keys.verify(k.key), null);
      assert.equal(await keys.revoke(id, k.id), false);
      await keys.create(id, 'second');
      const stored = await db.kysely
        .selectFrom('api_key')
        .select(['hash'])
        .where('id', '=', k.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.hash, hashKey(k.key));
    });

    test('revocation by another process is seen within the cache TTL (one second)', async () => {
      const { id } = await createAccountService(db).ensure('ttl@example.com');
      const a = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 200 });
      const b = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 200 });
      const k = await a.create(id, 'shared');
      assert.ok(await b.verify(k.key));
      await a.revoke(id, k.id);
      await new Promise((r) => setTimeout(r, 250));
      assert.equal(await b.verify(k.key), null);
    });

    test('a key of another account cannot be revoked', async () => {
      const accounts = createAccountService(db);
      const owner = await accounts.ensure('owner@example.com');
      const other = await accounts.ensure('other@example.com');
      const keys = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 0 });
      const k = await keys.create(owner.id, 'mine');
      assert.equal(await keys.revoke(other.id, k.id), false);
      assert.ok(await keys.verify(k.key));
    });

    test('keys of an account that has not verified its email are refused with EMAIL_NOT_VERIFIED', async () => {
      const { id } = await createAccountService(db).ensure('unverified@example.com');
      await db.kysely.updateTable('user').set({ emailVerified: false }).where('id', '=', id).execute();
      const keys = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 0 });
      const k = await keys.create(id, 'early');
      await assert.rejects(keys.verify(k.key), (e: { code?: string }) => e.code === 'EMAIL_NOT_VERIFIED');
      await db.kysely.updateTable('user').set({ emailVerified: true }).where('id', '=', id).execute();
      await new Promise((r) => setTimeout(r, 20)); // past the (1 ms) cache TTL
      assert.deepEqual(await keys.verify(k.key), { keyId: k.id, userId: id });
    });
  });
}
