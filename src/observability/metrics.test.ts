import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../test/harness.ts';
import { createMetrics } from './metrics.ts';

/** The value of one sample line `name{labels} value` (labels in prom-client's order), or 0. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const QUESTIONS = {
  a: { type: 'noul', instructions: 'Is it late?' },
  b: { type: 'choice', instructions: 'Which team?', criteria: { billing: null, tech: null } },
  c: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'high'] },
};

describe('GET /metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const scrape = async () => {
    const res = await t.req('/metrics', { headers: { authorization: '' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    return res.text();
  };

  test('is served without credentials and counts requests by route pattern, method and status', async () => {
    const before = await scrape();
    const models = 'route="/v1/models",method="GET",status="200"';
    const n0 = sample(before, 'brier_http_requests_total', models);
    assert.equal((await t.req('/v1/models')).status, 200);
    assert.equal((await t.req('/v1/models')).status, 200);
    assert.equal((await t.req('/v1/models', { headers: { authorization: 'Bearer brier_sk_nope' } })).status, 401);
    const text = await scrape();
    assert.equal(sample(text, 'brier_http_requests_total', models) - n0, 2);
    assert.equal(sample(text, 'brier_http_requests_total', 'route="/v1/models",method="GET",status="401"'), 1);
    assert.ok(sample(text, 'brier_http_request_duration_seconds_count', models) >= 2);
  });

  test('labels use the pattern, never the raw URL; unknown paths are "unmatched"', async () => {
    assert.equal((await t.req('/control/v1/keys/abc123', { method: 'DELETE' })).status, 401);
    assert.equal((await t.req('/no/such/path/42')).status, 404);
    const text = await scrape();
    assert.ok(text.includes('route="/control/v1/keys/:id",method="DELETE",status="401"'), 'pattern label');
    assert.ok(!text.includes('abc123'), 'raw id in a label');
    assert.ok(!text.includes('/no/such/path'), 'raw path in a label');
    assert.ok(sample(text, 'brier_http_requests_total', 'route="unmatched",method="GET",status="404"') >= 1);
  });

  test('counts tokens, questions per request and shows the queue gauges', async () => {
    const before = await scrape();
    const res = await t.req('/v1/systemone', { body: { state: 'my parcel is late', questions: QUESTIONS } });
    assert.equal(res.status, 200);
    const body = await res.json();
    const text = await scrape();
    assert.equal(
      sample(text, 'brier_input_tokens_total') - sample(before, 'brier_input_tokens_total'),
      body.usage.input_tokens,
    );
    assert.equal(
      sample(text, 'brier_output_tokens_total') - sample(before, 'brier_output_tokens_total'),
      body.usage.output_tokens,
    );
    assert.equal(sample(text, 'brier_questions_per_request_bucket', 'le="3"'), 1);
    assert.equal(sample(text, 'brier_questions_per_request_bucket', 'le="2"'), 0);
    assert.equal(sample(text, 'brier_queue_depth'), 0);
    assert.equal(sample(text, 'brier_queue_running'), 0);
    assert.ok(text.includes('route="/v1/systemone",method="POST",status="200"'));
  });
});

describe('GET /metrics with BRIER_METRICS_TOKEN or BRIER_METRICS=off', () => {
  test('a token makes it need that bearer', async () => {
    const t = await makeTestApp({ metricsToken: 'metrics-token-0123456789' });
    try {
      assert.equal((await t.req('/metrics', { headers: { authorization: '' } })).status, 401);
      assert.equal((await t.req('/metrics')).status, 401, 'an API key is not the metrics token');
      const ok = await t.req('/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /brier_http_requests_total/);
    } finally {
      await t.close();
    }
  });

  test('off: no route', async () => {
    const t = await makeTestApp({ metricsEnabled: false });
    try {
      assert.equal((await t.req('/metrics', { headers: { authorization: '' } })).status, 404);
    } finally {
      await t.close();
    }
  });
});

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
