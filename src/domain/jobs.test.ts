import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sharedDatabase } from '../../test/fixtures/teach.ts';
import { databases, notePostgresSkip } from '../../test/harness.ts';
import type { Db } from '../db/open.ts';
import { createAccountService } from './accounts.ts';
import { createJobQueue, MAX_JOB_ATTEMPTS } from './jobs.ts';

for (const kind of databases()) {
  describe(`training job queue (${kind})`, () => {
    let shared: Awaited<ReturnType<typeof sharedDatabase>>;
    let a: Db & { drop(): Promise<void> };
    let b: Db & { drop(): Promise<void> };
    before(async () => {
      notePostgresSkip();
      shared = await sharedDatabase(kind);
      a = await shared.open();
      b = await shared.open();
    });
    after(async () => {
      await a.drop();
      await b.drop();
      await shared.drop();
    });

    const account = async (db: Db) => (await createAccountService(db).ensure(`j${Math.random()}@example.com`)).id;

    test('two processes claiming at once: each job goes to exactly one of them', async () => {
      const qa = createJobQueue(a);
      const qb = createJobQueue(b);
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push((await qa.enqueue(await account(a), null)).id);
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? qa : qb).claim(`owner-${i % 2}`, 60_000)),
      );
      const got = claims.filter((j) => j !== undefined).map((j) => j.id);
      assert.equal(got.length, 6, 'every job claimed');
      assert.equal(new Set(got).size, 6, 'none twice');
      assert.deepEqual([...got].sort(), [...ids].sort());
    });

    test('a lapsed lease is taken over; the old owner can no longer write; three lapses fail the job', async () => {
      let clock = 1_000_000;
      const qa = createJobQueue(a, { now: () => clock });
      const qb = createJobQueue(b, { now: () => clock });
      // Earlier jobs of this file are claimed for good.
      while (await qa.claim('drain', 10 ** 12));
      const user = await account(a);
      const job = await qa.enqueue(user, ['tpl_x']);
      const first = await qa.claim('A', 1000);
      assert.equal(first?.id, job.id);
      assert.equal(first?.attempts, 1);
      assert.equal(await qb.claim('B', 1000), undefined, 'held while the lease runs');
      clock += 1001;
      const second = await qb.claim('B', 1000);
      assert.equal(second?.id, job.id, 'taken over after the lease lapsed (its process died)');
      assert.equal(second?.attempts, 2);
      assert.equal(await qa.heartbeat(job.id, 'A', 1000), false);
      assert.equal(await qa.finish(job.id, 'A', { status: 'succeeded', message: 'late' }), false);
      assert.equal(await qb.heartbeat(job.id, 'B', 1000, { progress: 0.5, stage: 'fitting', message: 'half' }), true);
      assert.equal((await qb.get(user, job.id))?.progress, 0.5);
      clock += 1001;
      assert.equal((await qa.claim('C', 1000))?.attempts, MAX_JOB_ATTEMPTS);
      clock += 1001;
      assert.equal(await qa.claim('D', 1000), undefined);
      const failed = await qa.get(user, job.id);
      assert.equal(failed?.status, 'failed');
      assert.match(failed?.message ?? '', /stopped 3 times/);
    });

    test('a job handed back by a stopping server is queued again without counting the attempt', async () => {
      const q = createJobQueue(a);
      while (await q.claim('drain', 10 ** 12));
      const user = await account(a);
      const job = await q.enqueue(user, null);
      await q.claim('A', 60_000);
      await q.release(job.id, 'A');
      const again = await q.get(user, job.id);
      assert.equal(again?.status, 'queued');
      assert.equal(again?.attempts, 0);
      const next = await createJobQueue(b).claim('B', 60_000);
      assert.equal(next?.id, job.id);
      assert.equal(await q.finish(job.id, 'B', { status: 'succeeded', message: 'done' }), true);
      assert.equal((await q.get(user, job.id))?.status, 'succeeded');
      assert.equal(await q.get('someone-else', job.id), undefined, "another account's job is not found");
    });
  });
}
