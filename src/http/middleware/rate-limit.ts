import { setTimeout as sleep } from 'node:timers/promises';
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
import { fail } from '../../lib/errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AppEnv } from '../env.ts';

/** Where counters live: this process's memory, PostgreSQL (shared by instances) or Redis. */
export type LimiterStore = { kind: 'memory' } | { kind: 'postgres'; pool: pg.Pool } | { kind: 'redis'; client: Redis };

export interface Limit {
  points: number;
  durationS: number;
}

/**
 * A pause before each attempt on an account that grows with the account's recent failures (from any
 * IP): none up to `freeFailures`, then `baseDelayMs`, doubling with each further failure up to
 * `maxDelayMs`. It slows an attacker spread over many addresses without ever refusing the owner.
 */
export interface Slowdown {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Failures are counted in windows of this many seconds. */
  durationS: number;
}

/**
 * Budgets of one auth action. The account is the email in the body. A refusal (429) counts against
 * nothing, so that hammering a closed door does not also use up the other budgets.
 */
export interface AuthRateRule {
  what: string;
  /** Per client IP, every attempt: it also bounds the password hashing one address can ask for. */
  ip: Limit;
  /** Per (account, client IP): one address that asks about an account uses up its own budget only. */
  pair?: Limit;
  /** Per account across IPs: a hard cap (the mail one account is sent). Never on sign-in: anyone could use it up. */
  account?: Limit;
  /**
   * Sign-in: the pair budget counts only the attempts answered 401 (a wrong password or an unknown
   * account); another answer gives its pair point back, and a success (2xx) clears the pair's count.
   */
  pairCountsFailuresOnly?: boolean;
  /** Per account across IPs: a growing pause instead of a refusal; it counts the attempts answered 401. */
  slowdown?: Slowdown;
}

/**
 * Auth paths (below /control/v1/auth) and their budgets. Sign-in: per IP every attempt counts, per
 * (account, IP) the failures, and per account the failures only slow attempts down, so that knowing
 * an email is not enough to lock its owner out. The mail-sending paths cap per (account, IP)
 * first, so that one address alone cannot use up the account's cap and block the owner's own reset or
 * verification email; the account cap still bounds the mail an account gets.
 */
export const DEFAULT_AUTH_RATE_RULES: Record<string, AuthRateRule> = {
  '/sign-in/email': {
    what: 'sign-in',
    ip: { points: 30, durationS: 900 },
    pair: { points: 10, durationS: 900 },
    pairCountsFailuresOnly: true,
    slowdown: { freeFailures: 10, baseDelayMs: 500, maxDelayMs: 4000, durationS: 900 },
  },
  '/sign-up/email': {
    what: 'sign-up',
    ip: { points: 10, durationS: 3600 },
    pair: { points: 5, durationS: 3600 },
    account: { points: 10, durationS: 3600 },
  },
  '/send-verification-email': {
    what: 'verification email',
    ip: { points: 10, durationS: 3600 },
    pair: { points: 3, durationS: 3600 },
    account: { points: 10, durationS: 3600 },
  },
  '/verify-email': { what: 'verification', ip: { points: 30, durationS: 900 } },
  '/request-password-reset': {
    what: 'password reset',
    ip: { points: 10, durationS: 3600 },
    pair: { points: 3, durationS: 3600 },
    account: { points: 10, durationS: 3600 },
  },
  '/reset-password': { what: 'password reset', ip: { points: 20, durationS: 3600 } },
};

/** The pause before an attempt on an account that has failed `failures` times in the current window. */
export function slowdownDelayMs(failures: number, slowdown: Slowdown): number {
  const over = failures - slowdown.freeFailures;
  if (over <= 0) return 0;
  return Math.min(slowdown.maxDelayMs, slowdown.baseDelayMs * 2 ** (over - 1));
}

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

/**
 * The client address: what the client-address middleware resolved (X-Forwarded-For only from
 * BRIER_TRUSTED_PROXIES), else the socket's peer.
 */
export function clientIp(c: Context): string {
  const resolved = (c as Context<AppEnv>).get('clientIp');
  if (resolved) return resolved;
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

/** A limiter that counts without ever refusing: the slowdown reads its count. */
const UNCAPPED = 1_000_000_000;

/**
 * Applies DEFAULT_AUTH_RATE_RULES (or `rules`) to the auth paths. A refusal is a 429 with retry-after;
 * its message names the action, never whether the account exists.
 */
export function authRateLimit(
  limiter: LimiterFactory,
  basePath: string,
  rules: Record<string, AuthRateRule> = DEFAULT_AUTH_RATE_RULES,
) {
  const built = new Map(
    Object.entries(rules).map(([path, rule]) => {
      const name = path.replaceAll('/', '_');
      return [
        `${basePath}${path}`,
        {
          rule,
          ip: limiter(`ip${name}`, rule.ip),
          pair: rule.pair ? limiter(`pair${name}`, rule.pair) : undefined,
          account: rule.account ? limiter(`acct${name}`, rule.account) : undefined,
          slowdown: rule.slowdown
            ? {
                limiter: limiter(`slow${name}`, { points: UNCAPPED, durationS: rule.slowdown.durationS }),
                ...rule.slowdown,
              }
            : undefined,
        },
      ];
    }),
  );
  return createMiddleware<AppEnv>(async (c, next) => {
    const entry = built.get(c.req.path);
    if (!entry || c.req.method === 'OPTIONS') return next();
    const ip = clientIp(c);
    const email = entry.pair || entry.account || entry.slowdown ? await emailOf(c) : undefined;
    // The IP never contains a space, so the first one ends it.
    const pairKey = email === undefined ? undefined : `${ip} ${email}`;

    const taken: { limiter: RateLimiterAbstract; key: string }[] = [];
    const take = async (l: RateLimiterAbstract | undefined, key: string | undefined) => {
      if (!l || key === undefined) return;
      await l.consume(key);
      taken.push({ limiter: l, key });
    };
    const giveBack = () => Promise.all(taken.map(({ limiter: l, key }) => l.reward(key)));
    try {
      await take(entry.ip, ip);
      await take(entry.pair, pairKey);
      await take(entry.account, email);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      await giveBack();
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw fail('RATE_LIMITED', `too many ${entry.rule.what} attempts; retry after ${retryAfter} seconds`, {
        retryAfter,
      });
    }

    const slowdown = entry.slowdown;
    if (slowdown && email !== undefined) {
      const failures = (await slowdown.limiter.get(email))?.consumedPoints ?? 0;
      const delay = slowdownDelayMs(failures, slowdown);
      if (delay > 0) await sleep(delay);
    }

    await next();

    if (c.res.status === 401) {
      if (slowdown && email !== undefined) await slowdown.limiter.penalty(email);
      return;
    }
    if (entry.rule.pairCountsFailuresOnly && entry.pair && pairKey !== undefined) {
      if (c.res.status < 300) await entry.pair.delete(pairKey);
      else await entry.pair.reward(pairKey);
    }
  });
}
