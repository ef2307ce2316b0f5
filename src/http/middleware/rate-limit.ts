import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { fail } from '../../domain/errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AppEnv } from '../env.ts';

/** Where counters live: this process's memory, PostgreSQL (shared by instances) or Redis. */
export type LimiterStore = { kind: 'memory' } | { kind: 'postgres'; pool: pg.Pool } | { kind: 'redis'; client: Redis };

export interface Limit {
  points: number;
  durationS: number;
}

/** One rule per auth action: a budget per client IP and one per account (the email in the body). */
export interface AuthRateRule {
  what: string;
  ip: Limit;
  account?: Limit;
}

/** Auth paths (below /control/v1/auth) and their budgets. */
export const DEFAULT_AUTH_RATE_RULES: Record<string, AuthRateRule> = {
  '/sign-in/email': { what: 'sign-in', ip: { points: 30, durationS: 900 }, account: { points: 10, durationS: 900 } },
  '/sign-up/email': { what: 'sign-up', ip: { points: 10, durationS: 3600 }, account: { points: 5, durationS: 3600 } },
  '/send-verification-email': {
    what: 'verification email',
    ip: { points: 10, durationS: 3600 },
    account: { points: 3, durationS: 3600 },
  },
  '/verify-email': { what: 'verification', ip: { points: 30, durationS: 900 } },
  '/request-password-reset': {
    what: 'password reset',
    ip: { points: 10, durationS: 3600 },
    account: { points: 3, durationS: 3600 },
  },
  '/reset-password': { what: 'password reset', ip: { points: 20, durationS: 3600 } },
};

/** Builds rate limiters over the configured store; Postgres and Redis fall back to memory if the store fails. */
export function createLimiterFactory(store: LimiterStore, logger: Logger) {
  return function limiter(name: string, limit: Limit): RateLimiterAbstract {
    const base = { keyPrefix: `brier_${name}`, points: limit.points, duration: limit.durationS };
    const insuranceLimiter = new RateLimiterMemory(base);
    if (store.kind === 'redis') return new RateLimiterRedis({ ...base, storeClient: store.client, insuranceLimiter });
    if (store.kind === 'postgres') {
      return new RateLimiterPostgres(
        { ...base, storeClient: store.pool, tableName: 'brier_rate_limit', insuranceLimiter },
        (err: unknown) => {
          if (err) logger.warn({ err }, 'rate limit table not ready; counting in memory meanwhile');
        },
      );
    }
    return insuranceLimiter;
  };
}

export type LimiterFactory = ReturnType<typeof createLimiterFactory>;

/** The client address as the socket sees it (proxies are not trusted: X-Forwarded-For can be forged). */
export function clientIp(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

async function emailOf(c: Context): Promise<string | undefined> {
  if (!c.req.header('content-type')?.includes('application/json')) return undefined;
  try {
    const body: unknown = await c.req.raw.clone().json();
    if (body && typeof body === 'object' && 'email' in body && typeof body.email === 'string') {
      return body.email.trim().toLowerCase().slice(0, 320);
    }
  } catch {
    // Malformed bodies are refused by the handler; they still count against the IP.
  }
  return undefined;
}

/**
 * Per-IP and per-account budgets on sign-in, sign-up, verification and password reset. A refusal is
 * a 429 with retry-after; its message names the action, never whether the account exists.
 */
export function authRateLimit(
  limiter: LimiterFactory,
  basePath: string,
  rules: Record<string, AuthRateRule> = DEFAULT_AUTH_RATE_RULES,
) {
  const built = new Map(
    Object.entries(rules).map(([path, rule]) => [
      `${basePath}${path}`,
      {
        rule,
        ip: limiter(`ip${path.replaceAll('/', '_')}`, rule.ip),
        account: rule.account ? limiter(`acct${path.replaceAll('/', '_')}`, rule.account) : undefined,
      },
    ]),
  );
  return createMiddleware<AppEnv>(async (c, next) => {
    const entry = built.get(c.req.path);
    if (!entry || c.req.method === 'OPTIONS') return next();
    const refuse = (res: unknown) => {
      if (!(res instanceof RateLimiterRes)) throw res;
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      return fail('RATE_LIMITED', `too many ${entry.rule.what} attempts; retry after ${retryAfter} seconds`, {
        retryAfter,
      });
    };
    try {
      await entry.ip.consume(clientIp(c));
      if (entry.account) {
        const email = await emailOf(c);
        if (email) await entry.account.consume(email);
      }
    } catch (res) {
      throw refuse(res);
    }
    await next();
  });
}
