import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

const ASK = {
  state: 'I was charged twice',
  questions: {
    refund: { type: 'noul', instructions: 'Asks for money back?' },
    team: { type: 'choice', criteria: { billing: null, tech: null } },
  },
};

describe('POST /control/v1/playground/systemone 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('answers as /v1/systemone does, with the server-side latency in server-timing', async () => {
    const client = await signedInClient(t);
    const res = await client.request('/control/v1/playground/systemone', { body: ASK });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('server-timing') ?? '', /^decide;dur=\d+\.\d$/);
    const body = await res.json();
    const viaKey = await (await t.req('/v1/systemone', { body: ASK })).json();
    assert.deepEqual(body, viaKey);
  });

  test("is metered to the account under the key id 'playground', refusals of the request included", async () => {
    const client = await signedInClient(t);
    await client.request('/control/v1/playground/systemone', { body: ASK });
    const unknown = await client.request('/control/v1/playground/systemone', { body: { ...ASK, model: 'nope' } });
    assert.equal(unknown.status, 400);
    await t.usage.flush();
    const rows = await t.db.kysely
      .selectFrom('usage_event')
      .select(['key_id', 'route', 'status', 'questions'])
      .where('user_id', '=', client.userId)
      .orderBy('ts')
      .execute();
    assert.deepEqual(
      rows.map((r) => ({ ...r, status: Number(r.status), questions: Number(r.questions) })),
      [
        { key_id: 'playground', route: '/control/v1/playground/systemone', status: 200, questions: 2 },
        { key_id: 'playground', route: '/control/v1/playground/systemone', status: 400, questions: 0 },
      ],
    );
  });
});
