import nodemailer from 'nodemailer';
import type { EmailMessage, EmailSender } from './types.ts';

/** The SMTP server to send through and the `From:` of every message. */
export interface SmtpSenderOptions {
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465`; nodemailer's URL form. */
  url: string;
  from: string;
}

/** Sends over SMTP with nodemailer (one pooled transport per process). */
export function createSmtpSender(options: SmtpSenderOptions): EmailSender {
  const transport = nodemailer.createTransport(options.url);
  return {
    kind: 'smtp',
    async send(message: EmailMessage): Promise<void> {
      const host = new URL(options.url).hostname || 'localhost';
      await transport.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html ? { html: message.html } : {}),
        ...(message.id ? { messageId: `<${message.id}@${host}>` } : {}),
      });
    },
    async close(): Promise<void> {
      transport.close();
    },
  };
}
