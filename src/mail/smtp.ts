import nodemailer from 'nodemailer';
import type { Mailer, MailMessage } from './mailer.ts';

/** SMTP through nodemailer, e.g. smtp://user:pass@host:587 or smtps://host:465. */
export function createSmtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    delivery: 'smtp',
    async send(message: MailMessage) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
    async close() {
      transport.close();
    },
  };
}
