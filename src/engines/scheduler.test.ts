import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createScheduler } from './scheduler.ts';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

describe('scheduler', () => {
  test('runs one at a time in arrival order', async () => {
    const s = createScheduler({ limit: 10, timeoutMs: 5000 });
    const order: number[] = [];
    let concurrent = 0;
    let peak = 0;
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        s.run(async () => {
          concurrent++;
          peak = Math.max(peak, concurrent);
          await sleep(5);
          order.push(i);
          concurrent--;
        }),
      ),
    );
    assert.deepEqual(order, [0, 1, 2, 3]);
    assert.equal(peak, 1);
  });

  test('refuses past the limit with OVERLOADED and a retry-after', async () => {
    const s = createScheduler({ limit: 2, timeoutMs: 5000 });
    const a = s.run(() => sleep(30));
    const b = s.run(() => sleep(30));
    await assert.rejects(
      s.run(() => sleep(1)),
      (e: { code?: string; retryAfter?: number }) => e.code === 'OVERLOADED' && (e.retryAfter ?? 0) >= 1,
    );
    await Promise.all([a, b]);
    await s.run(() => sleep(1));
  });

  test('a client that goes away while waiting frees its place and never runs', async () => {
    const s = createScheduler({ limit: 3, timeoutMs: 5000 });
    const first = s.run(() => sleep(50));
    const client = new AbortController();
    let ran = false;
    const waiting = s.run(async () => {
      ran = true;
    }, client.signal);
    assert.equal(s.depth(), 1);
    client.abort();
    await assert.rejects(waiting, (e: { code?: string }) => e.code === 'CANCELLED');
    assert.equal(s.depth(), 0);
    await first;
    assert.equal(ran, false);
  });

  test('a running task sees the abort when its deadline passes', async () => {
    const s = createScheduler({ limit: 3, timeoutMs: 30 });
    let sawAbort = false;
    await assert.rejects(
      s.run(async (signal) => {
        await sleep(1000, signal).catch((e) => {
          sawAbort = signal.aborted;
          throw e;
        });
      }),
      (e: { code?: string }) => e.code === 'TIMEOUT',
    );
    assert.equal(sawAbort, true);
    assert.equal(s.running(), 0);
  });

  test('refuses a request that would wait past its deadline, before the queue limit', async () => {
    // Service time ~200 ms and a 300 ms deadline: the first runs, a second would finish at ~400 ms.
    const s = createScheduler({ limit: 10, timeoutMs: 300, initialServiceMs: 200 });
    const first = s.run(() => sleep(50));
    await assert.rejects(
      s.run(() => sleep(1)),
      (e: { code?: string; retryAfter?: number; message?: string }) =>
        e.code === 'OVERLOADED' &&
        (e.retryAfter ?? 0) >= 1 &&
        /busy: 1 request is ahead, .*300 ms request deadline/.test(e.message ?? ''),
    );
    await first;
  });

  test('admits a request that can start at once even when the average is past the deadline', async () => {
    const s = createScheduler({ limit: 10, timeoutMs: 100, initialServiceMs: 10_000 });
    assert.equal(await s.run(async () => 'ran'), 'ran');
    // The average learns from measured service times and admits waiting requests again.
    for (let i = 0; i < 40; i++) await s.run(() => sleep(1));
    assert.ok(s.serviceMs() < 50, `average ${s.serviceMs()} ms`);
    await Promise.all([s.run(() => sleep(5)), s.run(() => sleep(5))]);
  });
});
