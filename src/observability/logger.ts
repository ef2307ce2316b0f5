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
 * Without a destination: stdout through a 4 KiB buffer written asynchronously, flushed every
 * `FLUSH_MS` and when the process exits: a line per request then costs the request no write system
 * call (measured in issue 35, see DEVELOPERS.md). A SIGKILL loses at most the last FLUSH_MS of lines.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const stream = destination ?? bufferedStdout();
  const logger = pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'brier' } }, stream);
  lineLoggers.set(logger, pino({ level, base: { service: 'brier' } }, stream));
  return logger;
}

const lineLoggers = new WeakMap<Logger, Logger>();

/**
 * The logger for lines whose fields are fixed and never secret (the request log: id, method, path
 * without its query, status, time, key id): the same level and stream without the redaction pass,
 * which cost two thirds of a line (measured in issue 35: ~12 of ~18 us). Any other logger is
 * returned as it is.
 */
export function fixedFieldLogger(logger: Logger): Logger {
  return lineLoggers.get(logger) ?? logger;
}

export const FLUSH_MS = 100;

function bufferedStdout(): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  let pending = false;
  const timer = setInterval(() => {
    if (!pending) return;
    pending = false;
    try {
      stream.flush();
    } catch {
      // closed at exit: pino flushed it then
    }
  }, FLUSH_MS);
  timer.unref();
  return {
    write(line: string) {
      pending = true;
      stream.write(line);
    },
  };
}

export type { Logger };
