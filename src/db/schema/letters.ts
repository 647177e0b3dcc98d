import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { Address, Hex } from 'viem';
import { users } from './accounts.ts';
import { createdAt, ts, updatedAt } from './columns.ts';
import { transactions } from './transactions.ts';
import { wallets } from './wallets.ts';

export const LETTER_STATUSES = [
  'DRAFT',
  'ESCROWED',
  'MAILED',
  'CLAIMING',
  'CLAIMED',
  'EXPIRED',
  'VOIDED',
  'FAILED',
] as const;
export type LetterStatus = (typeof LETTER_STATUSES)[number];

export interface RecipientAddress {
  line1: string;
  line2: string | null;
  landmark: string | null;
  city: string;
  region: string;
  postal: string | null;
  country: string;
}

export interface MailBlock {
  provider: 'printer';
  providerId: string;
  deliveryMethod: 'standard' | 'tracked';
  status: string;
  trackingNumber: string | null;
  expectedDeliveryDate: string | null;
  mailedAt: string;
  testMode: boolean;
}

export const letters = pgTable(
  'letters',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    senderWalletId: text('sender_wallet_id')
      .notNull()
      .references(() => wallets.id),
    senderAddress: text('sender_address').$type<Address>().notNull(),
    status: text('status', { enum: LETTER_STATUSES }).notNull(),
    chainId: integer('chain_id').notNull(),
    amount: numeric('amount_base_units', { precision: 78, scale: 0 }).notNull(),
    /** The memo, sealed with the keyring until the claim reveals it. */
    memoSealed: text('memo_sealed'),
    recipientName: text('recipient_name').notNull(),
    recipientAddress: jsonb('recipient_address').$type<RecipientAddress>().notNull(),
    expiresAt: ts('expires_at').notNull(),
    claimOrigin: text('claim_origin').notNull(),
    /** SHA-256 of the normalized claim code: the lookup key. The code itself is only ever sealed. */
    claimCodeHash: text('claim_code_hash').notNull(),
    claimCodeSealed: text('claim_code_sealed'),
    /** The letter's id in the vault contract (bytes32). */
    vaultLetterId: text('vault_letter_id').$type<Hex>().notNull(),
    escrowTransactionId: text('escrow_transaction_id').references(() => transactions.id),
    claimTransactionId: text('claim_transaction_id').references(() => transactions.id),
    refundTransactionId: text('refund_transaction_id').references(() => transactions.id),
    refundReason: text('refund_reason'),
    /** The status a CLAIMING letter returns to when its release fails (ESCROWED or MAILED). */
    claimableStatus: text('claimable_status', { enum: ['ESCROWED', 'MAILED'] }),
    claimantUserId: text('claimant_user_id').references(() => users.id),
    claimantWalletId: text('claimant_wallet_id').references(() => wallets.id),
    claimantAddress: text('claimant_address').$type<Address>(),
    /**
     * The principal that made the claim, `api_key:<id>` or `session:<id>`: only it may repeat the claim. Null on
     * claims made before it was recorded (migration 0009): those are the claimant account's.
     */
    claimantPrincipal: text('claimant_principal'),
    claimedAt: ts('claimed_at'),
    mail: jsonb('mail').$type<MailBlock>(),
    mailAttempts: jsonb('mail_attempts')
      .$type<Array<{ at: string; error: string }>>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    needsReview: boolean('needs_review').notNull().default(false),
    error: text('error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('letters_claim_code_hash_key').on(t.claimCodeHash),
    index('letters_user_created_idx').on(t.userId, t.createdAt, t.id),
    index('letters_expiry_idx').on(t.expiresAt).where(sql`${t.status} in ('ESCROWED', 'MAILED')`),
  ],
);

export type LetterRow = typeof letters.$inferSelect;
export type NewLetter = typeof letters.$inferInsert;
