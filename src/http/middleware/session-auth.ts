import { createMiddleware } from 'hono/factory';
import type { Auth } from '../../auth/create-auth.ts';
import { fail } from '../../lib/errors.ts';
import type { AppEnv } from '../env.ts';

export interface SessionAccount {
  userId: string;
  email: string;
}

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

/** Console routes: a valid session cookie of a verified account, else 401 (or 403 when unverified). */
export const sessionAuth = (auth: Auth) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const account = await readSession(auth, c.req.raw.headers);
    if (!account) throw fail('UNAUTHENTICATED', 'no valid session; sign in at /control/v1/auth/sign-in/email first');
    c.set('account', account);
    await next();
  });
