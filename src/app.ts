import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import type { Db } from './db/open.ts';
import type { DecisionService } from './domain/decisions.ts';
import { fail } from './domain/errors.ts';
import type { KeyService } from './domain/keys.ts';
import type { UsageRecorder } from './domain/usage.ts';
import type { DecisionEngine } from './engines/engine.ts';
import type { AppEnv } from './http/env.ts';
import { errorResponse, fromZodError } from './http/errors.ts';
import { apiKeyAuth } from './http/middleware/api-key-auth.ts';
import { requestId } from './http/middleware/request-id.ts';
import { requestLog } from './http/middleware/request-log.ts';
import { usageMeter } from './http/middleware/usage-meter.ts';
import type { Logger } from './observability/logger.ts';
import { registerHealthz } from './routes/healthz/route.ts';
import { registerModels } from './routes/v1/models/route.ts';
import { registerSystemOne } from './routes/v1/systemone/route.ts';

export interface AppDeps {
  db: Db;
  engine: DecisionEngine;
  keys: KeyService;
  usage: UsageRecorder;
  decisions: DecisionService;
  logger: Logger;
  maxBodyBytes: number;
  siteOrigin: string | undefined;
}

/** Builds the whole HTTP surface from its dependencies; no side effects beyond routing. */
export function buildApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodError(result.error, 'data' in result ? result.data : undefined);
    },
  });

  app.use('*', requestId());
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
  app.use('/v1/*', apiKeyAuth(deps.keys));
  app.use(
    '/v1/systemone',
    bodyLimit({
      maxSize: deps.maxBodyBytes,
      onError: () => {
        throw fail('PAYLOAD_TOO_LARGE', `request body is larger than ${deps.maxBodyBytes} bytes (the limit)`);
      },
    }),
  );
  app.use('/v1/systemone', usageMeter(deps.usage, '/v1/systemone'));

  registerHealthz(app, deps.engine, deps.db);
  registerModels(app, deps.engine);
  registerSystemOne(app, deps.decisions);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: brier_sk_...',
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
      const code = error.status === 400 ? 'INVALID_JSON' : error.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST';
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
