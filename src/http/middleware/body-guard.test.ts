import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createLogger } from '../../observability/logger.ts';
import type { AppEnv } from '../env.ts';
import { handleErrors } from '../errors.ts';
import { bodyGuard } from './body-guard.ts';

/**
 * The guard reads a body two ways: from the node request itself on @hono/node-server, and from the
 * web stream elsewhere (app.request, which the route tests use). Both must answer alike, and what
 * comes after the guard must read the same body whichever way it reads it.
 */
function app() {
  const a = new Hono<AppEnv>();
  a.use('*', bodyGuard({ maxBytes: 64, maxDepth: 3, acceptsForm: (p) => p === '/form' }));
  // As the validators read it (HonoRequest, body cache).
  a.post('/json', async (c) => c.json({ got: await c.req.json(), type: c.req.header('content-type') ?? null }));
  // As better-auth reads it (the raw Request).
  a.post('/raw', async (c) => c.json({ got: await c.req.raw.json(), type: c.req.raw.headers.get('content-type') }));
  a.post('/text', async (c) => c.json({ got: await c.req.raw.text() }));
  a.post('/form', async (c) => c.json({ got: Object.fromEntries(Object.entries(await c.req.parseBody())) }));
  a.onError(handleErrors(createLogger('silent')));
  return a;
}

interface Case {
  path: string;
  body?: string;
  type?: string;
}

const CASES: Case[] = [
  { path: '/json', body: '{"a":1,"b":[true,null,"x"]}', type: 'application/json' },
  { path: '/json', body: '{"a":"é ü"}', type: 'application/json; charset=utf-8' },
  { path: '/json', body: '{"a":2}', type: 'Application/Vnd.Brier+JSON' },
  { path: '/raw', body: '{"email":"a@example.com"}', type: 'application/json' },
  { path: '/raw', body: '{"email":"a@example.com"}', type: 'application/merge-patch+json' },
  { path: '/text', body: '' },
  { path: '/form', body: 'a=1&b=two', type: 'application/x-www-form-urlencoded' },
  { path: '/json', body: 'x'.repeat(65), type: 'application/json' }, // 413
  { path: '/json', body: '{"a":1}', type: 'text/plain' }, // 415
  { path: '/json', body: '{"a":', type: 'application/json' }, // 422 json_invalid
  { path: '/json', body: '{"a":[[[1]]]}', type: 'application/json' }, // 422 too_deep
  { path: '/json', body: '{"a":1,"a":2}', type: 'application/json' }, // 422 duplicate_key
  { path: '/json', body: '{"__proto__":{}}', type: 'application/json' }, // 422 key_forbidden
];

async function answer(res: Response) {
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  // The request id differs per request; everything else must not.
  if (body && typeof body.detail === 'object' && body.detail !== null)
    delete (body.detail as { request_id?: string }).request_id;
  return { status: res.status, body };
}

describe('body guard: a node socket and app.request answer alike', () => {
  const a = app();
  let server: ReturnType<typeof serve>;
  let url = '';
  before(async () => {
    server = serve({ fetch: a.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => (server.listening ? r() : server.once('listening', () => r())));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  for (const c of CASES) {
    test(`${c.path} ${c.type ?? '(no type)'} ${JSON.stringify(c.body).slice(0, 40)}`, async () => {
      const headers: Record<string, string> = c.type ? { 'content-type': c.type } : {};
      const init = { method: 'POST', headers, body: c.body ?? null };
      const viaSocket = await answer(await fetch(`${url}${c.path}`, init));
      const viaApp = await answer(await a.request(c.path, init));
      assert.deepEqual(viaSocket, viaApp);
      if (c.path !== '/text' && viaSocket.status === 200) {
        assert.equal(
          (viaSocket.body as { type: string }).type ?? 'application/x-www-form-urlencoded',
          c.path === '/form' ? c.type : 'application/json',
        );
      }
    });
  }

  test('a body sent in chunks without a length is bounded as it arrives (413)', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('{"a":"0123456789"}'));
        controller.close();
      },
    });
    const res = await fetch(`${url}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 413);
  });
});
