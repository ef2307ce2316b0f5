import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databases, freshDb, notePostgresSkip } from '../../test/harness.ts';
import { createUsageRecorder, type UsageEvent } from './usage.ts';

notePostgresSkip();

const event = (i: number): UsageEvent => ({
  keyId: 'key_x',
  userId: 'user_x',
  ts: 1_700_000_000_000 + i,
  route: '/v1/systemone',
  model: 'm',
  status: 200,
  questions: 1,
  inputTokens: 10,
  outputTokens: 2,
  latencyMs: 3,
});

for (const kind of databases()) {
  describe(`usage recorder (${kind})`, () => {
    let db: Awaited<ReturnType<typeof freshDb>>;
    before(async () => {
      db = await freshDb(kind);
    });
    after(() => db.drop());

    test('records in memory and writes everything on close', async () => {
      const usage = createUsageRecorder(db, { flushMs: 60_000 });
      for (let i = 0; i < 1234; i++) usage.record(event(i));
      await usage.close();
      const { n } = await db.kysely
        .selectFrom('usage_event')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(n), 1234);
    });

    test('a failed write keeps the events for the next flush', async () => {
      let failures = 0;
      const broken = {
        ...db,
        kysely: {
          transaction: () => ({
            execute: async () => {
              throw new Error('db down');
            },
          }),
        },
      } as unknown as typeof db;
      const usage = createUsageRecorder(broken, {
        flushMs: 60_000,
        onError: () => {
          failures++;
        },
      });
      usage.record(event(1));
      usage.record(event(2));
      await usage.flush();
      assert.equal(failures, 1);
      assert.equal(usage.pendingCount(), 2);
    });
  });
}
