import { createMiddleware } from 'hono/factory';
import { fixedFieldLogger, type Logger } from '../../observability/logger.ts';
import type { AppEnv } from '../env.ts';

/** One line per request: method, path, status, latency, request id, key id (never the key). */
export const requestLog = (logger: Logger) => {
  // Fixed fields, none of them secret: no redaction pass (logger.ts).
  const lines = fixedFieldLogger(logger);
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    await next();
    const owner = c.get('owner');
    lines.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        keyId: owner?.keyId,
      },
      'request',
    );
  });
};
