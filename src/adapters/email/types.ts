/**
 * The email adapter: account emails (password reset links, security notices) leave the service through one small
 * interface. Two implementations: SMTP (`SMTP_URL`, with nodemailer) and the local mailbox (files under
 * `{dataDir}/mailbox`, on the sandbox networks without SMTP), as the print sandbox does for letters.
 */

/** One email to send: recipient, subject, bodies, and the id that makes a retry the same message. */
export interface EmailMessage {
  /**
   * The message's own id (the outbox row's): a repeat with the same id (a retry after a crash between sending and
   * recording it) is one message in the local mailbox and carries the same Message-ID over SMTP.
   */
  id?: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * The email adapter: SMTP, or the local mailbox on local networks; chosen at start-up by
 * `createEmailSender`.
 */
export interface EmailSender {
  readonly kind: 'smtp' | 'mailbox';
  /** Throws when the message was not accepted (the outbox then retries it later). */
  send(message: EmailMessage): Promise<void>;
  close(): Promise<void>;
}

/** A message as the local mailbox keeps it. */
export interface StoredEmail {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  receivedAt: string;
}

/** The local mailbox: an `EmailSender` that also lists what it received. */
export interface LocalMailbox extends EmailSender {
  readonly kind: 'mailbox';
  /** Newest first; at most `limit` messages, optionally only those to `to` (case-insensitive). */
  list(options?: { to?: string; limit?: number }): Promise<StoredEmail[]>;
}

/** Whether `sender` is the local mailbox (which can also list what it received). */
export function isLocalMailbox(sender: EmailSender | null): sender is LocalMailbox {
  return sender?.kind === 'mailbox';
}
