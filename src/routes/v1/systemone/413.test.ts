import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';

describe('POST /v1/systemone 413 (body over BRIER_MAX_BODY_BYTES)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ maxBodyBytes: 4096 });
  });
  after(() => t.close());

  const body = (chars: number) => JSON.stringify({ state: 'x'.repeat(chars), questions: { q: { type: 'noul' } } });

  async function tooLarge(res: Response) {
    assert.equal(res.status, 413);
    const json = await res.json();
    assert.equal(json.detail.error_type, 'payload_too_large');
    assert.match(json.message, /request body is larger than 4096 bytes \(the limit, BRIER_MAX_BODY_BYTES\)/);
    assert.match(json.request_id, /^req_/);
  }

  test('a declared length over the limit is refused, naming the limit', async () => {
    const text = body(5000);
    await tooLarge(
      await t.req('/v1/systemone', { body: text, headers: { 'content-length': String(Buffer.byteLength(text)) } }),
    );
  });

  test('a streamed body without a length is refused once it passes the limit', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 64) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await t.app.request('/v1/systemone', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await tooLarge(res);
  });

  test('a body at the limit is read and answered', async () => {
    const text = body(4096 - body(0).length);
    assert.equal(Buffer.byteLength(text), 4096);
    assert.equal((await t.req('/v1/systemone', { body: text })).status, 200);
  });

  test('nothing is lost: a refused body is metered with its 413', async () => {
    await t.req('/v1/systemone', { body: body(5000) });
    await t.usage.flush();
    const rows = await t.db.kysely.selectFrom('usage_event').select('status').where('key_id', '=', t.keyId).execute();
    assert.ok(rows.some((r) => r.status === 413));
  });
});
