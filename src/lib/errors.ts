import { boundedEcho, describePath, locOf } from './json-bounds.ts';

/**
 * Domain failures, independent of HTTP. The HTTP layer maps each code to a status in one table
 * (src/http/errors.ts). Created by `fail()`, recognised by `isDomainError()`.
 */
/** What went wrong; src/http/errors.ts maps each to a status, a wire error_type and a description. */
export type ErrorCode =
  | 'VALIDATION'
  | 'BAD_REQUEST'
  | 'UNKNOWN_MODEL'
  | 'MAX_TOKENS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'MISSING_CREDENTIALS'
  | 'INVALID_CREDENTIALS'
  | 'FORBIDDEN'
  | 'UNAUTHENTICATED'
  | 'EMAIL_NOT_VERIFIED'
  | 'CSRF'
  | 'NOT_FOUND'
  | 'KEY_LIMIT'
  | 'EXAMPLE_LIMIT'
  | 'RETENTION_OFF'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'OVERLOADED'
  | 'TIMEOUT'
  | 'NOT_READY'
  | 'CANCELLED'
  | 'INTERNAL';

export interface FieldIssue {
  /** FastAPI-style kind, e.g. missing, string_type, too_short, json_invalid, duplicate_key. */
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

/**
 * A request body refused at one place (a VALIDATION failure, the 422 detail list with one entry):
 * `loc` is ['body', ...path], the message names the field first (`questions.q.criteria: ...`), and
 * `input` is echoed bounded (a scalar or a string; never a value not yet bounds-checked).
 */
export function invalidField(path: readonly (string | number)[], type: string, msg: string, input: unknown = null) {
  return fail('VALIDATION', `${describePath(path)}: ${msg}`, {
    issues: [{ type, loc: locOf(path), msg, input: boundedEcho(input) }],
  });
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof Error && (value as Partial<DomainError>).brier === true;
}
