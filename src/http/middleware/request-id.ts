import { randomBytes } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.ts';

/** Gives every response, errors included, `x-typesafe-request-id` and `x-request-id`: req_<32 hex>. */
export const requestId = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const id = `req_${randomBytes(16).toString('hex')}`;
    c.set('requestId', id);
    await next();
    c.res.headers.set('x-typesafe-request-id', id);
    c.res.headers.set('x-request-id', id);
  });
