import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z as zod } from 'zod';
import { type DomainError, type ErrorCode, type FieldIssue, fail, isDomainError } from '../domain/errors.ts';
import { boundedEcho, clip, describePath } from '../lib/json-bounds.ts';

/** Characters of one key in an error's `loc` (ids and labels past their limit are cut). */
const MAX_LOC_CHARS = 140;

/** The one table from failure to HTTP status and wire error_type. */
export const ERRORS: Record<ErrorCode, { status: ContentfulStatusCode; type: string }> = {
  VALIDATION: { status: 422, type: 'validation_error' },
  BAD_REQUEST: { status: 400, type: 'invalid_request' },
  INVALID_JSON: { status: 400, type: 'invalid_json' },
  UNKNOWN_MODEL: { status: 400, type: 'model_not_found' },
  MAX_TOKENS: { status: 400, type: 'max_tokens_exceeded' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'payload_too_large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'unsupported_media_type' },
  MISSING_CREDENTIALS: { status: 403, type: 'authentication_error' },
  INVALID_CREDENTIALS: { status: 401, type: 'authentication_error' },
  FORBIDDEN: { status: 403, type: 'permission_denied' },
  UNAUTHENTICATED: { status: 401, type: 'authentication_error' },
  EMAIL_NOT_VERIFIED: { status: 403, type: 'email_not_verified' },
  CSRF: { status: 403, type: 'csrf_rejected' },
  NOT_FOUND: { status: 404, type: 'not_found' },
  KEY_LIMIT: { status: 409, type: 'key_limit_reached' },
  CONFLICT: { status: 409, type: 'conflict' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_exceeded' },
  OVERLOADED: { status: 503, type: 'overloaded' },
  TIMEOUT: { status: 503, type: 'timeout' },
  NOT_READY: { status: 503, type: 'not_ready' },
  CANCELLED: { status: 499 as ContentfulStatusCode, type: 'cancelled' },
  INTERNAL: { status: 500, type: 'internal_error' },
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
    400: 'A semantic limit was exceeded (option counts, token limits, unknown model or type, malformed JSON)',
    401: 'The API key is unknown or revoked, or there is no valid session',
    403: 'No credentials were sent, the email is not verified, or a cross-site request was refused',
    404: 'Not found',
    409: 'Conflict',
    413: 'The body is larger than the limit',
    415: 'The body is not sent as content-type: application/json',
    422: 'The body does not match the schema (FastAPI-style detail list)',
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

function fieldName(path: PropertyKey[]): string {
  return describePath(path.map((p) => (typeof p === 'number' ? p : String(p))));
}

/**
 * Classifies zod issues: those marked semantic (option and level counts, unknown question types)
 * become one 400; the rest become a 422 with a FastAPI-style detail list. A question without a
 * `type` is a missing field (422), one with a type nobody knows a semantic refusal (400). Inputs
 * are echoed bounded (boundedEcho), never whole.
 */
export function fromZodError(error: zod.ZodError, input: unknown): DomainError {
  const semantic = error.issues.filter(
    (i) =>
      (i.code === 'custom' && (i.params as { semantic?: boolean } | undefined)?.semantic === true) ||
      (i.code === 'invalid_union' &&
        'note' in i &&
        i.note === 'No matching discriminator' &&
        readAt(input, i.path) !== undefined) ||
      ((i.code === 'too_big' || i.code === 'too_small') && i.path.at(-1) === 'criteria'),
  );
  const schema = error.issues.filter((i) => !semantic.includes(i));
  if (schema.length === 0 && semantic.length > 0) {
    const messages = semantic.map((i) => {
      const field = fieldName(i.path);
      if (i.code === 'invalid_union') {
        return `${field}: unknown question type ${JSON.stringify(boundedEcho(readAt(input, i.path), 40))}; expected noul, choice or score`;
      }
      return `${field}: ${i.message}`;
    });
    const shown = messages.slice(0, 10);
    if (messages.length > 10) shown.push(`and ${messages.length - 10} more`);
    return fail('BAD_REQUEST', shown.join('; '));
  }
  const issues: FieldIssue[] = schema.map((i) => {
    // A record key that fails its own schema (a question id or label too long) reports the key.
    const inner = i.code === 'invalid_key' ? i.issues[0] : undefined;
    const code = inner?.code ?? i.code;
    const value = inner ? i.path.at(-1) : readAt(input, i.path);
    const missing = value === undefined && code !== 'custom';
    return {
      type: missing
        ? 'missing'
        : i.code === 'invalid_type'
          ? `${i.expected}_type`
          : code === 'too_small'
            ? 'too_short'
            : code === 'too_big'
              ? 'too_long'
              : 'value_error',
      loc: ['body', ...i.path.map((p) => (typeof p === 'number' ? p : clip(String(p), MAX_LOC_CHARS)))],
      msg: missing ? 'Field required' : (inner?.message ?? i.message),
      input: boundedEcho(value ?? null),
    };
  });
  const shown = issues.slice(0, 10).map((i) => `${fieldName(i.loc.slice(1))}: ${i.msg}`);
  if (issues.length > 10) shown.push(`and ${issues.length - 10} more`);
  return fail('VALIDATION', shown.join('; '), { issues: issues.slice(0, 100) });
}

/** The only writer of error JSON. */
export function errorResponse(c: Context, error: unknown): Response {
  const e = isDomainError(error)
    ? error
    : fail('INTERNAL', 'internal error; the request id identifies it in the server log');
  const { status, type } = ERRORS[e.code];
  const requestId = c.get('requestId') as string | undefined;
  if (e.retryAfter !== undefined) c.header('retry-after', String(e.retryAfter));
  const detail = e.code === 'VALIDATION' && e.issues ? e.issues : { error_type: type, message: e.message };
  return c.json({ detail, message: e.message, request_id: requestId ?? '' }, status);
}
