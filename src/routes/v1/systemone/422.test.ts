import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /v1/systemone 422 (schema violations, FastAPI detail list)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const noul = { q: { type: 'noul', instructions: 'yes?' } };

  async function detail(body: unknown) {
    const res = await t.req('/v1/systemone', { body });
    assert.equal(res.status, 422);
    assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_/);
    const json = await res.json();
    assert.ok(Array.isArray(json.detail));
    assert.equal(typeof json.message, 'string');
    for (const d of json.detail) {
      assert.deepEqual(Object.keys(d).sort(), ['input', 'loc', 'msg', 'type']);
      assert.equal(d.loc[0], 'body');
    }
    return json;
  }

  test('missing fields name each field', async () => {
    const json = await detail({});
    const locs = json.detail.map((d: { loc: string[] }) => d.loc.join('.'));
    assert.deepEqual(locs.sort(), ['body.questions', 'body.state']);
    assert.ok(json.detail.every((d: { type: string }) => d.type === 'missing'));
    assert.match(json.message, /state: Field required/);
  });

  test('null, number and boolean states are refused', async () => {
    for (const state of [null, 42, true]) {
      const json = await detail({ state, questions: noul });
      assert.deepEqual(json.detail[0].loc, ['body', 'state']);
      assert.equal(json.detail[0].input, state);
      assert.match(json.message, /state: must be a string, a JSON object or a JSON array/);
    }
  });

  test('empty questions are refused', async () => {
    const json = await detail({ state: 's', questions: {} });
    assert.deepEqual(json.detail[0].loc, ['body', 'questions']);
    assert.match(json.message, /at least one question/);
  });

  test('a null score level is refused at its index', async () => {
    const json = await detail({ state: 's', questions: { s: { type: 'score', criteria: ['low', null, 'high'] } } });
    assert.deepEqual(json.detail[0].loc, ['body', 'questions', 's', 'criteria', 1]);
  });

  test('wrong types: choice criteria as a list, questions as a list, model as a number', async () => {
    await detail({ state: 's', questions: { c: { type: 'choice', criteria: ['a', 'b'] } } });
    await detail({ state: 's', questions: [noul] });
    const json = await detail({ model: 3, state: 's', questions: noul });
    assert.deepEqual(json.detail[0].loc, ['body', 'model']);
  });

  test('a question without a type is a missing field, like any other', async () => {
    const json = await detail({ state: 's', questions: { q: { instructions: 'yes?' } } });
    assert.deepEqual(json.detail[0].loc, ['body', 'questions', 'q', 'type']);
    assert.equal(json.detail[0].type, 'missing');
    assert.equal(json.message, 'questions.q.type: Field required');
  });

  test('question ids and choice labels past 128 characters are refused, naming the limit', async () => {
    const long = 'i'.repeat(129);
    const id = await detail({ state: 's', questions: { [long]: { type: 'noul' } } });
    assert.equal(id.detail[0].type, 'too_long');
    assert.match(id.message, /a question id has at most 128 characters \(the limit\)/);
    const label = await detail({
      state: 's',
      questions: { c: { type: 'choice', criteria: { [long]: null, b: null } } },
    });
    assert.match(label.message, /^questions\.c\.criteria\.i+…: a label has at most 128 characters \(the limit\)/);
    const model = await detail({ model: 'm'.repeat(129), state: 's', questions: noul });
    assert.match(model.message, /^model: at most 128 characters \(the limit\)/);
    const ok = await t.req('/v1/systemone', {
      body: { state: 's', questions: { ['i'.repeat(128)]: { type: 'noul' } } },
    });
    assert.equal(ok.status, 200);
  });

  test('the error echoes a bounded part of a large input, never all of it', async () => {
    const huge = 'x'.repeat(200_000);
    const res = await t.req('/v1/systemone', { body: { state: 's', questions: huge } });
    assert.equal(res.status, 422);
    const text = await res.text();
    assert.ok(text.length < 2000, `error body is ${text.length} characters`);
    const json = JSON.parse(text);
    assert.equal(json.detail[0].input, `${'x'.repeat(200)}…`);
    const big = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`q${i}`, { type: 'noul', criteria: 'no' }]));
    const many = await t.req('/v1/systemone', { body: { state: 's', questions: big } });
    const manyText = await many.text();
    assert.ok(manyText.length < 40_000, `error body for 300 bad questions is ${manyText.length} characters`);
    assert.match(JSON.parse(manyText).message, /and \d+ more$/);
  });
});
