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

    const count = async () =>
      Number(
        (
          await db.kysely
            .selectFrom('usage_event')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('key_id', '=', 'key_once')
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('exactly once: a batch whose commit landed but whose answer was lost is retried without doubling', async () => {
      let lost = 0;
      // The first write commits, then fails as a connection lost before the answer would.
      const flaky = {
        ...db,
        kysely: {
          transaction: () => ({
            execute: async (fn: Parameters<ReturnType<typeof db.kysely.transaction>['execute']>[0]) => {
              await db.kysely.transaction().execute(fn);
              if (lost++ === 0) throw new Error('Connection terminated unexpectedly');
            },
          }),
        },
      } as unknown as typeof db;
      const usage = createUsageRecorder(flaky, { flushMs: 60_000 });
      for (let i = 0; i < 25; i++) usage.record({ ...event(i), keyId: 'key_once' });
      await usage.flush();
      assert.equal(usage.pendingCount(), 25, 'the failed write keeps its events');
      await usage.flush();
      assert.equal(usage.pendingCount(), 0);
      assert.equal(await count(), 25);
    });

    test('past BRIER_USAGE_BUFFER_MAX events wait in memory, new ones are dropped and counted', async () => {
      let down = true;
      const outage = {
        ...db,
        kysely: {
          transaction: () => ({
            execute: async (fn: Parameters<ReturnType<typeof db.kysely.transaction>['execute']>[0]) => {
              if (down) throw new Error('connect ECONNREFUSED');
              await db.kysely.transaction().execute(fn);
            },
          }),
        },
      } as unknown as typeof db;
      const usage = createUsageRecorder(outage, { flushMs: 60_000, maxPending: 100 });
      for (let i = 0; i < 150; i++) usage.record({ ...event(i), keyId: 'key_bound' });
      await usage.flush();
      assert.equal(usage.pendingCount(), 100);
      assert.equal(usage.dropped(), 50);
      down = false;
      await usage.close();
      const { n } = await db.kysely
        .selectFrom('usage_event')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('key_id', '=', 'key_bound')
        .executeTakeFirstOrThrow();
      assert.equal(Number(n), 100, 'what was buffered is written once the database is back');
    });
  });
}
