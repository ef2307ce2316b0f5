/**
 * The server entry point and the only module with side effects. A gateway (the default role):
 * config -> logger -> database (migrated) -> engine (local, or the BRIER_WORKERS pool; loading in the
 * background) -> app -> serve. A worker (BRIER_ROLE=worker): config -> logger -> engine -> the
 * internal inference app -> serve; no database.
 */
import { serve } from '@hono/node-server';
import { loadConfig } from './config.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { createEngine } from './engines/create.ts';
import { createEngineHost } from './engines/host.ts';
import { serverTimeouts } from './http/server-options.ts';
import { createLogger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { createServices } from './services.ts';
import { buildWorkerApp } from './worker/app.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);

/** What a role serves and how it winds down after its server has closed. */
interface Role {
  fetch: (request: Request) => Response | Promise<Response>;
  close(): Promise<void>;
}

const engine = await createEngine(config, {
  health: (worker, healthy, why) =>
    healthy
      ? logger.info({ worker }, 'inference worker healthy')
      : logger.warn({ worker, why }, 'inference worker down'),
});

async function gateway(): Promise<Role> {
  const db = await openDb(config.databaseUrl, { logger, timeoutMs: config.dbTimeoutMs });
  const applied = await migrate(db);
  logger.info({ dialect: db.dialect, applied }, 'database ready');
  if (db.dialect === 'postgres' && !config.authSecret) {
    logger.warn(
      'no BRIER_AUTH_SECRET: sessions are signed with a secret generated into this data dir, so a session started on another replica is not valid here; give every replica the same BRIER_AUTH_SECRET',
    );
  }
  const services = createServices(db, engine, logger, config);
  await services.checkFallbacks();
  return {
    fetch: services.app.fetch,
    async close() {
      await services.close();
      await db.close();
    },
  };
}

function worker(): Role {
  const host = createEngineHost(engine, { queueLimit: config.queueLimit, timeoutMs: config.requestTimeoutMs });
  const metrics = createMetrics();
  metrics.observeQueue(host.scheduler);
  engine.attachMetrics?.(metrics.engine);
  const app = buildWorkerApp({
    host,
    token: config.workerToken ?? '',
    queueLimit: config.queueLimit,
    maxBodyBytes: 2 * config.maxBodyBytes + 65_536,
    logger,
    metrics: config.metricsEnabled ? { metrics, token: config.metricsToken } : undefined,
  });
  return { fetch: app.fetch, close: async () => {} };
}

const role = config.role === 'worker' ? worker() : await gateway();
const server = serve(
  {
    fetch: role.fetch,
    port: config.port,
    hostname: config.host,
    serverOptions: serverTimeouts(config.http),
  },
  (info) => {
    logger.info({ url: `http://${config.host}:${info.port}`, role: config.role, model: engine.info.id }, 'listening');
  },
);

const loading = engine.load().then(
  () => {
    logger.info({ model: engine.info.id, limits: engine.limits }, 'engine ready');
    const calibration = engine.calibration;
    if (calibration && !calibration.calibrated) {
      logger.warn(
        { calibration: calibration.mode, key: calibration.key },
        calibration.mode === 'raw'
          ? 'the model is not calibrated and is served raw (BRIER_UNCALIBRATED=raw): run `npm run brier -- models calibrate`'
          : 'the model is not calibrated for every question type: those answers are mixed half and half with the uniform answer; run `npm run brier -- models calibrate`',
      );
    }
  },
  (err: unknown) => {
    logger.fatal({ err }, 'engine failed to load');
    process.exitCode = 1;
    void shutdown('engine failure');
  },
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: draining requests');
  const force = setTimeout(() => {
    logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, config.requestTimeoutMs + 5000);
  force.unref();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive sockets would hold close() open: close each as soon as its last request is answered.
  const reaper = setInterval(() => 'closeIdleConnections' in server && server.closeIdleConnections(), 50);
  await closed;
  clearInterval(reaper);
  await role.close();
  await loading.catch(() => undefined);
  await engine.close();
  logger.info('stopped');
}

/**
 * The server owns SIGTERM and SIGINT, whatever a library does with them. node-llama-cpp imports
 * proper-lockfile when the GGUF engine is first imported (a GGUF teacher's first call, or BRIER_MODEL),
 * and its signal-exit adds a listener to both signals that re-raises the signal, killing the process, when it
 * finds itself the only listener left: with `process.once` ours removed itself as the signal arrived,
 * so the process died mid-drain (issue 41). Ours stays registered for the whole run, and a signal
 * listener any module adds later is removed (signal-exit's exit hooks still run, on the exit that the
 * drain ends in). A second signal exits at once.
 */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
function onSignal(signal: NodeJS.Signals): void {
  if (!stopping) return void shutdown(signal);
  logger.warn({ signal }, 'second signal: exiting without waiting for the drain');
  process.exit(1);
}
for (const signal of SIGNALS) process.on(signal, onSignal);
process.on('newListener', (event, listener) => {
  if (!SIGNALS.includes(event as (typeof SIGNALS)[number]) || listener === onSignal) return;
  // It is added once this callback returns; the microtask runs before the event loop can deliver a signal.
  queueMicrotask(() => process.removeListener(event, listener as () => void));
  logger.debug({ signal: event }, "a library's signal listener was removed: this server shuts down by itself");
});
