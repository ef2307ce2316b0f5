/**
 * Two gateway replicas (two full service graphs) sharing one PostgreSQL database and one Redis, as
 * separate processes behind a load balancer would: a session started on one is valid on the other,
 * rate limits count across both, a key revoked on one fails on the other within the key-cache TTL,
 * usage is written once per request, and with Redis down both keep serving with per-process limits
 * and say so in /healthz and /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { createAppClient } from '../fixtures/app-client.ts';
import { hasRedisServer, type OwnRedis, startOwnRedis } from '../fixtures/redis-server.ts';
import { captureMailer, freshDb, TEST_SERVICE_OPTIONS } from '../harness.ts';

const url = process.env.TEST_DATABASE_URL;
const skip = !url ? 'TEST_DATABASE_URL is not set' : !hasRedisServer() ? 'redis-server is not installed' : false;
const TTL_MS = 300;

describe('gateway replicas sharing PostgreSQL and Redis', { skip }, () => {
  let db: Awaited<ReturnType<typeof freshDb>>;
  let redis: OwnRedis;
  let a: Services;
  let b: Services;
  const { mailer, outbox } = captureMailer();
  const engine = createFakeEngine();

  before(async () => {
    db = await freshDb('postgres');
    redis = await startOwnRedis();
    await engine.load();
    const replica = () =>
      createServices(db, engine, createLogger('silent'), {
        ...TEST_SERVICE_OPTIONS,
        keyCacheTtlMs: TTL_MS,
        mailer,
        rateLimitStore: 'redis',
        redisUrl: redis.url,
        // A small sign-in budget per IP, so that counting across replicas shows.
        authRateRules: { '/sign-in/email': { what: 'sign-in', ip: { points: 4, durationS: 600 } } },
      });
    a = replica();
    b = replica();
    // Both Redis clients connected.
    for (let i = 0; i < 50 && !(await healthOf(a)).rate_limits.shared; i++) await new Promise((r) => setTimeout(r, 50));
  });
  after(async () => {
    await a.close();
    await b.close();
    await redis.stop();
    await db.drop();
  });

  async function healthOf(s: Services) {
    const res = await s.app.request('/healthz');
    return (await res.json()) as { rate_limits: { store: string; shared: boolean } };
  }

  async function signUp(email: string, ip: string) {
    const client = createAppClient(a.app, ip);
    const password = 'correct-horse-battery';
    assert.equal((await client.request('/control/v1/auth/sign-up/email', { body: { email, password } })).status, 200);
    const link = outbox.find((m) => m.to === email)?.link;
    assert.ok(link);
    await client.request(link);
    return { client, password };
  }

  test('a session started on one replica is valid on the other', async () => {
    const { client, password } = await signUp('session@example.com', '198.51.100.10');
    assert.equal(
      (await client.request('/control/v1/auth/sign-in/email', { body: { email: 'session@example.com', password } }))
        .status,
      200,
    );
    const cookie = (await client.request('/control/v1/keys')).status;
    assert.equal(cookie, 200);
    // The same cookies, sent to replica b.
    const onB = await b.app.request('http://127.0.0.1/control/v1/keys', {
      headers: { cookie: [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    assert.equal(onB.status, 200);
  });

  test('rate limits are global: attempts on both replicas count against one budget', async () => {
    const ip = '198.51.100.20';
    const onA = createAppClient(a.app, ip);
    const onB = createAppClient(b.app, ip);
    const attempt = (c: typeof onA) =>
      c.request('/control/v1/auth/sign-in/email', {
        body: { email: 'nobody@example.com', password: 'wrong-password-1' },
      });
    const statuses = [];
    for (const c of [onA, onB, onA, onB, onA, onB]) statuses.push((await attempt(c)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
  });

  test('a key revoked on one replica fails on the other within the key-cache TTL', async () => {
    const account = await a.accounts.ensure('revoke@example.com');
    const created = await a.keys.create(account.id, 'k');
    const ask = async (s: Services) =>
      (await s.app.request('/v1/models', { headers: { authorization: `Bearer ${created.key}` } })).status;
    assert.equal(await ask(b), 200); // cached on b now
    assert.equal(await a.keys.revoke(account.id, created.id), true);
    assert.equal(await ask(a), 401, 'at once where it was revoked');
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    assert.equal(await ask(b), 401, 'on the other replica within the TTL');
  });

  test('usage is written once per request, whichever replica answered it', async () => {
    const account = await a.accounts.ensure('usage@example.com');
    const created = await a.keys.create(account.id, 'k');
    const body = JSON.stringify({ state: 'hi', questions: { q: { type: 'noul', instructions: 'yes?' } } });
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await (i % 2 ? a : b).app.request('/v1/systemone', {
          method: 'POST',
          headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
          body,
        });
        return res.status;
      }),
    );
    assert.deepEqual(statuses, Array(40).fill(200));
    await Promise.all([a.usage.flush(), b.usage.flush()]);
    const { n } = await db.kysely
      .selectFrom('usage_event')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('key_id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), 40);
  });

  test('Redis down: both keep serving, count per process, and say so in /healthz and /metrics; then recover', async () => {
    await redis.kill();
    for (let i = 0; i < 50 && (await healthOf(a)).rate_limits.shared; i++) await new Promise((r) => setTimeout(r, 50));
    for (const s of [a, b]) {
      const res = await s.app.request('/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as { rate_limits: unknown }).rate_limits, { store: 'redis', shared: false });
      const metrics = await (await s.app.request('/metrics')).text();
      assert.match(metrics, /brier_rate_limit_store_up\{store="redis"\} 0/);
    }
    // Sign-in is still answered (by the in-memory insurance limiter), never a 5xx.
    const client = createAppClient(a.app, '198.51.100.30');
    const res = await client.request('/control/v1/auth/sign-in/email', {
      body: { email: 'nobody@example.com', password: 'wrong-password-1' },
    });
    assert.equal(res.status, 401);
    await redis.start();
    for (let i = 0; i < 100 && !(await healthOf(a)).rate_limits.shared; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual((await healthOf(a)).rate_limits, { store: 'redis', shared: true });
    assert.match(await (await a.app.request('/metrics')).text(), /brier_rate_limit_store_up\{store="redis"\} 1/);
  });
});
