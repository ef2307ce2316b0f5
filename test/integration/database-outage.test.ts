/**
 * PostgreSQL down or stalled, through a TCP proxy in front of the real server: key verification,
 * sessions, sign-in and usage reports answer 503 with retry-after (never 500, never a hang), /healthz
 * says the database is not ready, and everything works again once the database is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/db/open.ts';
import { startTcpProxy, type TcpProxy } from '../fixtures/tcp-proxy.ts';
import { freshDb, makeTestApp, type SignedInClient, signedInClient, type TestApp } from '../harness.ts';

const url = process.env.TEST_DATABASE_URL;
const TIMEOUT_MS = 800;

describe('PostgreSQL down or slow', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let client: SignedInClient;
  const body = { state: 'hello', questions: { q: { type: 'noul', instructions: 'yes?' } } };

  before(async () => {
    const real = await freshDb('postgres');
    const target = new URL(real.kysely ? (url ?? '') : '');
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    // The same fresh database, reached through the proxy.
    const name = await real.kysely
      .selectNoFrom((eb) => eb.fn<string>('current_database').as('db'))
      .executeTakeFirstOrThrow();
    const proxied = new URL(proxy.url(url ?? ''));
    proxied.pathname = `/${name.db}`;
    const db = await openDb(proxied.href, { timeoutMs: TIMEOUT_MS });
    t = await makeTestApp({
      database: {
        ...db,
        drop: async () => {
          await db.close();
          await real.drop();
        },
      },
      keyCacheTtlMs: 0,
    });
    client = await signedInClient(t);
  });
  after(async () => {
    await t.close();
    await proxy.close();
  });

  async function expect503(what: string, res: Response, startedAt: number) {
    assert.equal(res.status, 503, `${what}: ${res.status} ${await res.clone().text()}`);
    assert.ok(Number(res.headers.get('retry-after')) >= 1, `${what}: retry-after`);
    assert.ok(performance.now() - startedAt < TIMEOUT_MS * 4 + 2500, `${what}: answered within the timeout`);
  }

  async function everyRoute(mode: 'down' | 'stall') {
    const checks: [string, () => Promise<Response>][] = [
      ['key verification', () => t.req('/v1/systemone', { body })],
      ['session', () => client.request('/control/v1/keys')],
      ['usage report', () => t.req('/control/v1/usage')],
      [
        'sign-in',
        () =>
          client.request('/control/v1/auth/sign-in/email', {
            body: { email: client.email, password: client.password },
          }),
      ],
    ];
    for (const [what, call] of checks) {
      const started = performance.now();
      await expect503(`${mode}: ${what}`, await call(), started);
    }
    const health = await t.req('/healthz');
    assert.equal(health.status, 503);
    assert.equal(((await health.json()) as { database: { ready: boolean } }).database.ready, false);
  }

  test('down: every database-backed route answers 503 with retry-after, and all work again once it is back', async () => {
    proxy.down();
    await everyRoute('down');
    proxy.up();
    assert.equal((await t.req('/v1/systemone', { body })).status, 200);
    assert.equal((await client.request('/control/v1/keys')).status, 200);
    assert.equal((await t.req('/healthz')).status, 200);
  });

  test('stalled (accepts, never answers): 503 with retry-after within BRIER_DB_TIMEOUT_MS, not a hang', async () => {
    proxy.stall();
    await everyRoute('stall');
    proxy.up();
    assert.equal((await t.req('/v1/systemone', { body })).status, 200);
  });
});
