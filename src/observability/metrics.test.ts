import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMetrics } from './metrics.ts';

/** The value of one sample line `name{labels} value` (labels in prom-client's order), or 0. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('the engine hook', () => {
  test('counts cache hits and misses, batch sizes and tokens per second', async () => {
    const m = createMetrics({ processMetrics: false });
    m.engine.cacheLookup('embedding', true, 3);
    m.engine.cacheLookup('embedding', false);
    m.engine.batch('embedded', 'texts', 5);
    m.engine.tokens('gguf', 'prefill', 300, 0.5);
    const text = await m.registry.metrics();
    assert.equal(sample(text, 'brier_cache_lookups_total', 'cache="embedding",result="hit"'), 3);
    assert.equal(sample(text, 'brier_cache_lookups_total', 'cache="embedding",result="miss"'), 1);
    assert.equal(sample(text, 'brier_engine_batch_size_count', 'engine="embedded",kind="texts"'), 1);
    assert.equal(sample(text, 'brier_engine_tokens_per_second', 'engine="gguf",phase="prefill"'), 600);
  });
});
