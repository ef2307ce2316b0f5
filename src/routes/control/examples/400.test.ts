import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { REFUND, row, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/examples 400', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('more than 5,000 rows in one upload are refused at the first row past the limit', async () => {
    const line = JSON.stringify(row('x', { q: REFUND }, { q: true }));
    const res = await upload(t, `${Array.from({ length: 5001 }, () => line).join('\n')}\n`);
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /^line 5001: an upload has at most 5000 rows \(the limit\)/);
    assert.equal((await (await t.req('/control/v1/examples')).json()).total, 0);
  });

  test('an empty upload is refused', async () => {
    const empty = await upload(t, '\n\n');
    assert.equal(empty.status, 400);
    assert.match((await empty.json()).message, /no rows/);
  });
});
