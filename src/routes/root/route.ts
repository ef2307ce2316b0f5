import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { accepts } from 'hono/accepts';
import type { AppEnv } from '../../http/env.ts';
import { CONSOLE_PATH } from '../console/route.ts';

const Directory = z
  .object({
    name: z.literal('Brier'),
    description: z.string(),
    links: z
      .object({
        console: z.string().openapi({ description: 'The web console: sign up, API keys, usage, playground.' }),
        docs: z.string().openapi({ description: 'The documentation site.' }),
        systemone: z.string().openapi({ description: 'POST: the System One endpoint (Bearer API key).' }),
        models: z.string().openapi({ description: 'GET: the served model and its limits (Bearer API key).' }),
        openapi: z.string().openapi({ description: 'The OpenAPI 3.1 document of every route.' }),
        healthz: z.string().openapi({ description: 'Readiness of the engine and the database.' }),
      })
      .openapi({ description: 'Paths on this server.' }),
  })
  .openapi('Directory');

export const rootRoute = createRoute({
  method: 'get',
  path: '/',
  tags: ['Operations'],
  summary: 'Where things are: a browser is redirected to the console, an API client gets the links as JSON',
  description:
    'With `Accept` preferring `text/html` (a browser): 302 to the console. Otherwise (`application/json`, `*/*` or no `Accept`): 200 with the paths of the console, the docs, the API and its OpenAPI document.',
  responses: {
    200: { description: 'The links', content: { 'application/json': { schema: Directory } } },
    302: { description: 'A browser: redirected to the console (/console/)' },
  },
});

const DIRECTORY: z.infer<typeof Directory> = {
  name: 'Brier',
  description:
    'Decision probabilities over the System One protocol. Create an API key in the console, then POST questions to /v1/systemone.',
  links: {
    console: CONSOLE_PATH,
    docs: '/docs/',
    systemone: '/v1/systemone',
    models: '/v1/models',
    openapi: '/openapi.json',
    healthz: '/healthz',
  },
};

/** GET / (and HEAD): no credential; the answer depends on `Accept`, so it says `Vary: Accept`. */
export function registerRoot(app: OpenAPIHono<AppEnv>): void {
  app.openapi(rootRoute, (c) => {
    c.header('vary', 'Accept');
    const wanted = accepts(c, {
      header: 'Accept',
      supports: ['application/json', 'text/html'],
      default: 'application/json',
    });
    if (wanted === 'text/html') return c.redirect(CONSOLE_PATH, 302);
    return c.json(DIRECTORY, 200);
  });
}
