import type { Logger } from '../observability/logger.ts';
import type { Mailer, MailMessage } from './mailer.ts';

/**
 * The embedded default when no SMTP_URL is set: each message becomes one log line that carries
 * its full link, so that a local operator can verify and reset from the server log.
 */
export function createLogMailer(logger: Logger): Mailer {
  return {
    delivery: 'log',
    async send(message: MailMessage) {
      // `mailLink`, not `link.token`: the redaction paths must not hide what the operator needs.
      logger.info(
        { mailTo: message.to, subject: message.subject, mailLink: message.link ?? null },
        'mail (log mailer)',
      );
    },
    async close() {},
  };
}
