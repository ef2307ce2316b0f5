import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Db } from '../../db/open.ts';
import type { DecisionEngine } from '../../engines/engine.ts';
import type { AppEnv } from '../../http/env.ts';

/** Where rate limits are counted now: `shared` false means per process (memory, or a store that is down). */
export interface RateLimitHealth {
  store: 'memory' | 'postgres' | 'redis';
  shared: boolean;
}

export interface WorkerHealth {
  url: string;
  healthy: boolean;
  in_flight: number;
}

/** What /healthz reports besides the engine and the database (none of it makes it a 503). */
export interface HealthProbes {
  rateLimits(): RateLimitHealth;
  /** The inference workers of a gateway with BRIER_WORKERS. */
  workers?: () => WorkerHealth[];
}

const Health = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    engine: z.object({ ready: z.boolean(), model: z.string() }),
    database: z.object({
      ready: z.boolean().nullable().openapi({ description: 'null: not checked (?probe=liveness)' }),
      dialect: z.string(),
    }),
    rate_limits: z
      .object({ store: z.enum(['memory', 'postgres', 'redis']), shared: z.boolean() })
      .optional()
      .openapi({
        description:
          'Where rate limits are counted: shared false with store redis or postgres means the store is unreachable and each process counts in memory meanwhile (still 200)',
      }),
    workers: z
      .array(z.object({ url: z.string(), healthy: z.boolean(), in_flight: z.number() }))
      .optional()
      .openapi({
        description:
          "A gateway's inference workers (BRIER_WORKERS) and their health (none healthy: still 200, inference answers 503)",
      }),
  })
  .openapi('Health');

export const healthzRoute = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['Operations'],
  summary: 'Readiness of the engine and the database (no credentials); ?probe=liveness: the process answers',
  request: {
    query: z.object({
      probe: z.enum(['readiness', 'liveness']).optional().openapi({
        description:
          'liveness: 200 whenever the process answers (for a liveness probe that must not restart replicas during a database outage)',
      }),
    }),
  },
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: Health } } },
    503: { description: 'Not ready', content: { 'application/json': { schema: Health } } },
  },
});

/** A ping that answers within `ms` (false past it): a stalled database must not stall the probe. */
async function pingWithin(db: Db, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([db.ping(), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthz(app: OpenAPIHono<AppEnv>, engine: DecisionEngine, db: Db, probes?: HealthProbes): void {
  app.openapi(healthzRoute, async (c) => {
    const live = c.req.valid('query').probe === 'liveness';
    const engineReady = engine.ready();
    const dbReady = live ? null : await pingWithin(db, 2000);
    const ok = live || (engineReady && dbReady === true);
    const body = {
      status: ok ? ('ok' as const) : ('unavailable' as const),
      engine: { ready: engineReady, model: engine.info.id },
      database: { ready: dbReady, dialect: db.dialect },
      ...(probes ? { rate_limits: probes.rateLimits() } : {}),
      ...(probes?.workers ? { workers: probes.workers() } : {}),
    };
    return ok ? c.json(body, 200) : c.json(body, 503);
  });
}
