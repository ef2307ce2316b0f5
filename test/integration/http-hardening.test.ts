/**
 * The server's socket-level behaviour, over real HTTP on loopback: refusals that leave the
 * connection reusable, and timeouts that cut slow and idle clients. Timeouts are shortened through
 * the environment so that each check takes a second or two.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type RunningServer, startServer, waitHealthy } from '../server.ts';

const TIMEOUTS = {
  BRIER_HEADERS_TIMEOUT_MS: '1000',
  BRIER_BODY_TIMEOUT_MS: '1500',
  BRIER_KEEP_ALIVE_TIMEOUT_MS: '500',
};

/** Opens a raw socket, lets `act` write to it, and resolves with what came back and when it closed. */
function rawSocket(url: string, act: (socket: net.Socket) => void, giveUpMs = 10_000) {
  const { hostname, port } = new URL(url);
  return new Promise<{ closedAfterMs: number | null; received: string }>((resolve) => {
    const started = Date.now();
    let received = '';
    const socket = net.connect(Number(port), hostname, () => act(socket));
    socket.on('data', (d) => {
      received += d.toString();
    });
    socket.on('error', () => undefined);
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ closedAfterMs: null, received });
    }, giveUpMs);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, received });
    });
  });
}

describe('HTTP hardening over a real socket', () => {
  let server: RunningServer;
  let key: string;
  before(async () => {
    server = await startServer({ BRIER_MODEL: 'fake', ...TIMEOUTS });
    await waitHealthy(server.url);
    key = await server.createKey('socket@example.com');
  });
  after(() => server.stop());

  const post = (path: string, body: string, auth = `Bearer ${key}`) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body,
    });

  test('20 sequential over-limit bodies each get a clean 413 on a reused connection, and the next request works', async () => {
    const big = JSON.stringify({ state: 'x'.repeat(1_100_000), questions: { q: { type: 'noul' } } });
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        const res = await post('/v1/systemone', big);
        await res.arrayBuffer();
        outcomes.push(String(res.status));
      } catch (error) {
        outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
      }
    }
    assert.deepEqual(outcomes, Array(20).fill('413'));
    const small = await post('/v1/systemone', JSON.stringify({ state: 's', questions: { q: { type: 'noul' } } }));
    assert.equal(small.status, 200);
  });

  test('a refusal before the body is read (a bad key) says Connection: close, and the client never sees a socket error', async () => {
    const big = JSON.stringify({ state: 'x'.repeat(1_100_000), questions: { q: { type: 'noul' } } });
    for (let i = 0; i < 10; i++) {
      const res = await post('/v1/systemone', big, 'Bearer brier_sk_nope');
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('connection'), 'close');
      await res.arrayBuffer();
    }
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });

  test('a non-JSON body on a control route gets a 415 naming the header, and the connection stays usable', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/control/v1/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'x'.repeat(100_000),
      });
      assert.equal(res.status, 413, 'over the control-plane limit first');
      await res.arrayBuffer();
      const typed = await fetch(`${server.url}/control/v1/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'email=a',
      });
      assert.equal(typed.status, 415);
      assert.match((await typed.json()).message, /^content-type: must be application\/json/);
    }
  });

  test('a connection that never sends a request is closed after the headers timeout', async () => {
    const { closedAfterMs } = await rawSocket(server.url, () => {});
    assert.ok(closedAfterMs !== null, 'the idle connection was never closed');
    assert.ok(closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
  });

  test('a body sent one byte at a time is cut with a 408 after the request timeout', async () => {
    const { closedAfterMs, received } = await rawSocket(server.url, (socket) => {
      const head = `POST /v1/systemone HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
      socket.write(head);
      const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write('{')), 200);
    });
    assert.ok(closedAfterMs !== null, 'the slow body was never cut');
    assert.ok(closedAfterMs < 6000, `cut after ${closedAfterMs} ms`);
    assert.match(received, /^HTTP\/1\.1 408/);
  });

  test('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const { closedAfterMs, received } = await rawSocket(server.url, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    assert.match(received, /^HTTP\/1\.1 200/);
    assert.ok(closedAfterMs !== null && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
  });

  test('every operation that takes a body documents 413 and 415', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    const withBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.requestBody !== undefined)
        .map(([method, op]) => ({ at: `${method} ${path}`, op })),
    );
    assert.ok(withBody.length >= 8, `${withBody.length} operations take a body`);
    for (const { at, op } of withBody) {
      assert.ok(op.responses['413'], `${at} documents 413`);
      assert.ok(op.responses['415'], `${at} documents 415`);
    }
  });
});
