import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /v1/systemone 422 (every invalid body, one shape: the FastAPI detail list)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const noul = { q: { type: 'noul', instructions: 'yes?' } };

  async function detail(body: unknown, headers: Record<string, string> = {}) {
    const res = await t.req('/v1/systemone', { body, headers });
    assert.equal(res.status, 422);
    assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_/);
    const json = await res.json();
    assert.ok(Array.isArray(json.detail));
    assert.equal(typeof json.message, 'string');
    for (const d of json.detail) {
      assert.deepEqual(Object.keys(d).sort(), ['input', 'loc', 'msg', 'type']);
      assert.equal(d.loc[0], 'body');
      assert.equal(typeof d.msg, 'string');
      assert.equal(typeof d.type, 'string');
    }
    assert.match(json.request_id, /^req_[0-9a-f]{32}$/);
    return json;
  }

  /** The one entry of a refusal at one place: its loc, type and a message naming the field. */
  async function one(body: unknown, loc: (string | number)[], type: string, message: RegExp) {
    const json = await detail(body);
    assert.equal(json.detail.length, 1, JSON.stringify(json.detail));
    assert.deepEqual(json.detail[0].loc, loc);
    assert.equal(json.detail[0].type, type);
    assert.match(json.message, message);
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

  test("a body that is not JSON (the suite's truncated body), not UTF-8, or empty: json_invalid", async () => {
    const truncated = '{"model": "jev-latest", "state": "x", "questions": {';
    const json = await one(truncated, ['body', truncated.length], 'json_invalid', /^body is not valid JSON: /);
    assert.match(json.detail[0].msg, /^JSON decode error: /);
    const res = await t.app.request('/v1/systemone', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    });
    assert.equal(res.status, 422);
    assert.deepEqual((await res.json()).detail[0], {
      type: 'json_invalid',
      loc: ['body'],
      msg: 'is not valid JSON: it is not UTF-8',
      input: null,
    });
    const empty = await t.req('/v1/systemone', { method: 'POST', body: '' });
    assert.equal(empty.status, 422);
    const emptyJson = await empty.json();
    assert.deepEqual([emptyJson.detail[0].loc, emptyJson.detail[0].type], [['body'], 'json_invalid']);
    assert.match(emptyJson.message, /^body: is not valid JSON/);
  });

  test('an unknown question type is refused at its type, naming it and the known ones', async () => {
    for (const type of ['boolean', 'rank']) {
      const json = await one(
        { state: 's', questions: { q1: { type, criteria: ['a'] } } },
        ['body', 'questions', 'q1', 'type'],
        'union_tag_invalid',
        new RegExp(`^questions\\.q1\\.type: unknown question type "${type}"; expected noul, choice or score$`),
      );
      assert.equal(json.detail[0].input, type);
    }
  });

  test('a choice outside 2 to 255 labels, a score outside 2 to 10 levels, more than 256 questions: at the field, naming the limit', async () => {
    const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null]));
    const choice = (n: number) => ({ state: 's', questions: { c: { type: 'choice', criteria: labels(n) } } });
    const at = ['body', 'questions', 'c', 'criteria'];
    await one(choice(0), at, 'too_short', /^questions\.c\.criteria: choice needs 2 to 255 labels, got 0$/);
    await one(choice(1), at, 'too_short', /^questions\.c\.criteria: choice needs 2 to 255 labels, got 1$/);
    await one(choice(256), at, 'too_long', /^questions\.c\.criteria: choice needs 2 to 255 labels, got 256$/);
    const score = (n: number) => ({
      state: 's',
      questions: { s: { type: 'score', criteria: Array.from({ length: n }, (_, i) => `l${i}`) } },
    });
    const levels = ['body', 'questions', 's', 'criteria'];
    await one(score(1), levels, 'too_short', /^questions\.s\.criteria: score needs 2 to 10 levels$/);
    await one(score(11), levels, 'too_long', /^questions\.s\.criteria: score needs 2 to 10 levels$/);
    const many = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`q${i}`, { type: 'noul' }]));
    await one({ state: 's', questions: many }, ['body', 'questions'], 'too_long', /at most 256 questions .*got 257/);
    for (const n of [2, 255]) assert.equal((await t.req('/v1/systemone', { body: choice(n) })).status, 200);
  });

  const deepText = (levels: number) => `${'['.repeat(levels)}"leaf"${']'.repeat(levels)}`;

  test('JSON nested past 64 levels is refused naming where and the limit, without echoing it', async () => {
    // As text: JSON.stringify itself overflows the stack on 5,000 levels.
    const deep = deepText(5000);
    const q = '{"q":{"type":"noul"}}';
    const cases: [string, (string | number)[]][] = [
      [`{"state":${deep},"questions":${q}}`, ['state', ...Array(63).fill(0)]],
      [`{"state":"s","questions":{"q":{"type":"noul","instructions":${deep}}}}`, ['questions', 'q', 'instructions']],
      [
        `{"state":"s","questions":{"q":{"type":"score","criteria":["low",${deep}]}}}`,
        ['questions', 'q', 'criteria', 1],
      ],
      [`{"model":${deep},"state":"s","questions":${q}}`, ['model']],
    ];
    for (const [body, prefix] of cases) {
      const json = await detail(body);
      const [entry] = json.detail;
      assert.equal(entry.type, 'too_deep');
      assert.deepEqual(entry.loc.slice(0, prefix.length + 1), ['body', ...prefix]);
      assert.equal(entry.loc.length, 65, 'loc is the 65th container');
      assert.match(json.message, /JSON nested deeper than 64 levels \(the limit; the body is level 1\)/);
      assert.ok(JSON.stringify(json).length < 2000, 'the error does not echo the input');
    }
    const ok = await t.req('/v1/systemone', { body: `{"state":${deepText(62)},"questions":${q}}` });
    assert.equal(ok.status, 200, 'a state 63 levels deep (64 with the body) is answered');
  });

  test('"__proto__" as a question id, a label or a state key is refused, naming where', async () => {
    await one(
      '{"state":"s","questions":{"__proto__":{"type":"noul"},"a":{"type":"noul"}}}',
      ['body', 'questions', '__proto__'],
      'key_forbidden',
      /^questions\.__proto__: "__proto__" is not allowed as a key$/,
    );
    await one(
      '{"state":"s","questions":{"q":{"type":"choice","criteria":{"__proto__":null,"b":null}}}}',
      ['body', 'questions', 'q', 'criteria', '__proto__'],
      'key_forbidden',
      /^questions\.q\.criteria\.__proto__: "__proto__" is not allowed/,
    );
    await one(
      '{"state":{"user":{"__proto__":{"admin":true}}},"questions":{"q":{"type":"noul"}}}',
      ['body', 'state', 'user', '__proto__'],
      'key_forbidden',
      /^state\.user\.__proto__: "__proto__" is not allowed/,
    );
  });

  test('a duplicate key anywhere is refused naming the key and its path, never answered with the last one', async () => {
    // The fuzzer's case: a question silently replaced by a later one with the same id.
    const json = await one(
      '{"state":"s","questions":{"a":{"type":"noul"},"a":{"type":"score","criteria":["lo","hi"]}}}',
      ['body', 'questions', 'a'],
      'duplicate_key',
      /^questions\.a: the key "a" appears more than once in questions; each key may appear once/,
    );
    assert.equal(json.detail[0].input, 'a');
    await one(
      '{"state":"s","state":"t","questions":{"q":{"type":"noul"}}}',
      ['body', 'state'],
      'duplicate_key',
      /^state: the key "state" appears more than once in body/,
    );
    await one(
      '{"state":"s","questions":{"c":{"type":"choice","criteria":{"x":null,"y":"why","\\u0078":"again"}}}}',
      ['body', 'questions', 'c', 'criteria', 'x'],
      'duplicate_key',
      /^questions\.c\.criteria\.x: the key "x" appears more than once in questions\.c\.criteria/,
    );
    await one(
      '{"state":{"rows":[{"id":1},{"id":2,"id":3}]},"questions":{"q":{"type":"noul"}}}',
      ['body', 'state', 'rows', 1, 'id'],
      'duplicate_key',
      /^state\.rows\[1\]\.id: the key "id" appears more than once in state\.rows\[1\]/,
    );
    const long = 'k'.repeat(5000);
    const cut = await detail(`{"state":{"${long}":1,"${long}":2},"questions":{"q":{"type":"noul"}}}`);
    assert.ok(JSON.stringify(cut).length < 2000, 'a long duplicated key is cut in the error');
  });
});
