import { z } from '@hono/zod-openapi';
import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z as zod } from 'zod';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { type DomainError, type ErrorCode, type FieldIssue, fail, invalidField, isDomainError } from '../lib/errors.ts';
import { boundedEcho, clip, describePath, locOf } from '../lib/json-bounds.ts';
import type { Logger } from '../observability/logger.ts';

/** The one table from failure to HTTP status, wire error_type and when it happens (the docs print it). */
export const ERRORS: Record<ErrorCode, { status: ContentfulStatusCode; type: string; when: string }> = {
  VALIDATION: {
    status: 422,
    type: 'validation_error',
    when: 'an invalid body: not JSON, a duplicate or forbidden key, too deep, a schema or count violation (FastAPI detail list)',
  },
  BAD_REQUEST: {
    status: 400,
    type: 'invalid_request',
    when: 'a control-plane rule (password, field length, link already used)',
  },
  UNKNOWN_MODEL: { status: 400, type: 'model_not_found', when: 'model not served here' },
  MAX_TOKENS: { status: 400, type: 'max_tokens_exceeded', when: "request over the model's token limits" },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'payload_too_large', when: 'body over the byte limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'unsupported_media_type', when: 'a body that is not JSON' },
  MISSING_CREDENTIALS: { status: 403, type: 'authentication_error', when: 'no Authorization header' },
  INVALID_CREDENTIALS: { status: 401, type: 'authentication_error', when: 'unknown or revoked key' },
  FORBIDDEN: { status: 403, type: 'permission_denied', when: 'authenticated but not allowed' },
  UNAUTHENTICATED: { status: 401, type: 'authentication_error', when: 'no valid session on a console route' },
  EMAIL_NOT_VERIFIED: { status: 403, type: 'email_not_verified', when: "the account's email is not verified yet" },
  CSRF: { status: 403, type: 'csrf_rejected', when: 'a cookie-authenticated mutation from an untrusted origin' },
  NOT_FOUND: { status: 404, type: 'not_found', when: 'Not found' },
  KEY_LIMIT: { status: 409, type: 'key_limit_reached', when: 'active key cap reached' },
  EXAMPLE_LIMIT: {
    status: 409,
    type: 'example_limit_reached',
    when: "an upload or outcome past the account's labelled-example or template limit (nothing stored)",
  },
  RETENTION_OFF: {
    status: 409,
    type: 'retention_off',
    when: 'an outcome for a request whose content was not kept: retention is off for its key and account',
  },
  CONFLICT: { status: 409, type: 'conflict', when: 'Conflict' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_exceeded', when: 'Rate limited' },
  OVERLOADED: { status: 503, type: 'overloaded', when: 'queue full' },
  TIMEOUT: { status: 503, type: 'timeout', when: 'deadline passed before an answer' },
  NOT_READY: { status: 503, type: 'not_ready', when: 'engine or database not ready' },
  CANCELLED: {
    status: 499 as ContentfulStatusCode,
    type: 'cancelled',
    when: 'client went away (never seen by a client)',
  },
  INTERNAL: {
    status: 500,
    type: 'internal_error',
    when: 'an unexpected failure; the request id finds it in the server log',
  },
};

export const ErrorBody = z
  .object({
    detail: z.union([
      z.object({ error_type: z.string(), message: z.string() }),
      z.array(
        z.object({
          type: z.string(),
          loc: z.array(z.union([z.string(), z.number()])),
          msg: z.string(),
          input: z.unknown(),
        }),
      ),
    ]),
    message: z.string().openapi({ description: 'A human sentence naming the field and the limit.' }),
    request_id: z.string(),
  })
  .openapi('Error');

/** OpenAPI response entries for the given statuses, all with the one error body. */
export function errorResponses(...statuses: number[]) {
  const describe: Record<number, string> = {
    400: "An unknown model, a request over the model's token limits, or a control-plane rule (detail.error_type says which)",
    401: 'The API key is unknown or revoked, or there is no valid session',
    403: 'No credentials were sent, the email is not verified, or a cross-site request was refused',
    404: 'Not found',
    409: 'Conflict',
    413: 'The body is larger than the limit',
    415: 'The body is not sent as content-type: application/json',
    422: 'The body is invalid: not JSON, a duplicate key, a schema or count violation (FastAPI-style detail list)',
    429: 'Rate limited',
    503: 'Overloaded, timed out or not ready: retry after the retry-after header',
  };
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      { description: describe[s] ?? 'Error', content: { 'application/json': { schema: ErrorBody } } },
    ]),
  );
}

function readAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const asLocPath = (path: PropertyKey[]) => path.map((p) => (typeof p === 'number' ? p : String(p)));

/** The FastAPI-style type of one zod issue (a refinement may name its own in `params.type`). */
function issueType(issue: zod.ZodError['issues'][number], code: string, missing: boolean): string {
  if (missing) return 'missing';
  if (issue.code === 'invalid_union' && 'note' in issue && issue.note === 'No matching discriminator') {
    return 'union_tag_invalid';
  }
  const named = issue.code === 'custom' ? (issue.params as { type?: unknown } | undefined)?.type : undefined;
  if (typeof named === 'string') return named;
  if (issue.code === 'invalid_type') return `${issue.expected}_type`;
  if (code === 'too_small') return 'too_short';
  if (code === 'too_big') return 'too_long';
  return 'value_error';
}

/** Where a validated value was sent, as FastAPI's `loc` starts: the body, or a query, path or header parameter. */
export type InputSource = 'body' | 'query' | 'path' | 'header' | 'cookie';

/** The source of each of hono's validation targets. */
export const SOURCE_OF_TARGET: Record<string, InputSource> = {
  json: 'body',
  form: 'body',
  text: 'body',
  query: 'query',
  param: 'path',
  header: 'header',
  cookie: 'cookie',
};

/**
 * The message of an issue with a parameter (always sent as text): zod's "expected number, received
 * NaN" for a number that is not one says what was expected instead; the value sent is named.
 */
function parameterMessage(issue: zod.ZodError['issues'][number], msg: string, value: unknown): string {
  const expected = issue.code === 'invalid_type' ? issue.expected : undefined;
  const said =
    expected === 'number' && /received NaN/.test(msg)
      ? 'expected a number'
      : expected === 'int' && /^Invalid input/.test(msg)
        ? 'expected an integer'
        : msg;
  return typeof value === 'string' ? `${said}, got ${JSON.stringify(clip(value, 40))}` : said;
}

/**
 * Every zod issue as one entry of a 422 FastAPI-style detail list, `loc` at the field: a missing field
 * (a question without `type` included), a wrong type, an unknown question type (`union_tag_invalid`,
 * at the question's `type`), option, level and question counts (`too_short` / `too_long`). Inputs
 * are echoed bounded (boundedEcho), never whole; the message lists the first 10. A parameter's issue
 * (`source` query, path, header) has `loc` [source, name] and a message that names the parameter.
 */
export function fromZodError(error: zod.ZodError, input: unknown, source: InputSource = 'body'): DomainError {
  const issues: FieldIssue[] = error.issues.map((i) => {
    // A record key that fails its own schema (a question id or label too long) reports the key.
    const inner = i.code === 'invalid_key' ? i.issues[0] : undefined;
    const code = inner?.code ?? i.code;
    const value = inner ? i.path.at(-1) : readAt(input, i.path);
    const missing = value === undefined && code !== 'custom';
    const type = issueType(i, code, missing);
    const said =
      type === 'missing'
        ? 'Field required'
        : type === 'union_tag_invalid'
          ? `unknown question type ${JSON.stringify(boundedEcho(value, 40))}; expected noul, choice or score`
          : (inner?.message ?? i.message);
    const msg = source === 'body' || type === 'missing' ? said : parameterMessage(i, said, value);
    const loc = locOf(asLocPath(i.path));
    if (source !== 'body') loc[0] = source;
    return { type, loc, msg, input: boundedEcho(value ?? null) };
  });
  const shown = issues.slice(0, 10).map((i) => {
    const where = describePath(i.loc.slice(1));
    return `${i.loc[0] === 'body' ? where : `${i.loc[0]} parameter ${where}`}: ${i.msg}`;
  });
  if (issues.length > 10) shown.push(`and ${issues.length - 10} more`);
  return fail('VALIDATION', shown.join('; '), { issues: issues.slice(0, 100) });
}

/** The only writer of error JSON. */
export function errorResponse(c: Context, error: unknown): Response {
  const e = isDomainError(error)
    ? error
    : isDatabaseUnavailable(error)
      ? fail('NOT_READY', 'the database is unreachable or too slow; retry shortly', { retryAfter: 2 })
      : fail('INTERNAL', 'internal error; the request id identifies it in the server log');
  const { status, type } = ERRORS[e.code];
  const requestId = c.get('requestId') as string | undefined;
  if (e.retryAfter !== undefined) c.header('retry-after', String(e.retryAfter));
  const detail = e.code === 'VALIDATION' && e.issues ? e.issues : { error_type: type, message: e.message };
  return c.json({ detail, message: e.message, request_id: requestId ?? '' }, status);
}

/**
 * The app's error handler: every thrown error answered through errorResponse. Hono's own
 * HTTPExceptions (what its validators still refuse once the body guard has passed a body: an empty
 * one) become a 415, or a 422 `json_invalid`; unexpected failures (500) are logged with the request id.
 */
export function handleErrors(logger: Logger): ErrorHandler {
  return (error, c) => {
    if (error instanceof HTTPException) {
      if (/unsupported media type/i.test(error.message)) {
        const type = c.req.header('content-type');
        const got = type ? JSON.stringify(type.slice(0, 80)) : 'none';
        return errorResponse(c, fail('UNSUPPORTED_MEDIA_TYPE', `content-type: must be application/json, got ${got}`));
      }
      return errorResponse(
        c,
        error.status === 400
          ? invalidField([], 'json_invalid', `is not valid JSON: ${clip(error.message, 200)}`)
          : fail('BAD_REQUEST', error.message),
      );
    }
    const response = errorResponse(c, error);
    if (response.status >= 500 && response.status !== 503) {
      logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    }
    return response;
  };
}

/** A URL no route answers: 404 not_found. */
export function notFound(): never {
  throw fail('NOT_FOUND', 'no such route');
}
