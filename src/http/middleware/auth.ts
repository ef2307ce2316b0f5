import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Auth } from '../../auth/create-auth.ts';
import type { KeyOwner, KeyService } from '../../domain/keys.ts';
import { fail } from '../../lib/errors.ts';
import type { AppEnv } from '../env.ts';

export interface SessionAccount {
  userId: string;
  email: string;
}

/** The credential a route asks for: an API key, a console session, either one, or none. */
export type RouteAuth = 'key' | 'session' | 'key-or-session' | 'none';

/** Resolves the session cookie to a verified account, or null when there is no valid session. */
export async function readSession(auth: Auth, headers: Headers): Promise<SessionAccount | null> {
  const found = await auth.api.getSession({ headers, query: { disableCookieCache: true } });
  if (!found) return null;
  if (!found.user.emailVerified) {
    throw fail(
      'EMAIL_NOT_VERIFIED',
      'this account has not verified its email; open the link in the verification email first',
    );
  }
  return { userId: found.user.id, email: found.user.email };
}

/** The owner of the bearer API key in `header`: 401 for a malformed header or an unknown or revoked key. */
async function readKey(keys: KeyService, header: string): Promise<KeyOwner> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw fail('INVALID_CREDENTIALS', 'malformed Authorization header; expected Bearer <API key>');
  const owner = await keys.verify(match[1]);
  if (!owner) throw fail('INVALID_CREDENTIALS', 'invalid or revoked API key');
  return owner;
}

/**
 * One middleware per credential. Each sets what it checked (`owner` for a key, `account` for a
 * session) and passes a request on which that credential was already checked, so that a route's
 * guard and its sub-app's guard for the rest of the prefix never check twice.
 */
export function createGuards(deps: { keys: KeyService; auth: Auth }) {
  const { keys, auth } = deps;
  const hasKey = (c: Context<AppEnv>) => c.get('owner') !== undefined;
  const hasSession = (c: Context<AppEnv>) => c.get('account') !== undefined;

  /** Bearer API keys: none sent is 403, an unknown or revoked key is 401 (as the hosted API does). */
  const key = createMiddleware<AppEnv>(async (c, next) => {
    if (hasKey(c)) return next();
    const header = c.req.header('authorization');
    if (!header)
      throw fail('MISSING_CREDENTIALS', 'missing Authorization header; send Authorization: Bearer <API key>');
    c.set('owner', await readKey(keys, header));
    await next();
  });

  /** Console routes: a valid session cookie of a verified account, else 401 (or 403 when unverified). */
  const session = createMiddleware<AppEnv>(async (c, next) => {
    if (hasSession(c)) return next();
    const account = await readSession(auth, c.req.raw.headers);
    if (!account) throw fail('UNAUTHENTICATED', 'no valid session; sign in at /control/v1/auth/sign-in/email first');
    c.set('account', account);
    await next();
  });

  /** A bearer API key when an Authorization header is sent, else the session cookie. */
  const keyOrSession = createMiddleware<AppEnv>(async (c, next) => {
    if (hasKey(c) || hasSession(c)) return next();
    const header = c.req.header('authorization');
    if (header) {
      c.set('owner', await readKey(keys, header));
      return next();
    }
    const account = await readSession(auth, c.req.raw.headers);
    if (!account) {
      throw fail('UNAUTHENTICATED', 'send Authorization: Bearer <API key>, or sign in for a session cookie');
    }
    c.set('account', account);
    await next();
  });

  const none: MiddlewareHandler<AppEnv> = (_c, next) => next();
  const guards: Record<RouteAuth, MiddlewareHandler<AppEnv>> = {
    key,
    session,
    'key-or-session': keyOrSession,
    none,
  };
  return guards;
}

export type Guards = ReturnType<typeof createGuards>;
