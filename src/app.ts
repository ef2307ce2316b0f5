import { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { AUTH_BASE_PATH, type Auth } from './auth/create-auth.ts';
import type { Db } from './db/open.ts';
import type { AccountDeletion } from './domain/account-deletion.ts';
import type { KeyService } from './domain/keys.ts';
import type { UsageRecorder } from './domain/usage.ts';
import type { UsageReporter } from './domain/usage-report.ts';
import type { DecisionEngine } from './engines/engine.ts';
import type { AppEnv } from './http/env.ts';
import { errorResponse, fromZodError } from './http/errors.ts';
import { apiKeyAuth } from './http/middleware/api-key-auth.ts';
import { bodyGuard, connectionHygiene } from './http/middleware/body-guard.ts';
import { csrf } from './http/middleware/csrf.ts';
import { type AuthRateRule, authRateLimit, type LimiterFactory } from './http/middleware/rate-limit.ts';
import { requestId } from './http/middleware/request-id.ts';
import { requestLog } from './http/middleware/request-log.ts';
import { sessionAuth } from './http/middleware/session-auth.ts';
import { usageMeter } from './http/middleware/usage-meter.ts';
import { DEFAULT_CONSOLE_DIR, DEFAULT_DOCS_DIR, registerConsoleStatic, registerDocsStatic } from './http/static.ts';
import { fail } from './lib/errors.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import { registerAccount } from './routes/control/account/route.ts';
import { registerAuth } from './routes/control/auth/route.ts';
import { registerAuthProviders, type SignInProvider } from './routes/control/auth-providers/route.ts';
import { registerKeys } from './routes/control/keys/route.ts';
import { registerConsoleModel } from './routes/control/model/route.ts';
import { PLAYGROUND_PATH, registerPlayground } from './routes/control/playground/route.ts';
import { registerUsage } from './routes/control/usage/route.ts';
import { registerHealthz } from './routes/healthz/route.ts';
import { registerModels } from './routes/v1/models/route.ts';
import { registerSystemOne } from './routes/v1/systemone/route.ts';
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
  reporter: UsageReporter;
  deletion: AccountDeletion;
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

/** Builds the whole HTTP surface from its dependencies; no side effects beyond routing. */
export function buildApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodError(result.error, 'data' in result ? result.data : undefined);
    },
  });

  app.use('*', requestId());
  app.use('*', connectionHygiene());
  // Metrics (issue 6): times and counts every request by its matched route pattern.
  if (deps.metrics) app.use('*', deps.metrics.metrics.middleware());
  app.use('*', requestLog(deps.logger));

  const v1 = ['/v1/*'];
  if (deps.siteOrigin) {
    for (const path of v1) {
      app.use(
        path,
        cors({
          origin: deps.siteOrigin,
          allowHeaders: ['authorization', 'content-type'],
          exposeHeaders: ['x-typesafe-request-id', 'x-request-id', 'retry-after'],
          credentials: false,
          maxAge: 600,
        }),
      );
    }
  }
  const control = deps.control;
  const trustedOrigins = [new URL(control.publicUrl).origin, ...(deps.siteOrigin ? [deps.siteOrigin] : [])];
  if (deps.siteOrigin) {
    // The console on the documentation site sends the session cookie: credentials here, not on /v1.
    app.use(
      '/control/v1/*',
      cors({
        origin: deps.siteOrigin,
        allowHeaders: ['authorization', 'content-type'],
        allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
        exposeHeaders: ['x-typesafe-request-id', 'x-request-id', 'retry-after'],
        credentials: true,
        maxAge: 600,
      }),
    );
  }
  // Every body is bounded before anything parses it: the inference routes at BRIER_MAX_BODY_BYTES,
  // the rest of the control plane at BRIER_CONTROL_MAX_BODY_BYTES. Auth bodies are read before the
  // rate limiter looks for the email in them; the others only once their credential is checked.
  const guard = bodyGuard({
    limitFor: (path) =>
      path === PLAYGROUND_PATH || path.startsWith('/v1/') ? deps.maxBodyBytes : deps.controlMaxBodyBytes,
    maxDepth: MAX_JSON_DEPTH,
    acceptsForm: (path) =>
      path.startsWith(`${AUTH_BASE_PATH}/callback/`) || path.startsWith(`${AUTH_BASE_PATH}/oauth2/callback/`),
  });
  app.use('/control/v1/*', csrf(trustedOrigins));
  app.use(`${AUTH_BASE_PATH}/*`, guard);
  app.use(`${AUTH_BASE_PATH}/*`, authRateLimit(control.limiter, AUTH_BASE_PATH, control.authRateRules));
  for (const path of [
    '/control/v1/keys',
    '/control/v1/keys/*',
    '/control/v1/account',
    '/control/v1/model',
    PLAYGROUND_PATH,
  ]) {
    app.use(path, sessionAuth(control.auth));
    app.use(path, guard);
  }

  app.use('/v1/*', apiKeyAuth(deps.keys));
  // Metered before the body is read, so that refusals of the body (413, 415, 400) are counted too.
  app.use('/v1/systemone', usageMeter(deps.usage, '/v1/systemone'));
  app.use('/v1/*', guard);

  registerHealthz(app, deps.engine, deps.db);
  // GET /metrics (issue 6): open unless BRIER_METRICS_TOKEN is set; keep it off the public gateway.
  if (deps.metrics) deps.metrics.metrics.register(app, deps.metrics.token);
  registerModels(app, deps.engine);
  registerSystemOne(app, deps.systemOne);
  registerAuth(app, { auth: control.auth, db: deps.db });
  registerKeys(app, deps.keys);
  registerAuthProviders(app, control.providers ?? []);
  registerPlayground(app, { systemOne: deps.systemOne, usage: deps.usage });
  registerConsoleModel(app, { engine: deps.engine, modelCardDir: control.modelCardDir });
  registerUsage(app, { auth: control.auth, keys: deps.keys, usage: deps.usage, reporter: control.reporter });
  const secure = control.publicUrl.startsWith('https://');
  registerAccount(app, {
    db: deps.db,
    deletion: control.deletion,
    clearCookies: ['session_token', 'session_data', 'dont_remember'].map(
      (name) =>
        `${secure ? '__Secure-' : ''}brier.${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    ),
  });

  registerConsoleStatic(app, { dir: control.consoleDir ?? DEFAULT_CONSOLE_DIR, basePath: '/console' });
  registerDocsStatic(app, { dir: control.docsDir ?? DEFAULT_DOCS_DIR, basePath: '/docs' });

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: brier_sk_...',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: `${control.publicUrl.startsWith('https://') ? '__Secure-' : ''}brier.session_token`,
    description: 'The console session, set by /control/v1/auth/sign-in/* (HttpOnly, SameSite=Lax)',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'Brier API', version: '1.0.0', description: 'Decision probabilities over the System One protocol.' },
  });

  app.notFound(() => {
    throw fail('NOT_FOUND', 'no such route');
  });
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      // What hono's validators still refuse once the body guard has passed a body: none at all.
      if (/unsupported media type/i.test(error.message)) {
        const type = c.req.header('content-type');
        const got = type ? JSON.stringify(type.slice(0, 80)) : 'none';
        return errorResponse(c, fail('UNSUPPORTED_MEDIA_TYPE', `content-type: must be application/json, got ${got}`));
      }
      const code = error.status === 400 ? 'INVALID_JSON' : 'BAD_REQUEST';
      return errorResponse(
        c,
        fail(code, code === 'INVALID_JSON' ? `body is not valid JSON: ${error.message}` : error.message),
      );
    }
    const response = errorResponse(c, error);
    if (response.status >= 500 && response.status !== 503) {
      deps.logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    }
    return response;
  });
  return app;
}

export type App = ReturnType<typeof buildApp>;
