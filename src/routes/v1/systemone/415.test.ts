import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /v1/systemone 415 (a body that is not sent as JSON)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const body = JSON.stringify({ state: 's', questions: { q: { type: 'noul' } } });

  test('a body sent as text/plain, as a form, or with no content-type is refused, naming the header', async () => {
    for (const [type, named] of [
      ['text/plain', '"text/plain"'],
      ['application/x-www-form-urlencoded', '"application/x-www-form-urlencoded"'],
      [undefined, 'none'],
    ] as const) {
      const res = await t.app.request('/v1/systemone', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, ...(type ? { 'content-type': type } : {}) },
        // Bytes: a string body would make the Request add text/plain itself.
        body: new TextEncoder().encode(body),
      });
      assert.equal(res.status, 415, `content-type ${type}`);
      const json = await res.json();
      assert.equal(json.detail.error_type, 'unsupported_media_type');
      assert.equal(json.message, `content-type: must be application/json, got ${named}`);
      assert.match(json.request_id, /^req_/);
    }
  });

  test('application/json with parameters, and +json media types, are JSON', async () => {
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json']) {
      const res = await t.req('/v1/systemone', { body, headers: { 'content-type': type } });
      assert.equal(res.status, 200, `content-type ${type}`);
    }
  });
});
