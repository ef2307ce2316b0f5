import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { createLogger } from '../../observability/logger.ts';
import { createLimiterFactory, DEFAULT_AUTH_RATE_RULES, type LimiterStore, slowdownDelayMs } from './rate-limit.ts';

const logger = createLogger('silent');

async function exhausts(store: LimiterStore): Promise<void> {
  const limiter = createLimiterFactory(store, logger)(`t_${randomBytes(4).toString('hex')}`, {
    points: 2,
    durationS: 60,
  });
  // Postgres creates its table in the background; the memory insurance counts meanwhile.
  await new Promise((r) => setTimeout(r, 300));
  await limiter.consume('1.2.3.4');
  await limiter.consume('1.2.3.4');
  await assert.rejects(limiter.consume('1.2.3.4'), (e) => e instanceof RateLimiterRes && e.msBeforeNext > 0);
  await limiter.consume('5.6.7.8');
  await countsBackAndForth(store);
}

/** What the sign-in rules use besides consume: penalty and get (slowdown), reward and delete (give back, reset). */
async function countsBackAndForth(store: LimiterStore): Promise<void> {
  const limiter = createLimiterFactory(store, logger)(`c_${randomBytes(4).toString('hex')}`, {
    points: 2,
    durationS: 60,
  });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await limiter.get('a@example.com'), null);
  await limiter.penalty('a@example.com');
  await limiter.penalty('a@example.com');
  assert.equal((await limiter.get('a@example.com'))?.consumedPoints, 2);
  await limiter.reward('a@example.com');
  await limiter.consume('a@example.com');
  await assert.rejects(limiter.consume('a@example.com'));
  await limiter.delete('a@example.com');
  await limiter.consume('a@example.com');
}

test('memory store refuses past the budget, per key', () => exhausts({ kind: 'memory' }));

test('postgres store refuses past the budget', {
  skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set',
}, async () => {
  const pool = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2 });
  try {
    await exhausts({ kind: 'postgres', pool });
  } finally {
    await pool.end();
  }
});

test('redis store refuses past the budget', async (t) => {
  const client = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await client.connect();
  } catch {
    t.skip('no Redis at TEST_REDIS_URL or 127.0.0.1:6379');
    client.disconnect();
    return;
  }
  try {
    await exhausts({ kind: 'redis', client });
  } finally {
    await client.quit();
  }
});

test('the sign-in slowdown pauses only past the free failures, doubling up to its cap', () => {
  const s = { freeFailures: 3, baseDelayMs: 500, maxDelayMs: 1800, durationS: 60 };
  assert.deepEqual(
    [0, 3, 4, 5, 6, 7, 100].map((n) => slowdownDelayMs(n, s)),
    [0, 0, 500, 1000, 1800, 1800, 1800],
  );
});

test('by default sign-in refuses per IP and per (account, IP) only, and slows per account by at most a few seconds', () => {
  const rule = DEFAULT_AUTH_RATE_RULES['/sign-in/email'];
  assert.ok(rule?.pairCountsFailuresOnly && rule.pair && rule.slowdown);
  assert.equal(rule.account, undefined, 'no per-account refusal: anyone could use it up');
  assert.ok(rule.slowdown.maxDelayMs <= 5000);
  assert.ok(rule.slowdown.freeFailures >= rule.pair.points, 'one address alone is stopped before the slowdown');
});
