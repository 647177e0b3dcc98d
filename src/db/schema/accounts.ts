import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { KEY_PERMISSIONS } from '../../lib/key-scope.ts';
import { createdAt, ts, updatedAt } from './columns.ts';

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name'),
    company: text('company'),
    passwordHash: text('password_hash').notNull(),
    mustChangePassword: boolean('must_change_password').notNull().default(false),
    /** Bumped on password change: every session minted under an older version is over. */
    tokenVersion: integer('token_version').notNull().default(1),
    totpSecretSealed: text('totp_secret_sealed'),
    totpPendingSecretSealed: text('totp_pending_secret_sealed'),
    totpEnabled: boolean('totp_enabled').notNull().default(false),
    /** The last accepted TOTP time step: a code is accepted once. */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    /**
     * SHA-256 of each unused TOTP recovery code (salted with the account id): a code is spent by removing its hash
     * in one guarded update, so it works once, also under concurrent requests. Emptied when 2FA goes off.
     */
    recoveryCodeHashes: text('recovery_code_hashes').array().notNull().default(sql`'{}'::text[]`),
    disabledAt: ts('disabled_at'),
    lastLoginAt: ts('last_login_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
);

export type UserRow = typeof users.$inferSelect;

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    tokenVersion: integer('token_version').notNull(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sessions_token_hash_key').on(t.tokenHash), index('sessions_user_idx').on(t.userId)],
);

export type SessionRow = typeof sessions.$inferSelect;

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    lastUsedAt: ts('last_used_at'),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    /** Scopes (issue 29, src/lib/key-scope.ts): a key made without them has the whole account's reach. */
    permissions: text('permissions', { enum: KEY_PERMISSIONS }).notNull().default('full'),
    /** The wallets the key is bound to; null: every wallet of the account. */
    walletIds: text('wallet_ids').array(),
    /** What the key may send in any 24 hours, in base units; null: no limit. */
    spendLimit: numeric('spend_limit_base_units', { precision: 78, scale: 0 }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_keys_key_hash_key').on(t.keyHash), index('api_keys_user_idx').on(t.userId)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type NewApiKey = typeof apiKeys.$inferInsert;

/** Fixed-window counters shared by every API process on one PostgreSQL (rate limits, login lockout). */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    key: text('key').primaryKey(),
    windowStart: ts('window_start').notNull(),
    count: integer('count').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('rate_limit_counters_expires_idx').on(t.expiresAt)],
);
