/**
 * Telling "the database is unreachable or stalled" apart from every other failure, so that such a
 * request is answered 503 with retry-after (the client can retry elsewhere or later) instead of 500.
 */

/** Socket and pool failures: the server is down, restarting, unreachable or too slow. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs of an unavailable server: class 08 (connection), 57P01-57P03 (shutdown, starting), 53300 (too many connections). */
function unavailableState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

const MESSAGES =
  /timeout exceeded when trying to connect|Query read timeout|Connection terminated|terminating connection|the database system is (starting up|shutting down)|Client has encountered a connection error/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && unavailableState(code)))
    ) {
      return true;
    }
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
