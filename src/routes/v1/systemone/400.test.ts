import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import { createFakeEngine } from '../../../engines/fake/fake-engine.ts';

describe('POST /v1/systemone 400 (semantic limits)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ engine: createFakeEngine({ limits: { contextTokens: 60, inputTokens: 40 } }) });
  });
  after(() => t.close());

  async function refused(body: unknown, pattern: RegExp, errorType = 'invalid_request') {
    const res = await t.req('/v1/systemone', { body });
    assert.equal(res.status, 400);
    assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_/);
    const json = await res.json();
    assert.equal(json.detail.error_type, errorType);
    assert.match(json.message, pattern);
    assert.equal(json.detail.message, json.message);
    return json;
  }

  test('unknown question type names the question and the type', async () => {
    await refused(
      { state: 's', questions: { q1: { type: 'rank', criteria: ['a'] } } },
      /questions\.q1\.type: unknown question type "rank"; expected noul, choice or score/,
    );
  });

  test('choice with too many or too few labels names the limit', async () => {
    const many = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`o${i}`, null]));
    await refused(
      { state: 's', questions: { c: { type: 'choice', criteria: many } } },
      /questions\.c\.criteria: choice needs 2 to 255 labels, got 256/,
    );
    await refused(
      { state: 's', questions: { c: { type: 'choice', criteria: { only: null } } } },
      /choice needs 2 to 255 labels, got 1/,
    );
  });

  test('score with too many or too few levels names the limit', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `l${i}`);
    await refused(
      { state: 's', questions: { s: { type: 'score', criteria: eleven } } },
      /questions\.s\.criteria: score needs 2 to 10 levels/,
    );
    await refused({ state: 's', questions: { s: { type: 'score', criteria: ['one'] } } }, /score needs 2 to 10 levels/);
  });

  test('unknown model is named', async () => {
    await refused(
      { model: 'gpt-9', state: 's', questions: { q: { type: 'noul' } } },
      /model "gpt-9" is not served here/,
      'model_not_found',
    );
  });

  test('malformed JSON', async () => {
    await refused('{"state": "s", "questions": {', /not valid JSON/, 'invalid_json');
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

  test('nothing is lost: a refused request is metered with its status', async () => {
    await t.req('/v1/systemone', { body: { model: 'nope', state: 's', questions: { q: { type: 'noul' } } } });
    await t.usage.flush();
    const rows = await t.db.kysely.selectFrom('usage_event').select('status').where('key_id', '=', t.keyId).execute();
    assert.ok(rows.some((r) => r.status === 400));
  });
});
