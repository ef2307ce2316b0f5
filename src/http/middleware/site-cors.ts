import { cors } from 'hono/cors';

/**
 * CORS for the documentation site's origin (SITE_ORIGIN): the headers a browser client sends and may
 * read (request id, retry-after) are the same on both sub-apps; only whether cookies travel (the
 * console on the docs site: /control/v1) and the methods differ.
 */
export function siteCors(origin: string, options: { credentials: boolean; allowMethods?: string[] }) {
  return cors({
    origin,
    allowHeaders: ['authorization', 'content-type'],
    ...(options.allowMethods ? { allowMethods: options.allowMethods } : {}),
    exposeHeaders: ['x-typesafe-request-id', 'x-request-id', 'retry-after'],
    credentials: options.credentials,
    maxAge: 600,
  });
}
