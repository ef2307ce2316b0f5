import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databases, freshDb, notePostgresSkip } from '../../test/harness.ts';
import type { Db } from '../db/open.ts';
import { createAccountService } from './accounts.ts';
import { createKeyService } from './keys.ts';
import { createRetention } from './retention.ts';

const DAY = 86_400_000;

for (const kind of databases()) {
  describe(`retention periods (${kind})`, () => {
    let db: Db & { drop(): Promise<void> };
    before(async () => {
      notePostgresSkip();
      db = await freshDb(kind);
    });
    after(() => db.drop());

    test('a retained request is found until its period ends, then swept; a shorter period trims at once', async () => {
      let clock = 1_000_000_000_000;
      const retention = createRetention(db, { now: () => clock, cacheTtlMs: 1 });
      const user = await createAccountService(db).ensure('period@example.com');
      const key = await createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 0 }).create(user.id, 'k');
      await retention.set(user.id, 'account', 10);
      assert.equal(await retention.daysFor(user.id, key.id), 10);
      const keep = (id: string) =>
        retention.keep(
          user.id,
          { requestId: id, keyId: key.id, model: 'm', state: '"s"', questions: '{}', answers: '{}' },
          10,
        );
      await keep('req_old');
      clock += 6 * DAY;
      await keep('req_new');
      clock += 5 * DAY;
      assert.equal(await retention.find(user.id, 'req_old'), undefined, 'past its 10 days');
      assert.ok(await retention.find(user.id, 'req_new'));
      assert.equal(await retention.sweep(), 1);
      // Shortening to 3 days deletes what is older and brings the rest's expiry in.
      await retention.set(user.id, 'account', 3);
      assert.equal(await retention.find(user.id, 'req_new'), undefined);
      assert.equal(await retention.count(user.id), 0);
      assert.equal(await retention.find('someone-else', 'req_new'), undefined);
    });

    test('revoking retention tells the job queue, in the deleting transaction, when retained requests go', async () => {
      const told: string[] = [];
      const retention = createRetention(db, {
        cacheTtlMs: 1,
        onRetainedDeleted: async (tx, userId, why) => {
          // Inside the transaction: the requests are still there.
          const left = await tx
            .selectFrom('retained_request')
            .select('request_id')
            .where('user_id', '=', userId)
            .execute();
          told.push(`${why} (${left.length} left)`);
        },
      });
      const user = await createAccountService(db).ensure('revoke@example.com');
      const keys = createKeyService(db, { maxKeysPerAccount: 3, cacheTtlMs: 0 });
      const key = await keys.create(user.id, 'k');
      const idle = await keys.create(user.id, 'idle');
      await retention.set(user.id, 'account', 10);
      await retention.keep(
        user.id,
        { requestId: 'req_1', keyId: key.id, model: 'm', state: '"s"', questions: '{}', answers: '{}' },
        10,
      );
      await retention.forgetKey(user.id, idle.id);
      assert.deepEqual(told, [], 'a key with nothing retained deletes nothing');
      await retention.set(user.id, 'account', null);
      assert.deepEqual(told, ['retained requests it read were deleted (retention was turned off) (1 left)']);
      assert.equal(await retention.count(user.id), 0);
    });
  });
}
