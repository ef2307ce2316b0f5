import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { createLogger } from '../../observability/logger.ts';
import { createLimiterFactory, type LimiterStore } from './rate-limit.ts';

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
