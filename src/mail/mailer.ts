/** One outgoing message. `link` is the action the message carries (verify, reset), when there is one. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  link?: string;
}

/** Where the links of verification and reset mails go: to the address by SMTP, or (no SMTP_URL) to the server log. */
export type MailDelivery = 'smtp' | 'log';

/** Sends mail. Implementations: SMTP (nodemailer) and a log mailer for the embedded default. */
export interface Mailer {
  /** How this mailer delivers (the console's check-email page tells a user where the link went). */
  readonly delivery: MailDelivery;
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
