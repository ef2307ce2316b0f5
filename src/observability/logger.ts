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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'brier' } }, destination);
}

export type { Logger };
