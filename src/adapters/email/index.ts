/**
 * The email adapter's entry point: `createEmailSender(config)` picks SMTP when `SMTP_URL` is set, the local mailbox
 * when it is unset on `local` or `devnet`, and nothing otherwise (account emails are then not sent; the start says
 * so in the log).
 */
import { createLocalMailbox } from './mailbox.ts';
import { createSmtpSender } from './smtp.ts';
import type { EmailSender } from './types.ts';

export { createLocalMailbox, type LocalMailboxOptions } from './mailbox.ts';
export { createSmtpSender, type SmtpSenderOptions } from './smtp.ts';
export * from './types.ts';

/**
 * What `createEmailSender` chooses from: SMTP when a URL is set, else the local mailbox on local networks.
 */
export interface EmailSenderOptions {
  network: 'local' | 'devnet' | 'sepolia' | 'mainnet';
  smtpUrl: string | null;
  /** The `From:` of every message. */
  from: string;
  /** The local mailbox keeps its messages under `{dataDir}/mailbox`. */
  dataDir: string;
  now?: () => Date;
}

/**
 * The email sender of this deployment, chosen once at start: SMTP when `smtpUrl` is set, else the local mailbox on
 * the sandbox networks (`local`, `devnet`), else none (null).
 * @example createEmailSender({ network: 'local', smtpUrl: null, from: 'sealpay <no-reply@localhost>', dataDir: './data' })
 */
export function createEmailSender(options: EmailSenderOptions): EmailSender | null {
  const smtpUrl = options.smtpUrl?.trim();
  if (smtpUrl) return createSmtpSender({ url: smtpUrl, from: options.from });
  if (options.network === 'local' || options.network === 'devnet') {
    return createLocalMailbox({
      dataDir: options.dataDir,
      from: options.from,
      ...(options.now ? { now: options.now } : {}),
    });
  }
  return null;
}
