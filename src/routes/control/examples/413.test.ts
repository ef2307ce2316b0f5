import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonl, REFUND, row, upload } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /control/v1/examples 413 and 415', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('uploads have their own 8 MiB limit: 100 KiB passes (the control default is 16 KiB), 8 MiB + 1 does not', async () => {
    const rows = Array.from({ length: 100 }, (_, i) => row(`${'w'.repeat(1000)} ${i}`, { q: REFUND }, { q: true }));
    const body = jsonl(rows);
    assert.ok(body.length > 100_000);
    assert.equal((await upload(t, body)).status, 201);
    const res = await upload(t, 'x'.repeat(8 * 1024 * 1024 + 1));
    assert.equal(res.status, 413);
    assert.match((await res.json()).message, /larger than 8388608 bytes/);
  });

  test('a body sent as application/json is refused with 415, naming the JSON Lines type', async () => {
    const res = await upload(t, jsonl([row('x', { q: REFUND }, { q: true })]), t.key, 'application/json');
    assert.equal(res.status, 415);
    assert.match((await res.json()).message, /content-type: must be application\/jsonl/);
  });
});
