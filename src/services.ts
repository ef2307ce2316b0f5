import { buildApp } from './app.ts';
import type { Db } from './db/open.ts';
import { createAccountService } from './domain/accounts.ts';
import { createDecisionService } from './domain/decisions.ts';
import { createKeyService } from './domain/keys.ts';
import { createUsageRecorder } from './domain/usage.ts';
import type { DecisionEngine } from './engines/engine.ts';
import { createScheduler } from './engines/scheduler.ts';
import type { Logger } from './observability/logger.ts';

export interface ServiceOptions {
  queueLimit: number;
  requestTimeoutMs: number;
  usageFlushMs: number;
  keyCacheTtlMs: number;
  maxKeysPerAccount: number;
  maxBodyBytes: number;
  siteOrigin: string | undefined;
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
  const scheduler = createScheduler({ limit: options.queueLimit, timeoutMs: options.requestTimeoutMs });
  const decisions = createDecisionService(engine, scheduler);
  const app = buildApp({
    db,
    engine,
    keys,
    usage,
    decisions,
    logger,
    maxBodyBytes: options.maxBodyBytes,
    siteOrigin: options.siteOrigin,
  });

  /** Drains what is buffered; the caller closes the engine and the database afterwards. */
  async function close(): Promise<void> {
    await usage.close();
  }
  return { app, keys, accounts, usage, scheduler, decisions, close };
}

export type Services = ReturnType<typeof createServices>;
