import type { Db } from './db/open.ts';
import type { KeyService } from './domain/keys.ts';
import type { UsageRecorder } from './domain/usage.ts';
import type { DecisionEngine } from './engines/engine.ts';
import { createOpenApiApp } from './http/api.ts';
import { handleErrors, notFound } from './http/errors.ts';
import { createGuards } from './http/middleware/auth.ts';
import { bodyGuard, connectionHygiene } from './http/middleware/body-guard.ts';
import { clientAddress } from './http/middleware/client-address.ts';
import { databaseOutage } from './http/middleware/database-outage.ts';
import { requestId } from './http/middleware/request-id.ts';
import { requestLog } from './http/middleware/request-log.ts';
import { requestMetrics } from './http/middleware/request-metrics.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import { registerConsole } from './routes/console/route.ts';
import { type ControlAppDeps, createControlApp } from './routes/control/app.ts';
import { registerDocs } from './routes/docs/route.ts';
import { type HealthProbes, registerHealthz } from './routes/healthz/route.ts';
import { registerMetrics } from './routes/metrics/route.ts';
import { registerOpenApi } from './routes/openapi/route.ts';
import { registerRoot } from './routes/root/route.ts';
import { createV1App } from './routes/v1/app.ts';
import { MAX_JSON_DEPTH } from './systemone/protocol.ts';
import type { SystemOne } from './systemone/serve.ts';

export interface AppDeps {
  db: Db;
  engine: DecisionEngine;
  keys: KeyService;
  usage: UsageRecorder;
  systemOne: SystemOne;
  logger: Logger;
  /** Byte limit of a /v1/systemone (and playground) body. */
  maxBodyBytes: number;
  /** Byte limit of every other body (sign-up, sign-in, keys...). */
  controlMaxBodyBytes: number;
  siteOrigin: string | undefined;
  control: ControlDeps;
  /** Prometheus metrics: the request middleware and GET /metrics (absent: neither). */
  metrics?: { metrics: Metrics; token: string | undefined } | undefined;
  /** What /healthz reports besides the engine and the database (rate-limit store, workers). */
  health?: HealthProbes | undefined;
  /** Load balancers whose X-Forwarded-For is believed for rate limits (BRIER_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[] | undefined;
}

/** The control plane's own dependencies (the rest it shares with /v1), and where the console and docs builds are. */
export type ControlDeps = Pick<
  ControlAppDeps,
  | 'auth'
  | 'accounts'
  | 'reporter'
  | 'deletion'
  | 'usedLinks'
  | 'limiter'
  | 'authRateRules'
  | 'publicUrl'
  | 'providers'
  | 'mailDelivery'
  | 'modelCardDir'
  | 'teach'
> & {
  /** The built web console (default dist/console); served at /console. */
  consoleDir?: string | undefined;
  /** Built documentation site; default dist/docs. */
  docsDir?: string | undefined;
};

/**
 * Builds the whole HTTP surface from its dependencies; no side effects beyond routing. Around every
 * request: the request id, connection hygiene, metrics and the request log. Then the sub-apps, each
 * applying its own middleware once: /v1 (API keys) and /control/v1 (sessions, CSRF), and the
 * operational and static routes. Each route declares its credential (src/http/api.ts).
 */
export function buildApp(deps: AppDeps) {
  const { control } = deps;
  const app = createOpenApiApp();
  app.use('*', requestId());
  app.use('*', connectionHygiene());
  if (deps.metrics) app.use('*', requestMetrics(deps.metrics.metrics));
  app.use('*', requestLog(deps.logger));
  app.use('*', databaseOutage(deps.db));
  app.use('*', clientAddress(deps.trustedProxies ?? []));

  const guards = createGuards({ keys: deps.keys, auth: control.auth });
  const bodies = {
    inference: bodyGuard({ maxBytes: deps.maxBodyBytes, maxDepth: MAX_JSON_DEPTH, setting: 'BRIER_MAX_BODY_BYTES' }),
    control: bodyGuard({
      maxBytes: deps.controlMaxBodyBytes,
      maxDepth: MAX_JSON_DEPTH,
      setting: 'BRIER_CONTROL_MAX_BODY_BYTES',
    }),
  };
  const common = { guards, bodies, engine: deps.engine, systemOne: deps.systemOne, usage: deps.usage };

  registerRoot(app);
  registerHealthz(app, deps.engine, deps.db, deps.health);
  if (deps.metrics) registerMetrics(app, deps.metrics);
  app.route('/v1', createV1App({ ...common, siteOrigin: deps.siteOrigin, teach: control.teach }));
  app.route(
    '/control/v1',
    createControlApp({
      ...common,
      ...control,
      keys: deps.keys,
      maxBodyBytes: deps.controlMaxBodyBytes,
      siteOrigin: deps.siteOrigin,
    }),
  );
  registerConsole(app, { dir: control.consoleDir });
  registerDocs(app, { dir: control.docsDir });
  registerOpenApi(app, { publicUrl: control.publicUrl });

  app.notFound(notFound);
  app.onError(handleErrors(deps.logger));
  return app;
}

export type App = ReturnType<typeof buildApp>;
