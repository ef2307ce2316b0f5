import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import type { Metrics } from '../../observability/metrics.ts';
import type { AppEnv } from '../env.ts';

/**
 * Counts and times every request by its matched route pattern, method and status, and counts what
 * answered decision requests consumed. Mount it first (after the request id) so that it times the
 * whole stack.
 */
export const requestMetrics = (metrics: Metrics) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The handler's own pattern: the last matched route that is not a middleware (method ALL).
      const handler = matchedRoutes(c).findLast((r) => r.method !== 'ALL');
      const labels = { route: handler?.path ?? 'unmatched', method: c.req.method, status: String(c.res.status) };
      metrics.request(labels, (performance.now() - started) / 1000);
      const metered = c.get('metered');
      if (metered && c.res.status < 400) metrics.decision(metered);
    }
  });
