import type { Auth } from './auth/create-auth.ts';
import type { Db } from './db/open.ts';
import type { AccountDeletion } from './domain/account-deletion.ts';
import type { AccountService } from './domain/accounts.ts';
import type { KeyService } from './domain/keys.ts';
import type { UsageRecorder } from './domain/usage.ts';
import type { UsageReporter } from './domain/usage-report.ts';
import type { UsedLinks } from './domain/verification-links.ts';
import type { DecisionEngine } from './engines/engine.ts';
import { createOpenApiApp } from './http/api.ts';
import { handleErrors, notFound } from './http/errors.ts';
import { createGuards } from './http/middleware/auth.ts';
import { bodyGuard, connectionHygiene } from './http/middleware/body-guard.ts';
import type { AuthRateRule, LimiterFactory } from './http/middleware/rate-limit.ts';
import { requestId } from './http/middleware/request-id.ts';
import { requestLog } from './http/middleware/request-log.ts';
import { requestMetrics } from './http/middleware/request-metrics.ts';
import { sessionCookies } from './http/session-cookies.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import { registerConsole } from './routes/console/route.ts';
import { createControlApp } from './routes/control/app.ts';
import type { SignInProvider } from './routes/control/auth-providers/route.ts';
import { registerDocs } from './routes/docs/route.ts';
import { registerHealthz } from './routes/healthz/route.ts';
import { registerMetrics } from './routes/metrics/route.ts';
import { registerOpenApi } from './routes/openapi/route.ts';
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
}

/** The control plane (/control/v1): accounts, sessions, keys, usage. */
export interface ControlDeps {
  auth: Auth;
  accounts: AccountService;
  reporter: UsageReporter;
  deletion: AccountDeletion;
  usedLinks: UsedLinks;
  limiter: LimiterFactory;
  authRateRules?: Record<string, AuthRateRule> | undefined;
  /** This server's public URL (cookies are Secure when it is https). */
  publicUrl: string;
  /** Third-party sign-in providers, as the console's sign-in page offers them. */
  providers?: SignInProvider[] | undefined;
  /** Folder with MODEL_CARD.md and report.json of the served model, if it has one. */
  modelCardDir?: string | undefined;
  /** The built web console (default dist/console); served at /console. */
  consoleDir?: string | undefined;
  /** Built documentation site; default dist/docs. */
  docsDir?: string | undefined;
}

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

  const guards = createGuards({ keys: deps.keys, auth: control.auth });
  const bodies = {
    inference: bodyGuard({ maxBytes: deps.maxBodyBytes, maxDepth: MAX_JSON_DEPTH }),
    control: bodyGuard({ maxBytes: deps.controlMaxBodyBytes, maxDepth: MAX_JSON_DEPTH }),
  };
  const cookies = sessionCookies(control.publicUrl);
  const common = { guards, bodies, engine: deps.engine, systemOne: deps.systemOne, usage: deps.usage };

  registerHealthz(app, deps.engine, deps.db);
  if (deps.metrics) registerMetrics(app, deps.metrics);
  app.route('/v1', createV1App({ ...common, siteOrigin: deps.siteOrigin }));
  app.route(
    '/control/v1',
    createControlApp({
      ...common,
      ...control,
      keys: deps.keys,
      maxBodyBytes: deps.controlMaxBodyBytes,
      trustedOrigins: [new URL(control.publicUrl).origin, ...(deps.siteOrigin ? [deps.siteOrigin] : [])],
      siteOrigin: deps.siteOrigin,
      clearCookies: cookies.clear,
      providers: control.providers ?? [],
      modelCardDir: control.modelCardDir,
    }),
  );
  registerConsole(app, { dir: control.consoleDir });
  registerDocs(app, { dir: control.docsDir });
  registerOpenApi(app, { sessionCookie: cookies.token });

  app.notFound(notFound);
  app.onError(handleErrors(deps.logger));
  return app;
}

export type App = ReturnType<typeof buildApp>;
