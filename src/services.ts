import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildApp } from './app.ts';
import { createAuth } from './auth/create-auth.ts';
import { resolveAuthSecret } from './auth/secret.ts';
import type { OAuthClient, RateLimitStore, TeacherConfig } from './config.ts';
import type { Db } from './db/open.ts';
import { createAccountDeletion } from './domain/account-deletion.ts';
import { createAccountService } from './domain/accounts.ts';
import { createAdapterStore } from './domain/adapters.ts';
import { createDistillStore } from './domain/distill.ts';
import { createExampleStore } from './domain/examples.ts';
import { createJobQueue } from './domain/jobs.ts';
import { createKeyService } from './domain/keys.ts';
import { createOutcomes } from './domain/outcomes.ts';
import { createRetention } from './domain/retention.ts';
import { createUsageRecorder } from './domain/usage.ts';
import { createUsageReporter } from './domain/usage-report.ts';
import { createUsedLinks } from './domain/verification-links.ts';
import type { UncalibratedPolicy } from './engines/calibrated.ts';
import { calibrationDir } from './engines/create.ts';
import type { DecisionEngine } from './engines/engine.ts';
import type { PromptFormat } from './engines/gguf/frames.ts';
import { createEngineHost } from './engines/host.ts';
import { createTeachers, type TeachersOptions } from './engines/teachers.ts';
import type { EnginePool } from './engines/upstream/pool.ts';
import { type AuthRateRule, createLimiterFactory, type LimiterStore } from './http/middleware/rate-limit.ts';
import { DEFAULT_HUMAN_WEIGHT } from './jobs/distillation.ts';
import { MIN_EXAMPLES_PER_TEMPLATE } from './jobs/job-kit.ts';
import { createJobRunner, type Fitter } from './jobs/runner.ts';
import { DEFAULT_MAX_EXAMPLES_PER_JOB } from './jobs/training.ts';
import { createMailer } from './mail/create.ts';
import type { Mailer } from './mail/mailer.ts';
import type { Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import type { SignInProvider } from './routes/control/auth-providers/route.ts';
import type { RateLimitHealth } from './routes/healthz/route.ts';
import { createAdapterResolver } from './systemone/adapters.ts';
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
  /** Most usage events buffered while the database is down (default 100,000); past it they are dropped and counted. */
  usageBufferMax?: number | undefined;
  /** Load balancers whose X-Forwarded-For is believed for rate limits (BRIER_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[] | undefined;
  /** Per-account limits of labelled examples (default EXAMPLE_LIMITS; tests lower them). */
  exampleLimits?: { perAccount: number; templatesPerAccount: number } | undefined;
  /** Run adapter training jobs in the background (BRIER_TRAINING_JOBS; default false here, on in the server). */
  trainingJobs?: boolean | undefined;
  /** BRIER_LEGACY_EXTENSION_FIELDS: answers also carry `abstained` / `answered_by` (deprecated names). */
  legacyExtensionFields?: boolean | undefined;
  /** Training jobs run at once by this process (BRIER_TRAINING_CONCURRENCY; default: one per two cores). */
  trainingConcurrency?: number | undefined;
  /** Examples one training job reads at most (BRIER_TRAINING_MAX_EXAMPLES; default 20,000). */
  trainingMaxExamples?: number | undefined;
  /** Training jobs: the lease, the queue poll interval (ms) and the fitting step (tests). */
  jobLeaseMs?: number | undefined;
  jobPollMs?: number | undefined;
  /** How long a job retries in place while the engine is unavailable (ms; tests shorten it). */
  jobEngineWaitMs?: number | undefined;
  fitter?: Fitter | undefined;
  /** BRIER_TEACHERS: models distillation jobs learn from and adapters may fall back to (issue 34). */
  teachers?: TeacherConfig[] | undefined;
  /** How teachers' engines are built (tests), GGUF teachers' threads. */
  teacherOptions?: TeachersOptions | undefined;
  /** CPU threads (GGUF teachers use them too). */
  threads?: number | undefined;
  /** BRIER_GGUF_PROMPT: GGUF teachers are prompted as BRIER_MODEL is. */
  ggufPrompt?: PromptFormat | undefined;
  /** BRIER_UNCALIBRATED: teachers read their calibration files (in BRIER_DATA_DIR) as BRIER_MODEL does. */
  uncalibrated?: UncalibratedPolicy | undefined;
}

const MISSING_TEACHER =
  'adapter fallback: no such teacher on this server (BRIER_TEACHERS): these adapters answer every question themselves; configure the teacher again, or turn their fallback off (PUT /control/v1/adapters/{id}/fallback)';

const BRIER_LITE_CARD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../models/brier-lite');

/** The sign-in buttons the console shows, from what is configured. */
function signInProviders(options: ServiceOptions): SignInProvider[] {
  const list: SignInProvider[] = [];
  if (options.oidc) list.push({ id: 'oidc', name: options.oidc.name });
  if (options.github) list.push({ id: 'github', name: 'GitHub' });
  if (options.google) list.push({ id: 'google', name: 'Google' });
  return list;
}

interface Limits {
  store: LimiterStore;
  /** Whether counters are shared right now (false: the store is unreachable, each process counts in memory). */
  health(): RateLimitHealth;
  close(): Promise<void>;
}

function limiterStore(options: ServiceOptions, logger: Logger): Limits {
  if (options.rateLimitStore === 'redis') {
    if (!options.redisUrl) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
    // No offline queue: while Redis is down a command fails at once and rate-limiter-flexible's
    // insurance limiter counts in this process's memory, instead of the request waiting for Redis.
    const client = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(200 * times, 2000),
    });
    let up = false;
    client.on('ready', () => {
      if (!up) logger.info('rate limits: Redis reachable, counting shared');
      up = true;
    });
    client.on('error', (err) => {
      if (up) logger.warn({ err }, 'rate limits: Redis unreachable, counting per process in memory until it is back');
      up = false;
    });
    client.on('end', () => {
      up = false;
    });
    return {
      store: { kind: 'redis', client },
      health: () => ({ store: 'redis', shared: up && client.status === 'ready' }),
      close: async () => void (await client.quit().catch(() => undefined)),
    };
  }
  if (options.rateLimitStore === 'postgres') {
    if (!options.databaseUrl?.startsWith('postgres'))
      throw new Error('RATE_LIMIT_STORE=postgres needs a postgres:// DATABASE_URL');
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 4, connectionTimeoutMillis: 2000 });
    let up = true;
    // A dropped idle connection: the insurance limiter counts meanwhile.
    pool.on('error', () => {
      up = false;
    });
    pool.on('connect', () => {
      up = true;
    });
    return {
      store: { kind: 'postgres', pool },
      health: () => ({ store: 'postgres', shared: up }),
      close: () => pool.end(),
    };
  }
  return { store: { kind: 'memory' }, health: () => ({ store: 'memory', shared: false }), close: async () => {} };
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
    maxPending: options.usageBufferMax,
    onError: (err, pending) => logger.error({ err, pending }, 'usage flush failed; will retry'),
  });
  // The one owner of the model: its queue, its limits, its token counting.
  const host = createEngineHost(engine, { queueLimit: options.queueLimit, timeoutMs: options.requestTimeoutMs });
  // Labelled examples, retention, outcomes, training jobs and adapters (issue 23).
  const jobs = createJobQueue(db);
  // Deleting examples restarts or cancels the jobs that read them, in the deleting transaction.
  const examples = createExampleStore(db, { limits: options.exampleLimits, onDeleted: jobs.examplesDeleted });
  const retention = createRetention(db, {
    cacheTtlMs: options.keyCacheTtlMs,
    onExamplesDeleted: jobs.examplesDeleted,
    onRetainedDeleted: jobs.retainedDeleted,
  });
  const adapters = createAdapterStore(db);
  // Distillation (issue 34): the configured teachers, unlabelled states and soft labels.
  const teachers = createTeachers(options.teachers ?? [], {
    gguf: { threads: options.threads, prompt: options.ggufPrompt },
    // Teachers are calibrated as BRIER_MODEL is (src/engines/calibrated.ts): none teaches raw by default.
    ...(options.dataDir
      ? {
          calibration: {
            dir: calibrationDir({ dataDir: options.dataDir }),
            uncalibrated: options.uncalibrated ?? 'shrink',
          },
        }
      : {}),
    ...options.teacherOptions,
  });
  // Deleting states stops the distillation jobs that read them, in the deleting transaction.
  const distill = createDistillStore(db, {
    onStatesDeleted: jobs.statesDeleted,
  });
  const resolver = createAdapterResolver(adapters, engine, { ttlMs: options.keyCacheTtlMs });
  const teach = {
    examples,
    retention,
    outcomes: createOutcomes({ retention, examples }),
    jobs,
    adapters,
    resolver,
    minExamples: MIN_EXAMPLES_PER_TEMPLATE,
    maxJobExamples: options.trainingMaxExamples ?? DEFAULT_MAX_EXAMPLES_PER_JOB,
    baseModel: () => engine.info.id,
    teachers,
    distill,
    humanWeight: DEFAULT_HUMAN_WEIGHT,
  };
  const runner = createJobRunner({
    jobs,
    examples,
    adapters,
    host,
    logger,
    retention,
    leaseMs: options.jobLeaseMs,
    pollMs: options.jobPollMs,
    fit: options.fitter,
    concurrency: options.trainingConcurrency,
    maxExamples: options.trainingMaxExamples,
    engineWaitMs: options.jobEngineWaitMs,
    teachers,
    distill,
    usage,
  });
  // An adapter's fallback to a teacher this server does not have (issue 41): said once per adapter here,
  // and for all of them at start (checkFallbacks).
  const missingSaid = new Set<string>();
  const systemOne = createSystemOne(host, {
    adapters: resolver,
    legacyExtensionFields: options.legacyExtensionFields,
    teachers,
    onTeacherError: (err, teacher) =>
      logger.warn({ err, teacher }, 'adapter fallback: the teacher failed; the adapter answered'),
    onTeacherMissing: (teacher, adapter) => {
      if (missingSaid.has(adapter)) return;
      missingSaid.add(adapter);
      logger.warn({ teacher, adapter }, MISSING_TEACHER);
    },
  });

  /** Logs the adapters whose fallback names a teacher this server does not have (main.ts, at start). */
  async function checkFallbacks(): Promise<void> {
    for (const [teacher, ids] of await adapters.fallbackTeachers()) {
      if (!teachers.get(teacher))
        logger.warn({ teacher, adapters: ids.length, ids: ids.slice(0, 20) }, MISSING_TEACHER);
    }
  }
  if (options.legacyExtensionFields) {
    logger.warn(
      'BRIER_LEGACY_EXTENSION_FIELDS=on: answers also carry the deprecated `abstained` and `answered_by` next to `x_abstained` and `x_answered_by`; update clients to the x_ names, this option goes in 0.3.0',
    );
  }
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
  const limits = limiterStore(options, logger);
  const pool = 'backends' in engine ? (engine as EnginePool) : undefined;
  metrics.watch(
    'gauge',
    'brier_rate_limit_store_up',
    'Whether rate limits are counted in their shared store now (1), or per process in memory (0: memory store, or the store is down)',
    () => ({ [limits.health().store]: limits.health().shared ? 1 : 0 }),
    'store',
  );
  metrics.watch('gauge', 'brier_usage_buffered', 'Usage events in memory not yet written to the database', () =>
    usage.pendingCount(),
  );
  metrics.watch(
    'counter',
    'brier_usage_dropped_total',
    'Usage events dropped because the buffer was full (BRIER_USAGE_BUFFER_MAX) while the database could not take them',
    () => usage.dropped(),
  );
  if (pool) {
    metrics.watch(
      'gauge',
      'brier_workers',
      'Inference workers of this gateway by state (healthy or down)',
      () => {
        const list = pool.backends();
        const healthy = list.filter((b) => b.healthy).length;
        return { healthy, down: list.length - healthy };
      },
      'state',
    );
    metrics.watch(
      'counter',
      'brier_worker_failovers_total',
      'Requests moved to another worker, by reason (busy: 503; refused: no connection; broken: failed mid-request)',
      () => pool.failovers(),
      'reason',
    );
  }
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
    trustedProxies: options.trustedProxies,
    health: {
      rateLimits: limits.health,
      ...(pool
        ? { workers: () => pool.backends().map((b) => ({ url: b.name, healthy: b.healthy, in_flight: b.inFlight })) }
        : {}),
    },
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
      mailDelivery: mailer.delivery,
      modelCardDir: options.modelCardDir ?? (engine.info.id.startsWith('brier-lite') ? BRIER_LITE_CARD : undefined),
      consoleDir: options.consoleDir,
      docsDir: options.docsDir,
      teach,
    },
  });

  /** Drains what is buffered and closes mail and rate-limit clients; the caller closes the engine and the database afterwards. */
  async function close(): Promise<void> {
    // A running training job is handed back to the queue for another instance (or the next start).
    await runner.stop();
    await usage.close();
    if (usage.pendingCount() > 0) {
      logger.error(
        { lost: usage.pendingCount() },
        'usage events could not be written before shutdown (database unreachable)',
      );
    }
    await mailer.close();
    await limits.close();
    await teachers.close();
  }
  if (options.trainingJobs) runner.start();
  return {
    app,
    keys,
    accounts,
    usage,
    host,
    systemOne,
    auth,
    mailer,
    metrics,
    teach,
    runner,
    teachers,
    checkFallbacks,
    close,
  };
}

export type Services = ReturnType<typeof createServices>;
