import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getMigrations } from 'better-auth/db/migration';
import { databases, freshDb, notePostgresSkip } from '../../test/harness.ts';
import { createLogMailer } from '../mail/log.ts';
import { createLogger } from '../observability/logger.ts';
import { createAuth } from './create-auth.ts';

notePostgresSkip();

for (const kind of databases()) {
  describe(`better-auth schema (${kind})`, () => {
    let db: Awaited<ReturnType<typeof freshDb>>;
    before(async () => {
      db = await freshDb(kind);
    });
    after(() => db.drop());

    test('our migrations leave better-auth nothing to create or add', async () => {
      const logger = createLogger('silent');
      const auth = createAuth({
        db,
        secret: 'schema-test-secret-schema-test-secret-01',
        publicUrl: 'http://127.0.0.1',
        trustedOrigins: [],
        mailer: createLogMailer(logger),
        logger,
        oidc: { issuer: 'http://127.0.0.1:9', clientId: 'id', clientSecret: 'secret', name: 'IdP' },
      });
      const pending = await getMigrations(auth.options);
      assert.deepEqual(
        pending.toBeCreated.map((t) => t.table),
        [],
      );
      assert.deepEqual(
        pending.toBeAdded.map((t) => t.table),
        [],
      );
      assert.deepEqual(pending.toBeAddedIndexes, []);
    });
  });
}
