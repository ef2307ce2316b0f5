import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../auth/create-auth.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';

/** Where better-auth is mounted in the control plane (AUTH_BASE_PATH is the same, from the root). */
export const AUTH_PATH = '/auth';

/**
 * Character limits of the free-text fields the auth endpoints take (RFC 5321 caps an address at
 * 254); the error names the field and the limit. The body itself is capped earlier, in bytes.
 */
export const AUTH_FIELD_LIMITS: Record<string, number> = {
  email: 254,
  password: PASSWORD_MAX,
  newPassword: PASSWORD_MAX,
  currentPassword: PASSWORD_MAX,
  name: 100,
  token: 512,
  provider: 64,
  callbackURL: 2048,
  errorCallbackURL: 2048,
  newUserCallbackURL: 2048,
  redirectTo: 2048,
};

const Email = z.string().email().max(254).openapi({ example: 'ada@example.com' });
const Password = z
  .string()
  .min(PASSWORD_MIN)
  .max(PASSWORD_MAX)
  .openapi({
    description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters, at least 4 different ones, not containing the email address`,
  });
const CallbackURL = z.string().optional().openapi({
  description:
    'Where the browser lands afterwards (a trusted origin); for sign-up and verification emails, default the console (/console/verified)',
});

const User = z
  .object({ id: z.string(), email: z.string(), name: z.string(), emailVerified: z.boolean() })
  .passthrough()
  .openapi('AuthUser');
const Status = z.object({ status: z.boolean() }).openapi('AuthStatus');
const SignedIn = z
  .object({ redirect: z.boolean(), user: User })
  .passthrough()
  .openapi('SignedIn', { description: 'The session is in the HttpOnly cookie set by this response.' });
const Redirect = z.object({ url: z.string(), redirect: z.boolean() }).openapi('AuthRedirect');

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const body = (schema: z.ZodType) => ({ body: { required: true, content: { 'application/json': { schema } } } });

/** OpenAPI entries for the better-auth endpoints the console uses (better-auth serves them). */
export function registerAuthDocs(app: OpenAPIHono<AppEnv>): void {
  const r = app.openAPIRegistry;
  const tags = ['Auth'];
  const p = (path: string) => `${AUTH_PATH}${path}`;

  r.registerPath({
    method: 'post',
    path: p('/sign-up/email'),
    tags,
    summary: 'Sign up with email and password',
    description:
      'Creates an unverified account and sends a verification email. The answer is the same whether or not the email already has an account (the owner is told by email).',
    request: body(
      z.object({ email: Email, password: Password, name: z.string().max(100).optional(), callbackURL: CallbackURL }),
    ),
    responses: {
      200: json(z.object({ user: User.nullable() }).passthrough(), 'Accepted'),
      ...errorResponses(400, 403, 429, 413, 415),
    },
  });
  r.registerPath({
    method: 'get',
    path: p('/verify-email'),
    tags,
    summary: 'Verify the email (the link in the verification email)',
    description:
      'Single use; expires after 24 hours. Redirects to the callbackURL of the sign-up (default /console/verified: the console, signed in); an invalid or expired link to the callbackURL with `?error=`. A link opened a second time answers 400, or, opened in a browser (`accept: text/html`), redirects to /console/verified?error=LINK_ALREADY_USED.',
    request: {
      query: z.object({ token: z.string(), callbackURL: z.string().optional() }),
    },
    responses: {
      200: json(Status.passthrough(), 'Verified'),
      302: {
        description:
          'Verified, or the link is invalid: redirect to callbackURL; a used link opened in a browser: redirect to /console/verified?error=LINK_ALREADY_USED',
      },
      ...errorResponses(400, 401, 429),
    },
  });
  r.registerPath({
    method: 'post',
    path: p('/send-verification-email'),
    tags,
    summary: 'Send the verification email again',
    description: 'Rate-limited per IP and per address. The answer does not say whether the address has an account.',
    request: body(z.object({ email: Email, callbackURL: CallbackURL })),
    responses: {
      200: json(Status, 'Sent if the address has an unverified account'),
      ...errorResponses(400, 403, 429, 413, 415),
    },
  });
  r.registerPath({
    method: 'post',
    path: p('/sign-in/email'),
    tags,
    summary: 'Sign in with email and password (sets the session cookie)',
    description:
      'Refused with 403 email_not_verified until the email is verified. Rate-limited per IP and per account.',
    request: body(
      z.object({ email: Email, password: z.string(), rememberMe: z.boolean().optional(), callbackURL: CallbackURL }),
    ),
    responses: { 200: json(SignedIn, 'Signed in'), ...errorResponses(400, 401, 403, 429, 413, 415) },
  });
  r.registerPath({
    method: 'post',
    path: p('/sign-out'),
    tags,
    summary: 'Sign out (ends the session, clears the cookie)',
    security: [{ session: [] }],
    responses: { 200: json(z.object({ success: z.boolean() }), 'Signed out'), ...errorResponses(400, 403) },
  });
  r.registerPath({
    method: 'get',
    path: p('/get-session'),
    tags,
    summary: 'The current session and user, or null',
    security: [{ session: [] }],
    responses: { 200: json(z.object({ user: User, session: z.object({}).passthrough() }).nullable(), 'Session') },
  });
  r.registerPath({
    method: 'post',
    path: p('/request-password-reset'),
    tags,
    summary: 'Email a password-reset link',
    description: 'Same answer whether or not the address has an account. The link works once, for an hour.',
    request: body(z.object({ email: Email, redirectTo: z.string().optional() })),
    responses: {
      200: json(Status.passthrough(), 'Sent if the address has an account'),
      ...errorResponses(400, 403, 429, 413, 415),
    },
  });
  r.registerPath({
    method: 'post',
    path: p('/reset-password'),
    tags,
    summary: 'Set a new password with the token from the reset link',
    description: 'Ends every session of the account.',
    request: body(z.object({ token: z.string(), newPassword: Password })),
    responses: { 200: json(Status, 'Password changed'), ...errorResponses(400, 403, 429, 413, 415) },
  });
  r.registerPath({
    method: 'post',
    path: p('/sign-in/social'),
    tags,
    summary: 'Start a third-party sign-in: oidc (OIDC_ISSUER), github or google',
    description:
      'Answers the provider URL to open; the provider returns to /control/v1/auth/callback/{provider}, which sets the session cookie.',
    request: body(
      z.object({
        provider: z.enum(['oidc', 'github', 'google']),
        callbackURL: CallbackURL,
        errorCallbackURL: CallbackURL,
      }),
    ),
    responses: { 200: json(Redirect, 'Open url'), ...errorResponses(400, 403, 404, 413, 415) },
  });
  for (const method of ['get', 'post'] as const) {
    r.registerPath({
      method,
      path: p('/callback/{provider}'),
      tags,
      summary: 'Provider return (sets the session cookie and redirects to callbackURL)',
      description:
        'Accounts created here count as verified. An existing account is joined only when the provider asserts a verified email and the account has verified it too.',
      request: { params: z.object({ provider: z.string() }), query: z.object({ code: z.string(), state: z.string() }) },
      responses: { 302: { description: 'Signed in; redirect' }, ...errorResponses(400, 401) },
    });
  }
}
