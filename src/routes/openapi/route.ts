import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.ts';
import { sessionCookies } from '../../http/session-cookies.ts';

/**
 * GET /openapi.json: the OpenAPI 3.1 document of every route registered on `app` (sub-apps included,
 * once mounted), generated from the zod schemas that validate, with the two security schemes the
 * routes' `auth` declarations name.
 */
export function registerOpenApi(app: OpenAPIHono<AppEnv>, deps: { publicUrl: string }): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: brier_sk_...',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: sessionCookies(deps.publicUrl).token,
    description: 'The console session, set by /control/v1/auth/sign-in/* (HttpOnly, SameSite=Lax)',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'Brier API', version: '1.0.0', description: 'Decision probabilities over the System One protocol.' },
  });
}
