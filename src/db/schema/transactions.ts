import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { Address, Hex } from 'viem';
import type { TransactionErrorCode } from '../../lib/errors.ts';
import { users } from './accounts.ts';
import { createdAt, ts, updatedAt } from './columns.ts';
import { wallets } from './wallets.ts';

export const TRANSACTION_TYPES = [
  'FUND',
  'MINT',
  'TRANSFER',
  'REDEEM',
  'LETTER_ESCROW',
  'LETTER_CLAIM',
  'LETTER_REFUND',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export const TRANSACTION_STATUSES = [
  'QUEUED',
  'PENDING',
  'SETTLING',
  'CONFIRMED',
  'SETTLED',
  'FAILED',
] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** What a transaction records beyond its columns (shown as `metadata`); every field belongs to some types only. */
export type TransactionMetadata = {
  /** Letter legs: the letter, and which of its legs the row is. */
  letterId?: string;
  leg?: 'escrow' | 'claim' | 'refund';
  /** Refund leg: why the escrow goes back (`voided`, `expired`). */
  reason?: string;
  /** The operator's sponsored gas top-up, sent before the row's own transaction. */
  gasTxHash?: Hex;
  /** Redeem: the unwrap request (the burnt amount's handle) that the payout finalizes. */
  unwrapRequestId?: Hex;
  /** Redeem: how many payouts reverted so far (each retry signs a fresh one, `finalize-{n}`). */
  finalizeAttempt?: number;
  /** Letter legs: whether the vault's event was decrypted and held the letter's amount. */
  verified?: boolean;
};

/**
 * One money movement as the client sees it, and the outbox row the worker drives: created `QUEUED` in the same
 * database transaction as the request, claimed with a lease, advanced by guarded updates.
 */
export const transactions = pgTable(
  'transactions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    walletId: text('wallet_id')
      .notNull()
      .references(() => wallets.id),
    type: text('type', { enum: TRANSACTION_TYPES }).notNull(),
    status: text('status', { enum: TRANSACTION_STATUSES }).notNull(),
    chainId: integer('chain_id').notNull(),
    amount: numeric('amount_base_units', { precision: 78, scale: 0 }).notNull(),
    token: text('token').notNull(),
    txHash: text('tx_hash').$type<Hex>(),
    settlementTxHash: text('settlement_tx_hash').$type<Hex>(),
    fromAddress: text('from_address').$type<Address>(),
    toAddress: text('to_address').$type<Address>(),
    counterparty: text('counterparty'),
    error: text('error'),
    errorCode: text('error_code').$type<TransactionErrorCode>(),
    metadata: jsonb('metadata').$type<TransactionMetadata>(),
    /** The worker's position inside the status (e.g. redeem: `unwrap` then `finalize`). */
    step: text('step').notNull().default('start'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    leaseOwner: text('lease_owner'),
    leaseUntil: ts('lease_until'),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    blockHash: text('block_hash').$type<Hex>(),
    logIndex: integer('log_index'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('transactions_user_created_idx').on(t.userId, t.createdAt),
    index('transactions_wallet_idx').on(t.walletId),
    index('transactions_runnable_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} in ('QUEUED', 'PENDING', 'SETTLING')`),
    uniqueIndex('transactions_idempotency_key').on(t.userId, t.idempotencyKey),
  ],
);

export type TransactionRow = typeof transactions.$inferSelect;
export type NewTransaction = typeof transactions.$inferInsert;

/**
 * Every chain transaction the worker signs, stored before it is broadcast: after a crash the same bytes are
 * looked up and rebroadcast, never a new signature for the same intent.
 */
export const chainSubmissions = pgTable(
  'chain_submissions',
  {
    id: text('id').primaryKey(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => transactions.id),
    purpose: text('purpose').notNull(),
    fromAddress: text('from_address').$type<Address>().notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    rawTx: text('raw_tx').$type<Hex>().notNull(),
    txHash: text('tx_hash').$type<Hex>().notNull(),
    status: text('status', { enum: ['SIGNED', 'MINED', 'REVERTED'] }).notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    blockHash: text('block_hash').$type<Hex>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('chain_submissions_purpose_key').on(t.transactionId, t.purpose),
    uniqueIndex('chain_submissions_nonce_key').on(t.fromAddress, t.nonce),
    uniqueIndex('chain_submissions_hash_key').on(t.txHash),
  ],
);

export type SubmissionRow = typeof chainSubmissions.$inferSelect;
export type NewSubmission = typeof chainSubmissions.$inferInsert;

/** The next nonce of every address the service signs for, allocated in the database so workers never collide. */
export const addressNonces = pgTable('address_nonces', {
  address: text('address').$type<Address>().primaryKey(),
  nextNonce: bigint('next_nonce', { mode: 'number' }).notNull(),
  updatedAt: updatedAt(),
});
