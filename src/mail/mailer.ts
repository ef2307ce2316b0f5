/** One outgoing message. `link` is the action the message carries (verify, reset), when there is one. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  link?: string;
}

/** Sends mail. Implementations: SMTP (nodemailer) and a log mailer for the embedded default. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
