import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './accounts.ts';
import { createdAt, serviceNow, ts } from './columns.ts';

/**
 * Password reset tokens: the email carries the token, the database only its hash. Single use (`usedAt`, set by a
 * guarded update) and short-lived (`expiresAt`); a successful reset spends every other open token of the account.
 */
export const passwordResets = pgTable(
  'password_resets',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('password_resets_token_hash_key').on(t.tokenHash),
    index('password_resets_user_idx').on(t.userId),
  ],
);

export type PasswordResetRow = typeof passwordResets.$inferSelect;

/**
 * Emails waiting to be sent, written in the database transaction of the change they tell about (a rolled-back
 * change sends nothing; a crash loses nothing) and sent by the worker. The rendered message is sealed with the
 * master key (it may carry a reset link) and blanked once sent; `leaseUntil` keeps two workers off one row.
 */
export const emailOutbox = pgTable(
  'email_outbox',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').references(() => users.id),
    /** What the message is (`password_reset`, `password_changed`, …): for logs and metrics, never its content. */
    kind: text('kind').notNull(),
    /** The message (`{to, subject, text, html?}` as JSON), sealed; null once sent. */
    messageSealed: text('message_sealed'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().default(serviceNow),
    leaseUntil: ts('lease_until'),
    sentAt: ts('sent_at'),
    /** The last delivery failure's message (the transport's, never the message's content). */
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [index('email_outbox_due_idx').on(t.sentAt, t.nextAttemptAt)],
);

export type EmailOutboxRow = typeof emailOutbox.$inferSelect;
