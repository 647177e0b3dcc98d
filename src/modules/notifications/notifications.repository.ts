import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { type DbOrTx, rows } from '../../db/client.ts';
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
  const claimed = await rows<{ id: string }>(
    db,
    sql`update email_outbox set lease_until = ${leaseUntil.toISOString()}, attempts = attempts + 1
        where id in (
          select id from email_outbox
          where sent_at is null
            and message_sealed is not null
            and next_attempt_at <= ${now.toISOString()}
            and (lease_until is null or lease_until < ${now.toISOString()})
          order by next_attempt_at
          limit ${limit}
          for update skip locked)
        returning id`,
  );
  if (claimed.length === 0) return [];
  return db
    .select()
    .from(emailOutbox)
    .where(
      inArray(
        emailOutbox.id,
        claimed.map((row) => row.id),
      ),
    );
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
