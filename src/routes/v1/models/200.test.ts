import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /v1/models', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('200 lists the one hosted model with its limits', async () => {
    const res = await t.req('/v1/models');
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.models.length, 1);
    const [m] = body.models;
    assert.equal(m.name, 'brier-latest');
    assert.match(m.id, /-3\.\d+\.\d+$/);
    assert.match(m.release_date, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(m.context_limit, t.engine.limits.contextTokens);
    assert.equal(m.input_limit, t.engine.limits.inputTokens);
    assert.equal(typeof m.description, 'string');
  });
});
