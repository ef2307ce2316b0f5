import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/examples 422 (row by row, nothing stored)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  async function refused(body: string) {
    const res = await upload(t, body);
    assert.equal(res.status, 422);
    const json = await res.json();
    assert.ok(Array.isArray(json.detail));
    const total = (await (await t.req('/control/v1/examples')).json()).total;
    assert.equal(total, 0, 'nothing of a refused upload is stored');
    return json;
  }

  test('each problem names its line and field; the valid rows of the upload are not stored either', async () => {
    const body = jsonl([
      row('ok', { team: ROUTING }, { team: 'billing' }),
      row('bad label', { team: ROUTING }, { team: 'sales' }),
      row('ok too', { refund: REFUND }, { refund: true }),
      row('no label', { refund: REFUND }, {}),
      row('bad score', { s: { type: 'score', criteria: ['a', 'b'] } }, { s: 5 }),
    ]);
    const json = await refused(body);
    const where = json.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    assert.deepEqual(where, ['body.2.labels.team', 'body.4.labels.refund', 'body.5.labels.s']);
    assert.match(
      json.message,
      /^3 of 5 rows are invalid; nothing was stored: line 2: labels\.team: must be one of the question's labels \("billing", "tech", "other"\), got "sales"/,
    );
    assert.match(json.detail[1].msg, /line 4: labels\.refund: missing/);
    assert.match(json.detail[2].msg, /level index from 0 to 1/);
  });

  test('malformed JSON, a schema violation and an unknown field are named by line', async () => {
    const body = [
      '{"state": "x", ',
      JSON.stringify({ state: null, questions: { q: REFUND }, labels: { q: true } }),
      JSON.stringify({ ...row('x', { q: REFUND }, { q: true }), label: 1 }),
    ].join('\n');
    const json = await refused(body);
    const msgs = json.detail.map((d: { msg: string }) => d.msg);
    assert.match(msgs[0], /^line 1: body: not valid JSON/);
    assert.match(msgs[1], /^line 2: state: must be a string, a JSON object or a JSON array/);
    assert.match(msgs[2], /^line 3: body: Unrecognized key: "label"/);
  });

  test('a noul label must be a boolean, a state has at most 16,384 characters, a line at most 65,536', async () => {
    const json = await refused(
      jsonl([
        row('x', { q: REFUND }, { q: 'yes' }),
        row('y'.repeat(16_385), { q: REFUND }, { q: true }),
        row('z'.repeat(70_000), { q: REFUND }, { q: true }),
        row('a', { q: REFUND }, { q: 'true' }),
        row('b', { q: REFUND }, { q: 1 }),
      ]),
    );
    const msgs = json.detail.map((d: { msg: string }) => d.msg);
    assert.match(msgs[0], /line 1: labels\.q: must be true or false, a JSON boolean/);
    assert.match(msgs[1], /line 2: state: is 16385 characters, the limit is 16384/);
    assert.match(msgs[2], /line 3: body: is \d+ characters, the limit is 65536/);
    // the string "true" is refused as "yes" and 1 are: one rule, JSON booleans
    assert.match(
      msgs[3],
      /line 4: labels\.q: must be true or false, a JSON boolean \(a noul question\), got "true" \(a string\)/,
    );
    assert.match(
      msgs[4],
      /line 5: labels\.q: must be true or false, a JSON boolean \(a noul question\), got 1 \(a number\)/,
    );
  });

  test('a question id of 129 characters is refused naming the limit', async () => {
    const id = 'q'.repeat(129);
    const json = await refused(jsonl([row('x', { [id]: REFUND }, { [id]: true })]));
    assert.equal(json.detail.length, 1, JSON.stringify(json.detail));
    assert.match(json.detail[0].msg, /^line 1: questions\.q+…: a question id has at most 128 characters \(the limit\)/);
    assert.doesNotMatch(json.message, /Invalid key in record/);
  });

  test('JSON nested past 64 levels and __proto__ keys are refused on their line before validation', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 70; i++) deep = { a: deep };
    const json = await refused(
      [
        JSON.stringify(row(deep, { q: REFUND }, { q: true })),
        '{"state":"x","questions":{"q":{"type":"noul"}},"labels":{"q":true},"__proto__":{}}',
      ].join('\n'),
    );
    assert.match(json.detail[0].msg, /^line 1: .*JSON nested deeper than 64 levels/);
    assert.match(json.detail[1].msg, /^line 2: __proto__: "__proto__" is not allowed/);
  });

  test('a row that repeats a key is refused on its line, naming the key and where', async () => {
    const json = await refused(
      [
        '{"state":"x","questions":{"q":{"type":"noul"},"q":{"type":"noul"}},"labels":{"q":true}}',
        JSON.stringify(row('ok', { refund: REFUND }, { refund: true })),
      ].join('\n'),
    );
    assert.equal(json.detail.length, 1);
    assert.deepEqual(json.detail[0].loc, ['body', 1, 'questions', 'q']);
    assert.equal(json.detail[0].type, 'duplicate_key');
    assert.match(json.detail[0].msg, /^line 1: questions\.q: the key "q" appears more than once in questions/);
  });

  test('bytes that are not UTF-8 are refused like any body that is not JSON', async () => {
    const res = await t.app.request('/control/v1/examples', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/jsonl' },
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    });
    assert.equal(res.status, 422);
    const json = await res.json();
    assert.equal(json.detail[0].type, 'json_invalid');
    assert.match(json.message, /not UTF-8/);
  });

  test('a template id past 100 characters in DELETE /examples/{id} is named as the path parameter id', async () => {
    const res = await t.req(`/control/v1/examples/${'t'.repeat(101)}`, { method: 'DELETE' });
    assert.equal(res.status, 422);
    const json = await res.json();
    assert.deepEqual(json.detail[0].loc, ['path', 'id']);
    assert.match(json.message, /^path parameter id: .*100 characters, got "t{40}…"$/);
  });
});
