import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Db } from '../../db/open.ts';
import type { DecisionEngine } from '../../engines/engine.ts';
import type { AppEnv } from '../../http/env.ts';

const Health = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    engine: z.object({ ready: z.boolean(), model: z.string() }),
    database: z.object({ ready: z.boolean(), dialect: z.string() }),
  })
  .openapi('Health');

export const healthzRoute = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['Operations'],
  summary: 'Readiness of the engine and the database (no credentials)',
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: Health } } },
    503: { description: 'Not ready', content: { 'application/json': { schema: Health } } },
  },
});

export function registerHealthz(app: OpenAPIHono<AppEnv>, engine: DecisionEngine, db: Db): void {
  app.openapi(healthzRoute, async (c) => {
    const engineReady = engine.ready();
    const dbReady = await db.ping();
    const ok = engineReady && dbReady;
    const body = {
      status: ok ? ('ok' as const) : ('unavailable' as const),
      engine: { ready: engineReady, model: engine.info.id },
      database: { ready: dbReady, dialect: db.dialect },
    };
    return ok ? c.json(body, 200) : c.json(body, 503);
  });
}
