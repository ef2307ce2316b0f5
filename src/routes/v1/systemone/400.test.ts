import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import { createFakeEngine } from '../../../engines/fake/fake-engine.ts';

describe('POST /v1/systemone 400 (the model: an unknown model, a request over its token limits)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ engine: createFakeEngine({ limits: { contextTokens: 60, inputTokens: 40 } }) });
  });
  after(() => t.close());

  async function refused(body: unknown, pattern: RegExp, errorType: string) {
    const res = await t.req('/v1/systemone', { body });
    assert.equal(res.status, 400);
    assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_/);
    const json = await res.json();
    assert.equal(json.detail.error_type, errorType);
    assert.match(json.message, pattern);
    assert.equal(json.detail.message, json.message);
    return json;
  }

  test('unknown model is named', async () => {
    await refused(
      { model: 'gpt-9', state: 's', questions: { q: { type: 'noul' } } },
      /model "gpt-9" is not served here/,
      'model_not_found',
    );
  });

  test('over the input limit: state plus the longest question', async () => {
    const state = Array.from({ length: 38 }, () => 'word').join(' ');
    const json = await refused(
      { state, questions: { q: { type: 'noul', instructions: 'is it a long one' } } },
      /tokens, limit 40/,
      'max_tokens_exceeded',
    );
    assert.match(json.message, /state plus question "q" is 45 tokens, limit 40/);
  });

  test('over the context limit: state plus all questions', async () => {
    const state = Array.from({ length: 30 }, () => 'word').join(' ');
    const questions = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`q${i}`, { type: 'noul', instructions: 'yes' }]),
    );
    await refused({ state, questions }, /state plus all questions is 66 tokens, limit 60/, 'max_tokens_exceeded');
  });

  const noul = { q: { type: 'noul' } };

  test('ids and labels named like Object.prototype members are answered like any other', async () => {
    const names = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
    const questions = Object.fromEntries(
      names.map((n) => [n, { type: 'choice', criteria: Object.fromEntries(names.map((l) => [l, null])) }]),
    );
    const res = await t.req('/v1/systemone', { body: { state: 's', questions } });
    assert.equal(res.status, 200);
    const json = await res.json();
    assert.deepEqual(Object.keys(json.answers), names);
    for (const n of names) assert.deepEqual(Object.keys(json.answers[n].probabilities), names);
  });

  test('a state past the character bound is refused before the tokenizer reads it', async () => {
    let counted = 0;
    const engine = createFakeEngine({ limits: { contextTokens: 60, inputTokens: 40 } });
    const counting = await makeTestApp({
      engine: {
        ...engine,
        countTokens: async (request) => {
          counted++;
          return engine.countTokens(request);
        },
      },
    });
    try {
      const res = await counting.req('/v1/systemone', { body: { state: 'x'.repeat(641), questions: noul } });
      assert.equal(res.status, 400);
      const json = await res.json();
      assert.equal(json.detail.error_type, 'max_tokens_exceeded');
      assert.match(
        json.message,
        /^state is 641 characters, limit 640 characters \(16 per token of the model's input_limit of 40 tokens\)/,
      );
      assert.equal(counted, 0);
      // A question's characters: its instructions, labels and descriptions (a noul's labels: 9).
      const many = Object.fromEntries(
        Array.from({ length: 4 }, (_, i) => [`q${i}`, { type: 'noul', instructions: 'y'.repeat(300) }]),
      );
      const total = await counting.req('/v1/systemone', { body: { state: 's', questions: many } });
      assert.match(
        (await total.json()).message,
        /^state plus all questions is 1237 characters, limit 960 characters \(16 per token of the model's context_limit of 60 tokens\)/,
      );
      assert.equal(counted, 0);
      const one = await counting.req('/v1/systemone', {
        body: { state: 'x'.repeat(400), questions: { long: { type: 'noul', instructions: 'y'.repeat(300) } } },
      });
      assert.match((await one.json()).message, /^state plus question "long" is 709 characters, limit 640/);
      assert.equal(counted, 0);
    } finally {
      await counting.close();
    }
  });

  test('nothing is lost: a refused request is metered with its status', async () => {
    await t.req('/v1/systemone', { body: { model: 'nope', state: 's', questions: { q: { type: 'noul' } } } });
    await t.usage.flush();
    const rows = await t.db.kysely.selectFrom('usage_event').select('status').where('key_id', '=', t.keyId).execute();
    assert.ok(rows.some((r) => r.status === 400));
  });
});
