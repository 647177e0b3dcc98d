import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { leaseDue } from '../../db/lease.ts';
import { type EmailOutboxRow, emailOutbox } from '../../db/schema/index.ts';

export async function insertOutboxEmail(
  db: DbOrTx,
  values: { id: string; userId: string | null; kind: string; messageSealed: string },
  now: Date,
): Promise<void> {
  await db.insert(emailOutbox).values({ ...values, nextAttemptAt: now, createdAt: now });
}

/**
 * Leases up to `limit` unsent, due emails until `leaseUntil` (SKIP LOCKED: two workers never take the same row; a
 * worker killed mid-send leaves a lease that runs out, and the row is sent again).
 */
export async function leaseDueEmails(
  db: DbOrTx,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<EmailOutboxRow[]> {
  return leaseDue(db, emailOutbox, {
    set: sql`lease_until = ${leaseUntil.toISOString()}, attempts = attempts + 1`,
    due: sql`q.sent_at is null and q.message_sealed is not null and q.next_attempt_at <= ${now.toISOString()}`,
    orderBy: sql`q.next_attempt_at`,
    now,
    limit,
  });
}

/** Sent: the sealed message is blanked (a reset link must not outlive its sending in the database). */
export async function markEmailSent(db: DbOrTx, id: string, now: Date): Promise<void> {
  await db
    .update(emailOutbox)
    .set({ sentAt: now, messageSealed: null, leaseUntil: null, lastError: null })
    .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
}

/** Not sent this time: tried again at `nextAttemptAt`; `giveUp` blanks the message and stops trying. */
export async function markEmailFailed(
  db: DbOrTx,
  id: string,
  values: { nextAttemptAt: Date; lastError: string; giveUp: boolean },
): Promise<void> {
  await db
    .update(emailOutbox)
    .set({
      nextAttemptAt: values.nextAttemptAt,
      lastError: values.lastError,
      leaseUntil: null,
      ...(values.giveUp ? { messageSealed: null } : {}),
    })
    .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
}
