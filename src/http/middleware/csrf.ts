import { createMiddleware } from 'hono/factory';
import { fail } from '../../lib/errors.ts';
import type { AppEnv } from '../env.ts';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return new URL(value).origin;
  } catch {
    return 'null';
  }
}

/**
 * CSRF protection by origin check. A mutation that carries a cookie must come with an Origin (or,
 * failing that, a Referer) on the trusted list: this server's public origin and the documentation
 * site. A mutation without cookies is refused only when a browser says it comes from elsewhere (login
 * CSRF); clients that send no Origin and no cookie (curl, SDKs with bearer keys) pass.
 */
export const csrf = (trustedOrigins: string[]) => {
  const trusted = new Set(trustedOrigins.map((o) => new URL(o).origin));
  return createMiddleware<AppEnv>(async (c, next) => {
    if (SAFE.has(c.req.method)) return next();
    const origin = originOf(c.req.header('origin')) ?? originOf(c.req.header('referer'));
    const hasCookie = (c.req.header('cookie') ?? '').trim() !== '';
    if (origin !== undefined && !trusted.has(origin)) {
      throw fail(
        'CSRF',
        `cross-site request refused: origin ${origin} is not trusted for ${c.req.method} ${c.req.path}`,
      );
    }
    if (hasCookie && origin === undefined) {
      throw fail(
        'CSRF',
        `cross-site request refused: a cookie-authenticated ${c.req.method} needs an Origin header from a trusted origin`,
      );
    }
    await next();
  });
};
