import { type EmailMessage, isLocalMailbox, type StoredEmail } from '../../adapters/email/index.ts';
import type { DbOrTx } from '../../db/client.ts';
import type { Deps } from '../../deps.ts';
import { type Backoff, backoffMs } from '../../lib/backoff.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/logger.ts';
import { startPollingLoop } from '../../worker/polling-loop.ts';
import { type EmailKind, type NoticeKind, noticeEmail } from './emails.ts';
import {
  insertOutboxEmail,
  leaseDueEmails,
  markEmailFailed,
  markEmailSent,
} from './notifications.repository.ts';

/** A worker that died mid-send leaves its lease; the email is sent again after this. */
const LEASE_MS = 60_000;
/** After this many failed attempts (about a day with the backoff below) an email is dropped, its content blanked. */
export const MAX_EMAIL_ATTEMPTS = 12;
/** An email's retries: 5 s doubling up to an hour (src/lib/backoff.ts). */
const RETRY: Backoff = { firstMs: 5_000, factor: 2, maxMs: 3_600_000 };

/** The sealing context binds a sealed message to its outbox row. */
function sealContext(id: string): string {
  return `email-outbox:${id}`;
}

/**
 * Queues an email in the outbox, through `db`: pass the database transaction of the change the email tells about,
 * so a rolled-back change sends nothing and a committed one is sent even after a crash. The message is sealed with
 * the master key (a reset link is a credential) and blanked once sent. Nothing is queued where no email sender is
 * configured.
 */
export async function queueEmail(
  deps: Deps,
  db: DbOrTx,
  values: { userId: string | null; kind: EmailKind; message: EmailMessage },
): Promise<void> {
  if (!deps.email) return;
  const id = newId();
  const messageSealed = deps.keyring.seal(JSON.stringify(values.message), sealContext(id));
  await insertOutboxEmail(
    db,
    { id, userId: values.userId, kind: values.kind, messageSealed },
    deps.clock.now(),
  );
  // Heard after the commit at the latest on the next poll; usually at once.
  deps.workSignal.notify('email');
}

/** Queues a security notice to the account's address (see `queueEmail` for `db`). */
export async function queueNotice(
  deps: Deps,
  db: DbOrTx,
  user: { id: string; email: string },
  kind: NoticeKind,
  detail: string | null = null,
): Promise<void> {
  const message = noticeEmail(kind, user.email, deps.clock.now(), detail, deps.config.publicOrigin);
  await queueEmail(deps, db, { userId: user.id, kind, message });
}

/** Sends what is due in the outbox, up to `limit` emails; returns how many were sent. */
export async function deliverDueEmails(deps: Deps, logger: Logger, limit = 20): Promise<number> {
  const sender = deps.email;
  if (!sender) return 0;
  const { db } = deps.database;
  const now = deps.clock.now();
  const due = await leaseDueEmails(db, now, new Date(now.getTime() + LEASE_MS), limit);
  let sent = 0;
  for (const row of due) {
    if (!row.messageSealed) continue;
    try {
      const message = JSON.parse(
        deps.keyring.openText(row.messageSealed, sealContext(row.id)),
      ) as EmailMessage;
      await sender.send({ ...message, id: row.id });
      await markEmailSent(db, row.id, deps.clock.now());
      sent += 1;
    } catch (error) {
      const giveUp = row.attempts >= MAX_EMAIL_ATTEMPTS;
      // The transport's reason only: never the message, which may carry a reset link.
      const reason = error instanceof Error ? error.message.slice(0, 500) : 'unknown error';
      logger.warn(
        { emailId: row.id, kind: row.kind, attempts: row.attempts, reason },
        giveUp ? 'email dropped after repeated failures' : 'email not sent; will retry',
      );
      await markEmailFailed(db, row.id, {
        nextAttemptAt: new Date(deps.clock.now().getTime() + backoffMs(RETRY, row.attempts)),
        lastError: reason,
        giveUp,
      });
    }
  }
  return sent;
}

/**
 * The email delivery loop of a worker process: sends what is due, then waits for a wake-up (an email queued, in this
 * process or, on PostgreSQL, in another) or the next poll. Returns the function that stops it.
 */
export function startEmailDelivery(deps: Deps, logger: Logger): () => Promise<void> {
  if (!deps.email) return async () => {};
  return startPollingLoop({
    round: () => deliverDueEmails(deps, logger),
    pollMs: Math.max(500, deps.config.worker.pollMs),
    signal: { source: deps.workSignal, queue: 'email' },
    logger,
    failureMessage: 'email delivery failed',
  });
}

/**
 * Who reads the local mailbox: a signed-in account (from anywhere), the developer at this machine itself (no
 * session, the request straight from the loopback), or nobody.
 */
export type MailboxReader = { account: { email: string } } | 'this-machine' | null;

/** Whether account emails land in the local mailbox (a sandbox network without SMTP), which can then be read. */
export function hasLocalMailbox(deps: Deps): boolean {
  return deps.config.environment === 'sandbox' && isLocalMailbox(deps.email);
}

/**
 * The local mailbox is what a local mail catcher is: the developer's own inbox. A signed-in account reads only
 * what was sent to its own email (a `to` naming another address finds nothing); without a session only a request
 * from this machine itself reads it, whole. Anyone else, and every caller where email really goes out (SMTP, or
 * production), gets `404 not_found`: the same answer, so nobody can tell whether a mailbox is there. A password
 * reset link is a credential: an open mailbox was an account takeover.
 */
export async function readMailbox(
  deps: Deps,
  reader: MailboxReader,
  filter: { to?: string | undefined; limit: number },
): Promise<StoredEmail[]> {
  const mailbox = deps.email;
  // (isLocalMailbox again: the compiler then knows `mailbox` is one.)
  if (!hasLocalMailbox(deps) || !isLocalMailbox(mailbox) || reader === null) {
    throw new AppError('not_found', 'There is no local mailbox on this service.');
  }
  if (reader === 'this-machine')
    return mailbox.list({ limit: filter.limit, ...(filter.to ? { to: filter.to } : {}) });
  const own = reader.account.email;
  if (filter.to !== undefined && filter.to.trim().toLowerCase() !== own.trim().toLowerCase()) return [];
  return mailbox.list({ limit: filter.limit, to: own });
}
