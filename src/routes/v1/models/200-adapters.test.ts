import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { storedAdapter } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('GET /v1/models 200 with adapters', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("lists the key's account's adapters after the base model, and only its own", async () => {
    const id = await storedAdapter(t, t.account.id);
    const otherUser = await t.accounts.ensure('models-other@example.com');
    await storedAdapter(t, otherUser.id);
    const otherKey = await t.keys.create(otherUser.id, 'k');
    const mine = (await (await t.req('/v1/models')).json()).models;
    assert.deepEqual(
      mine.map((m: { id: string }) => m.id),
      ['brier-fake-3.0.0', id],
    );
    assert.equal(mine[1].context_limit, mine[0].context_limit);
    assert.match(mine[1].description, /adapter of brier-fake-3\.0\.0 for 1 question template;/);
    // The extension that says which model answered is x_answered_by (answered_by is its pre-0.2.0 name).
    assert.match(mine[1].description, /each answer's x_answered_by says which/);
    const theirs = (await (await t.req('/v1/models', { headers: { authorization: `Bearer ${otherKey.key}` } })).json())
      .models;
    assert.equal(theirs.length, 2);
    assert.notEqual(theirs[1].id, id);
  });
});
