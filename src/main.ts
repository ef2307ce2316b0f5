/**
 * The server entry point and the only module with side effects:
 * config -> logger -> database (migrated) -> engine (loading in the background) -> app -> serve.
 */
import { serve } from '@hono/node-server';
import { loadConfig } from './config.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { createEngine } from './engines/create.ts';
import { serverTimeouts } from './http/server-options.ts';
import { createLogger } from './observability/logger.ts';
import { createServices } from './services.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const db = await openDb(config.databaseUrl, { logger });
const applied = await migrate(db);
logger.info({ dialect: db.dialect, applied }, 'database ready');

const engine = await createEngine(config);
const services = createServices(db, engine, logger, config);
const server = serve(
  {
    fetch: services.app.fetch,
    port: config.port,
    hostname: config.host,
    serverOptions: serverTimeouts(config.http),
  },
  (info) => {
    logger.info({ url: `http://${config.host}:${info.port}`, model: engine.info.id }, 'listening');
  },
);

const loading = engine.load().then(
  () => logger.info({ model: engine.info.id, limits: engine.limits }, 'engine ready'),
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
  await services.close();
  await loading.catch(() => undefined);
  await engine.close();
  await db.close();
  logger.info('stopped');
}

process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
