import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildApp } from './app.ts';
import { createAuth } from './auth/create-auth.ts';
import { resolveAuthSecret } from './auth/secret.ts';
import type { OAuthClient, RateLimitStore } from './config.ts';
import type { Db } from './db/open.ts';
import { createAccountDeletion } from './domain/account-deletion.ts';
import { createAccountService } from './domain/accounts.ts';
import { createKeyService } from './domain/keys.ts';
import { createUsageRecorder } from './domain/usage.ts';
import { createUsageReporter } from './domain/usage-report.ts';
import { createUsedLinks } from './domain/verification-links.ts';
import type { DecisionEngine } from './engines/engine.ts';
import { createEngineHost } from './engines/host.ts';
import { type AuthRateRule, createLimiterFactory, type LimiterStore } from './http/middleware/rate-limit.ts';
import { createMailer } from './mail/create.ts';
import type { Mailer } from './mail/mailer.ts';
import type { Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import type { SignInProvider } from './routes/control/auth-providers/route.ts';
import { createSystemOne } from './systemone/serve.ts';

export interface ServiceOptions {
  queueLimit: number;
  requestTimeoutMs: number;
  usageFlushMs: number;
  keyCacheTtlMs: number;
  maxKeysPerAccount: number;
  maxBodyBytes: number;
  /** Byte limit of control-plane bodies (default 16 KiB). */
  controlMaxBodyBytes?: number | undefined;
  siteOrigin: string | undefined;
  /** Where the generated dev auth secret lives when none is configured. */
  dataDir?: string | undefined;
  /** Needed for RATE_LIMIT_STORE=postgres. */
  databaseUrl?: string | undefined;
  authSecret?: string | undefined;
  /** Default http://127.0.0.1 (tests). */
  publicUrl?: string | undefined;
  smtpUrl?: string | undefined;
  mailFrom?: string | undefined;
  oidc?: (OAuthClient & { issuer: string; name: string }) | undefined;
  github?: OAuthClient | undefined;
  google?: OAuthClient | undefined;
  rateLimitStore?: RateLimitStore | undefined;
  redisUrl?: string | undefined;
  /** Overrides SMTP / log mail (tests capture messages with it). */
  mailer?: Mailer | undefined;
  /** Overrides the auth rate-limit budgets (tests). */
  authRateRules?: Record<string, AuthRateRule> | undefined;
  /** Serve GET /metrics (default true); with a token it needs that bearer. */
  metricsEnabled?: boolean | undefined;
  metricsToken?: string | undefined;
  /** The built web console served at /console (default dist/console). */
  consoleDir?: string | undefined;
  docsDir?: string | undefined;
  /** Model card folder shown on the console's model page (default: models/brier-lite for brier-lite engines). */
  modelCardDir?: string | undefined;
}

const BRIER_LITE_CARD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../models/brier-lite');

/** The sign-in buttons the console shows, from what is configured. */
function signInProviders(options: ServiceOptions): SignInProvider[] {
  const list: SignInProvider[] = [];
  if (options.oidc) list.push({ id: 'oidc', name: options.oidc.name });
  if (options.github) list.push({ id: 'github', name: 'GitHub' });
  if (options.google) list.push({ id: 'google', name: 'Google' });
  return list;
}

function limiterStore(options: ServiceOptions): { store: LimiterStore; close: () => Promise<void> } {
  if (options.rateLimitStore === 'redis') {
    if (!options.redisUrl) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
    const client = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
    return { store: { kind: 'redis', client }, close: async () => void (await client.quit().catch(() => undefined)) };
  }
  if (options.rateLimitStore === 'postgres') {
    if (!options.databaseUrl?.startsWith('postgres'))
      throw new Error('RATE_LIMIT_STORE=postgres needs a postgres:// DATABASE_URL');
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 4 });
    return { store: { kind: 'postgres', pool }, close: () => pool.end() };
  }
  return { store: { kind: 'memory' }, close: async () => {} };
}

/**
 * Wires the services and the app over an open database and a (possibly still loading) engine.
 * Shared by main.ts and the test harness so that tests run the same graph as production.
 */
export function createServices(db: Db, engine: DecisionEngine, logger: Logger, options: ServiceOptions) {
  const keys = createKeyService(db, {
    maxKeysPerAccount: options.maxKeysPerAccount,
    cacheTtlMs: options.keyCacheTtlMs,
  });
  const accounts = createAccountService(db);
  const usage = createUsageRecorder(db, {
    flushMs: options.usageFlushMs,
    onError: (err, pending) => logger.error({ err, pending }, 'usage flush failed; will retry'),
  });
  // The one owner of the model: its queue, its limits, its token counting.
  const host = createEngineHost(engine, { queueLimit: options.queueLimit, timeoutMs: options.requestTimeoutMs });
  const systemOne = createSystemOne(host);
  // Metrics: the registry the HTTP middleware records into, queue gauges read from the scheduler, the engine's cache/batch hook.
  const metrics = createMetrics();
  metrics.observeQueue(host.scheduler);
  engine.attachMetrics?.(metrics.engine);

  const publicUrl = (options.publicUrl ?? 'http://127.0.0.1').replace(/\/+$/, '');
  const mailer =
    options.mailer ??
    createMailer({ smtpUrl: options.smtpUrl, mailFrom: options.mailFrom ?? 'Brier <no-reply@localhost>' }, logger);
  const auth = createAuth({
    db,
    secret: resolveAuthSecret(options.authSecret, options.dataDir),
    publicUrl,
    trustedOrigins: options.siteOrigin ? [options.siteOrigin] : [],
    mailer,
    logger,
    oidc: options.oidc,
    github: options.github,
    google: options.google,
  });
  const limits = limiterStore(options);
  const app = buildApp({
    db,
    engine,
    keys,
    usage,
    systemOne,
    logger,
    maxBodyBytes: options.maxBodyBytes,
    controlMaxBodyBytes: options.controlMaxBodyBytes ?? 16_384,
    siteOrigin: options.siteOrigin,
    metrics: options.metricsEnabled === false ? undefined : { metrics, token: options.metricsToken },
    control: {
      auth,
      accounts,
      usedLinks: createUsedLinks(db),
      reporter: createUsageReporter(db),
      deletion: createAccountDeletion(db, keys, usage),
      limiter: createLimiterFactory(limits.store, logger),
      authRateRules: options.authRateRules,
      publicUrl,
      providers: signInProviders(options),
      modelCardDir: options.modelCardDir ?? (engine.info.id.startsWith('brier-lite') ? BRIER_LITE_CARD : undefined),
      consoleDir: options.consoleDir,
      docsDir: options.docsDir,
    },
  });

  /** Drains what is buffered and closes mail and rate-limit clients; the caller closes the engine and the database afterwards. */
  async function close(): Promise<void> {
    await usage.close();
    await mailer.close();
    await limits.close();
  }
  return { app, keys, accounts, usage, host, systemOne, auth, mailer, metrics, close };
}

export type Services = ReturnType<typeof createServices>;
