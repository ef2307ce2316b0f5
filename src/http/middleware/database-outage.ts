import { createMiddleware } from 'hono/factory';
import type { Db } from '../../db/open.ts';
import { fail } from '../../lib/errors.ts';
import type { AppEnv } from '../env.ts';
import { errorResponse } from '../errors.ts';

const databaseUnavailable = () =>
  fail('NOT_READY', 'the database is unreachable or too slow; retry shortly', { retryAfter: 2 });

/**
 * A request during which the database failed as unreachable or too slow (Db.outages grew) and whose
 * answer is a 5xx other than 503, or a 401 (a session or key lookup that failed reads as "none"), is
 * answered 503 with retry-after instead: some libraries (better-auth) catch the database's error and
 * answer 500 or "no session" themselves. Errors that reach the error handler are mapped there.
 */
export const databaseOutage = (db: Db) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const before = db.outages();
    await next();
    const status = c.res.status;
    if ((status === 401 || (status >= 500 && status !== 503)) && db.outages() !== before) {
      c.res = errorResponse(c, databaseUnavailable());
    }
  });
