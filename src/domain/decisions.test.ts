import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createFakeEngine } from '../engines/fake/fake-engine.ts';
import { createScheduler } from '../engines/scheduler.ts';
import { createDecisionService, HEAVY_COUNT_CHARS } from './decisions.ts';
import type { DecisionRequest } from './questions.ts';

describe('decision service: token counting', () => {
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
  const ask = (state: string) => ({ state, questions: { q: { type: 'noul' as const } } });

  test('long requests are counted one at a time; a short one is counted at once, not after them', async () => {
    const { engine, seen } = countingEngine();
    await engine.load();
    const scheduler = createScheduler({ limit: 64, timeoutMs: 10_000, concurrency: 4 });
    const counting = createScheduler({ limit: 64, timeoutMs: 10_000, concurrency: 1 });
    const service = createDecisionService(engine, scheduler, counting);
    const long = 'word '.repeat(HEAVY_COUNT_CHARS / 4);
    const longs = Array.from({ length: 6 }, (_, i) => service.decide(ask(`${i} ${long}`)));
    const short = await service.decide(ask('where is my parcel?'));
    assert.ok(short.answers.q);
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
    const service = createDecisionService(engine, createScheduler({ limit: 64, timeoutMs: 10_000, concurrency: 4 }));
    const long = 'word '.repeat(HEAVY_COUNT_CHARS / 4);
    await Promise.all(Array.from({ length: 3 }, (_, i) => service.decide(ask(`${i} ${long}`))));
    assert.equal(seen.most, 3);
  });
});
