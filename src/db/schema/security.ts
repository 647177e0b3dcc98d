import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './accounts.ts';
import { createdAt, ts } from './columns.ts';

/** WebAuthn credentials (passkeys). The public key is not a secret; the signature counter guards against clones. */
export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The credential id as the authenticator names it (base64url); unique across all accounts. */
    credentialId: text('credential_id').notNull(),
    /** COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    /** The last signature counter seen; an assertion must carry a larger one (when either is non-zero). */
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: jsonb('transports').$type<string[]>().notNull().default([]),
    deviceName: text('device_name'),
    lastUsedAt: ts('last_used_at'),
    /** Removed by its owner: it no longer logs in nor is listed; a repeated removal answers the same record. */
    removedAt: ts('removed_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('passkeys_credential_id_key').on(t.credentialId),
    index('passkeys_user_idx').on(t.userId),
  ],
);

export type PasskeyRow = typeof passkeys.$inferSelect;

/**
 * The second step of a TOTP login: the password was right, a code is still due. The client holds the token,
 * the database only its hash. Single use, 5 minutes, a few code attempts at most.
 */
export const pendingTotpLogins = pgTable(
  'pending_totp_logins',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('pending_totp_logins_token_hash_key').on(t.tokenHash),
    index('pending_totp_logins_expires_idx').on(t.expiresAt),
  ],
);

export type PendingTotpLoginRow = typeof pendingTotpLogins.$inferSelect;

/**
 * WebAuthn challenges already spent. The challenge itself travels in a signed cookie; a row here (keyed by its
 * hash) makes it single use. Rows outlive the challenge's validity only briefly and are swept.
 */
export const usedWebauthnChallenges = pgTable(
  'used_webauthn_challenges',
  {
    challengeHash: text('challenge_hash').primaryKey(),
    purpose: text('purpose').notNull(),
    userId: text('user_id'),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at').notNull(),
  },
  (t) => [index('used_webauthn_challenges_expires_idx').on(t.expiresAt)],
);
