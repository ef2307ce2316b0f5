import { randomBytes } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.ts';

/**
 * Random bytes for request ids, drawn 4 KiB at a time from the CSPRNG (one call per 256 requests
 * instead of one per request); each id uses its own 16 bytes once.
 */
function idSource() {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + 16 > pool.length) {
      pool = randomBytes(4096);
      at = 0;
    }
    at += 16;
    return `req_${pool.toString('hex', at - 16, at)}`;
  };
}

/** Gives every response, errors included, `x-typesafe-request-id` and `x-request-id`: req_<32 hex>. */
export const requestId = () => {
  const newId = idSource();
  return createMiddleware<AppEnv>(async (c, next) => {
    const id = newId();
    c.set('requestId', id);
    await next();
    c.res.headers.set('x-typesafe-request-id', id);
    c.res.headers.set('x-request-id', id);
  });
};
