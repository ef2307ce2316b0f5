/**
 * Domain failures, independent of HTTP. The HTTP layer maps each code to a status in one table
 * (src/http/errors.ts). Created by `fail()`, recognised by `isDomainError()`.
 */
export type ErrorCode =
  | 'VALIDATION' // schema violation (422, FastAPI detail list)
  | 'BAD_REQUEST' // semantic limit on a field (400)
  | 'INVALID_JSON' // body is not JSON (400)
  | 'UNKNOWN_MODEL' // model not served here (400)
  | 'MAX_TOKENS' // request over the token limits (400)
  | 'PAYLOAD_TOO_LARGE' // body over the byte limit (413)
  | 'UNSUPPORTED_MEDIA_TYPE' // a body that is not JSON (415)
  | 'MISSING_CREDENTIALS' // no Authorization header (403)
  | 'INVALID_CREDENTIALS' // unknown or revoked key (401)
  | 'FORBIDDEN' // authenticated but not allowed (403)
  | 'UNAUTHENTICATED' // no valid session on a console route (401)
  | 'EMAIL_NOT_VERIFIED' // the account's email is not verified yet (403)
  | 'CSRF' // a cookie-authenticated mutation from an untrusted origin (403)
  | 'NOT_FOUND' // (404)
  | 'KEY_LIMIT' // active key cap reached (409)
  | 'CONFLICT' // (409)
  | 'RATE_LIMITED' // (429)
  | 'OVERLOADED' // queue full (503)
  | 'TIMEOUT' // deadline passed before an answer (503)
  | 'NOT_READY' // engine or database not ready (503)
  | 'CANCELLED' // client went away (499, never seen by a client)
  | 'INTERNAL'; // (500)

export interface FieldIssue {
  /** FastAPI-style kind, e.g. missing, string_type, too_short. */
  type: string;
  /** Location, starting with "body". */
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

export interface DomainError extends Error {
  readonly brier: true;
  readonly code: ErrorCode;
  /** Structured details: field issues for VALIDATION, anything JSON for the rest. */
  readonly issues?: FieldIssue[];
  /** Seconds the client should wait before retrying (OVERLOADED, TIMEOUT, NOT_READY, RATE_LIMITED). */
  readonly retryAfter?: number;
}

export function fail(
  code: ErrorCode,
  message: string,
  extra: { issues?: FieldIssue[]; retryAfter?: number; cause?: unknown } = {},
): DomainError {
  const { cause, ...rest } = extra;
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), {
    brier: true as const,
    code,
    ...rest,
  });
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof Error && (value as Partial<DomainError>).brier === true;
}
