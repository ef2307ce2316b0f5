import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths that may carry secrets; pino replaces them before anything is written. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.key',
  '*.token',
  '*.secret',
];

/**
 * Without a destination: stdout, written asynchronously (a line per request costs the request no
 * write system call; lines written while one is in flight go out together), flushed when the process
 * exits. Measured in issue 35: see DEVELOPERS.md.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'brier' } },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

export type { Logger };
