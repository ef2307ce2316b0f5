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
});
