import type { Logger } from '../observability/logger.ts';
import { createLogMailer } from './log.ts';
import type { Mailer } from './mailer.ts';
import { createSmtpMailer } from './smtp.ts';

/** SMTP when a URL is configured, otherwise the log mailer. */
export function createMailer(options: { smtpUrl: string | undefined; mailFrom: string }, logger: Logger): Mailer {
  return options.smtpUrl ? createSmtpMailer(options.smtpUrl, options.mailFrom) : createLogMailer(logger);
}
