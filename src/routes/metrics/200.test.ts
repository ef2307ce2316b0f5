import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../test/harness.ts';

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
