import { timingSafeEqual } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.ts';
import type { Metrics } from '../../observability/metrics.ts';

/**
 * GET /metrics in the Prometheus text format (not in the OpenAPI document). Without a token it is
 * open: keep it off the public gateway (or set BRIER_METRICS_TOKEN, then it needs
 * `Authorization: Bearer <token>`).
 */
export function registerMetrics(app: OpenAPIHono<AppEnv>, deps: { metrics: Metrics; token?: string | undefined }) {
  const { registry } = deps.metrics;
  const expected = deps.token ? Buffer.from(`Bearer ${deps.token}`) : null;
  app.get('/metrics', async (c) => {
    if (expected) {
      const given = Buffer.from(c.req.header('authorization') ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return c.text('metrics need Authorization: Bearer <BRIER_METRICS_TOKEN>\n', 401, {
          'www-authenticate': 'Bearer',
        });
      }
    }
    return c.text(await registry.metrics(), 200, { 'content-type': registry.contentType });
  });
}
