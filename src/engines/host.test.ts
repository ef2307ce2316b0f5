import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createFakeEngine } from './fake/fake-engine.ts';
import { createEngineHost, HEAVY_COUNT_CHARS } from './host.ts';
import type { DecisionRequest } from './request.ts';

describe('engine host: token counting', () => {
  /** A fake engine whose counts take 20 ms and record how many run at once. */
  function countingEngine() {
    const engine = createFakeEngine();
    const seen = { running: 0, most: 0, order: [] as string[] };
    return {
      seen,
      engine: {
        ...engine,
        async countTokens(request: DecisionRequest) {
          seen.running++;
          seen.most = Math.max(seen.most, seen.running);
          await new Promise((resolve) => setTimeout(resolve, 20));
          seen.running--;
          seen.order.push(request.state.text.length > HEAVY_COUNT_CHARS ? 'long' : 'short');
          return engine.countTokens(request);
        },
      },
    };
  }
  const ask = (text: string): DecisionRequest => ({
    state: { text, json: undefined },
    questions: [
      {
        type: 'noul',
        instructions: null,
        options: [
          { label: 'false', description: null },
          { label: 'true', description: null },
        ],
      },
    ],
  });
  const options = { queueLimit: 64, timeoutMs: 10_000 };

  test('long requests are counted one at a time; a short one is counted at once, not after them', async () => {
    const { engine, seen } = countingEngine();
    await engine.load();
    const host = createEngineHost({ ...engine, parallelism: 4 }, options);
    const long = 'word '.repeat(HEAVY_COUNT_CHARS / 4);
    const longs = Array.from({ length: 6 }, (_, i) => host.answer(ask(`${i} ${long}`), ['q']));
    const short = await host.answer(ask('where is my parcel?'), ['q']);
    assert.equal(short.probabilities.length, 1);
    assert.notEqual(seen.order.at(-1), 'long', 'the short request waited for every long count');
    await Promise.all(longs);
    // The short count ran beside the one long count in progress: never more than two at once.
    assert.ok(seen.most <= 2, `${seen.most} counts ran at once`);
    assert.deepEqual(
      seen.order.filter((o) => o === 'long'),
      Array(6).fill('long'),
    );
  });

  test('without a counting queue, counts run inline (all at once)', async () => {
    const { engine, seen } = countingEngine();
    await engine.load();
    const host = createEngineHost({ ...engine, parallelism: 4 }, { ...options, countingQueue: false });
    const long = 'word '.repeat(HEAVY_COUNT_CHARS / 4);
    await Promise.all(Array.from({ length: 3 }, (_, i) => host.answer(ask(`${i} ${long}`), ['q'])));
    assert.equal(seen.most, 3);
  });

  test('a request the queue refuses is refused before its tokens are counted', async () => {
    const { engine, seen } = countingEngine();
    await engine.load();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = {
      ...engine,
      async answer(request: DecisionRequest, signal: AbortSignal) {
        await gate;
        return engine.answer(request, signal);
      },
    };
    const host = createEngineHost(slow, { ...options, queueLimit: 2 });
    const held = [host.answer(ask('first'), ['q']), host.answer(ask('second'), ['q'])];
    await new Promise((resolve) => setTimeout(resolve, 60));
    const counted = seen.order.length;
    await assert.rejects(host.answer(ask('third'), ['q']), (e: { code?: string }) => e.code === 'OVERLOADED');
    assert.equal(seen.order.length, counted, 'the refused request was counted');
    release();
    await Promise.all(held);
  });

  test('a model still loading is refused with NOT_READY and retry-after', async () => {
    const host = createEngineHost(createFakeEngine(), options);
    await assert.rejects(host.answer(ask('s'), ['q']), (e: Error & { code?: string; retryAfter?: number }) => {
      assert.equal(e.code, 'NOT_READY');
      assert.equal(e.retryAfter, 2);
      return true;
    });
  });
});
