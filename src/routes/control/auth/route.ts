import { AUTH_BASE_PATH, type Auth, PASSWORD_MAX, PASSWORD_MIN } from '../../../auth/create-auth.ts';
import type { UsedLinks } from '../../../domain/verification-links.ts';
import type { Api } from '../../../http/api.ts';
import { errorResponse } from '../../../http/errors.ts';
import { bodyGuard } from '../../../http/middleware/body-guard.ts';
import { type AuthRateRule, authRateLimit, type LimiterFactory } from '../../../http/middleware/rate-limit.ts';
import { type ErrorCode, fail, invalidField } from '../../../lib/errors.ts';
import { clip } from '../../../lib/json-bounds.ts';
import { MAX_JSON_DEPTH } from '../../../systemone/protocol.ts';
import { VERIFIED_PATH } from '../../console/route.ts';
import { AUTH_FIELD_LIMITS, AUTH_PATH, registerAuthDocs } from './protocol.ts';

/** Refuses a known field that is not a string or is longer than its limit. */
export function checkAuthFields(body: Record<string, unknown>): void {
  for (const [field, limit] of Object.entries(AUTH_FIELD_LIMITS)) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw fail('BAD_REQUEST', `${field}: must be a string`);
    if (value.length > limit) {
      throw fail('BAD_REQUEST', `${field}: must be at most ${limit} characters (the limit); it has ${value.length}`);
    }
  }
}

/** Clear rules, clear messages; better-auth enforces the same length bounds behind us. */
export function checkPassword(password: unknown, email: unknown): void {
  if (typeof password !== 'string') throw fail('BAD_REQUEST', 'password: required, a string');
  if (password.length < PASSWORD_MIN) {
    throw fail(
      'BAD_REQUEST',
      `password: must be at least ${PASSWORD_MIN} characters (the limit); it has ${password.length}`,
    );
  }
  if (password.length > PASSWORD_MAX) {
    throw fail(
      'BAD_REQUEST',
      `password: must be at most ${PASSWORD_MAX} characters (the limit); it has ${password.length}`,
    );
  }
  if (new Set(password).size < 4) throw fail('BAD_REQUEST', 'password: must use at least 4 different characters');
  const local = typeof email === 'string' ? (email.split('@')[0] ?? '').toLowerCase() : '';
  if (local.length >= 4 && password.toLowerCase().includes(local)) {
    throw fail('BAD_REQUEST', 'password: must not contain the email address');
  }
}

function codeFor(status: number, betterAuthCode: string | undefined): ErrorCode {
  if (betterAuthCode === 'EMAIL_NOT_VERIFIED') return 'EMAIL_NOT_VERIFIED';
  if (status === 401) return 'INVALID_CREDENTIALS';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 500) return 'INTERNAL';
  return 'BAD_REQUEST';
}

const MESSAGES: Record<string, string> = {
  EMAIL_NOT_VERIFIED:
    'email not verified: open the link in the verification email, or ask for a new one with POST /control/v1/auth/send-verification-email',
  INVALID_EMAIL_OR_PASSWORD: 'invalid email or password',
  EMAIL_MISMATCH: "email: is not the signed-in account's email",
  INVALID_EMAIL: 'email: not an email address',
  INVALID_TOKEN: 'token: this link is invalid or has expired; ask for a new one',
  TOKEN_EXPIRED: 'token: this link has expired; ask for a new one',
};

/**
 * better-auth's validation messages in our shape, the field first: `[body.email] Invalid email
 * address; [body.password] ...` becomes `email: invalid email address; password: ...`.
 */
export function fieldFirst(message: string): string {
  if (/^invalid json in request body/i.test(message)) return 'body is not valid JSON';
  const named = message.replace(
    /\[body\.([^\]]{1,64})\] (\w)/g,
    (_, field: string, first: string) => `${field}: ${first.toLowerCase()}`,
  );
  return clip(named.charAt(0).toLowerCase() + named.slice(1), 400);
}

async function readJson(request: Request): Promise<Record<string, unknown>> {
  try {
    const body: unknown = await request.clone().json();
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw invalidField([], 'dict_type', 'must be a JSON object');
}

function withBody(request: Request, body: unknown): Request {
  const headers = new Headers(request.headers);
  headers.delete('content-length');
  return new Request(request.url, { method: request.method, headers, body: JSON.stringify(body) });
}

/** Removes session tokens from JSON bodies: the session travels only in the HttpOnly cookie. */
async function withoutTokens(response: Response): Promise<Response> {
  if (!response.headers.get('content-type')?.includes('application/json')) return response;
  const body: unknown = await response.json();
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    delete record.token;
    const session = record.session;
    if (session && typeof session === 'object') delete (session as Record<string, unknown>).token;
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

export interface AuthRouteDeps {
  auth: Auth;
  usedLinks: UsedLinks;
  limiter: LimiterFactory;
  rateRules?: Record<string, AuthRateRule> | undefined;
  /** BRIER_CONTROL_MAX_BODY_BYTES. */
  maxBodyBytes: number;
}

/** The `error` a used verification link opened in a browser lands on the console's verified page with. */
export const LINK_ALREADY_USED = 'LINK_ALREADY_USED';

/** OAuth providers post their answer back as a form. */
const acceptsForm = (path: string) =>
  path.startsWith(`${AUTH_BASE_PATH}/callback/`) || path.startsWith(`${AUTH_BASE_PATH}/oauth2/callback/`);

/**
 * Mounts better-auth under /control/v1/auth (no credential: this is where one is made). Its bodies are
 * bounded before the rate limiter reads the email in them. Around better-auth: password rules with
 * clear messages, a default display name, single-use verification links, no session tokens in
 * bodies, and errors rewritten into the one error shape.
 */
export function registerAuth(api: Api, deps: AuthRouteDeps): void {
  const { auth, usedLinks } = deps;
  registerAuthDocs(api.app);

  api.app.use(
    `${AUTH_PATH}/*`,
    bodyGuard({
      maxBytes: deps.maxBodyBytes,
      maxDepth: MAX_JSON_DEPTH,
      acceptsForm,
      setting: 'BRIER_CONTROL_MAX_BODY_BYTES',
    }),
    authRateLimit(deps.limiter, AUTH_BASE_PATH, deps.rateRules),
  );
  api.app.on(['GET', 'POST'], `${AUTH_PATH}/*`, async (c) => {
    const sub = c.req.path.slice(AUTH_BASE_PATH.length);
    let request = c.req.raw;
    let verifyToken: string | undefined;

    const json = (c.req.header('content-type') ?? '').toLowerCase().includes('json');
    if (c.req.method === 'POST' && json && (await request.clone().text()) !== '') {
      checkAuthFields(await readJson(request));
    }

    if (c.req.method === 'POST' && sub === '/sign-up/email') {
      const body = await readJson(request);
      if (typeof body.email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email.trim())) {
        throw fail('BAD_REQUEST', 'email: required, an email address');
      }
      checkPassword(body.password, body.email);
      const name =
        typeof body.name !== 'string' || body.name.trim() === '' ? body.email.trim().split('@')[0] : body.name;
      request = withBody(request, { ...body, name, callbackURL: body.callbackURL ?? VERIFIED_PATH });
    } else if (c.req.method === 'POST' && sub === '/send-verification-email') {
      // A link asked for without a callbackURL (by the API, not the console) lands on the console too.
      const body = await readJson(request);
      if (body.callbackURL === undefined || body.callbackURL === null) {
        request = withBody(request, { ...body, callbackURL: VERIFIED_PATH });
      }
    } else if (c.req.method === 'POST' && sub === '/reset-password') {
      const body = await readJson(request);
      checkPassword(body.newPassword, undefined);
    } else if (c.req.method === 'GET' && sub === '/verify-email') {
      verifyToken = c.req.query('token') ?? '';
      if (await usedLinks.isUsed(verifyToken)) {
        // A browser opening the link again lands on the console's page that says so, as an invalid
        // link does (better-auth sends that one to the callbackURL with ?error=); an API client gets the 400.
        if (/\btext\/html\b/i.test(c.req.header('accept') ?? '')) {
          return c.redirect(`${VERIFIED_PATH}?error=${LINK_ALREADY_USED}`, 302);
        }
        throw fail('BAD_REQUEST', 'this verification link was already used; sign in, or ask for a new link');
      }
    }

    let response = await auth.handler(request);

    if (response.status >= 400) {
      let code: string | undefined;
      let message = `${c.req.method} ${c.req.path} failed with ${response.status}`;
      try {
        const body = (await response.clone().json()) as { code?: unknown; message?: unknown };
        if (typeof body.code === 'string') code = body.code;
        if (typeof body.message === 'string' && body.message !== '') message = fieldFirst(body.message);
      } catch {
        // not JSON
      }
      const status = response.status;
      const retryAfter = response.headers.get('x-retry-after') ?? response.headers.get('retry-after');
      return errorResponse(
        c,
        fail(codeFor(status, code), (code && MESSAGES[code]) ?? message, {
          ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}),
        }),
      );
    }

    if (verifyToken !== undefined && !/[?&]error=/.test(response.headers.get('location') ?? '')) {
      await usedLinks.markUsed(verifyToken);
    }
    if (response.status < 300) response = await withoutTokens(response);
    return response;
  });
}
