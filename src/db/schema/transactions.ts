import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { Address, Hex } from 'viem';
import type { TransactionErrorCode } from '../../lib/errors.ts';
import { apiKeys, users } from './accounts.ts';
import { createdAt, serviceNow, ts, updatedAt } from './columns.ts';
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

/** Which way the money went for the row's wallet: `in` for money received (incoming transfers, claims, refunds). */
export const TRANSACTION_DIRECTIONS = ['in', 'out'] as const;
export type TransactionDirection = (typeof TRANSACTION_DIRECTIONS)[number];

/**
 * The step of a `TRANSFER` out that the chain follower saw and the service did not send: money moved with the
 * wallet's key outside the API (after `POST /wallets/{id}/export`), or by an external wallet's owner.
 */
export const SENT_OUTSIDE_STEP = 'sent-outside';

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
  /** A transfer out the service did not send, seen on chain (step `sent-outside`): moved outside sealpay. */
  sentOutside?: boolean;
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
    direction: text('direction', { enum: TRANSACTION_DIRECTIONS }).notNull().default('out'),
    status: text('status', { enum: TRANSACTION_STATUSES }).notNull(),
    chainId: integer('chain_id').notNull(),
    /** Null only for money received by an external wallet in confidential units: the service holds no key to read it. */
    amount: numeric('amount_base_units', { precision: 78, scale: 0 }),
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
    /**
     * Confidential transfers sent together (src/modules/transactions/operations/transfer-batch.ts): the batch is
     * named by its first leg's id, which holds the batch's signed transaction (`chain_submissions`, purpose
     * `batch`); `batchLeg` is the row's position in it. Set before the batch is signed, kept afterwards.
     */
    batchId: text('batch_id'),
    batchLeg: integer('batch_leg'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().default(serviceNow),
    leaseOwner: text('lease_owner'),
    leaseUntil: ts('lease_until'),
    /** The API key that asked for the row (null: a session, or the service itself): a key's spend is summed here. */
    apiKeyId: text('api_key_id').references(() => apiKeys.id),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    blockHash: text('block_hash').$type<Hex>(),
    logIndex: integer('log_index'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The list's order (created_at desc, id desc), read backwards: page 1, a cursor's next page, and per filter.
    index('transactions_user_created_idx').on(t.userId, t.createdAt, t.id),
    index('transactions_wallet_created_idx').on(t.walletId, t.createdAt, t.id),
    index('transactions_user_status_created_idx').on(t.userId, t.status, t.createdAt, t.id),
    index('transactions_runnable_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} in ('QUEUED', 'PENDING', 'SETTLING')`),
    uniqueIndex('transactions_idempotency_key').on(t.userId, t.idempotencyKey),
    // The chain follower records each log received once per receiving wallet, even when it reads a block twice.
    uniqueIndex('transactions_received_log_key')
      .on(t.chainId, t.txHash, t.logIndex, t.walletId)
      .where(sql`${t.direction} = 'in'`),
    // And each transfer out of a wallet that the service did not send (an exported key's holder moved the money).
    uniqueIndex('transactions_outflow_log_key')
      .on(t.chainId, t.txHash, t.logIndex, t.walletId)
      .where(sql`${t.direction} = 'out' and ${t.step} = '${sql.raw(SENT_OUTSIDE_STEP)}'`),
    index('transactions_batch_idx').on(t.batchId).where(sql`${t.batchId} is not null`),
    index('transactions_api_key_created_idx')
      .on(t.apiKeyId, t.createdAt)
      .where(sql`${t.apiKeyId} is not null`),
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
    index('chain_submissions_block_idx').on(t.blockNumber).where(sql`${t.blockNumber} is not null`),
  ],
);

export type SubmissionRow = typeof chainSubmissions.$inferSelect;
export type NewSubmission = typeof chainSubmissions.$inferInsert;

/**
 * Every signed attempt of a submission (its first signature and each replacement at a higher fee: the same nonce,
 * `to`, `data` and `value`), stored before it is broadcast. `sentBlock` is the chain's height when it was last
 * broadcast: the replacement rule counts blocks from it.
 */
export const chainSubmissionAttempts = pgTable(
  'chain_submission_attempts',
  {
    id: text('id').primaryKey(),
    submissionId: text('submission_id')
      .notNull()
      .references(() => chainSubmissions.id, { onDelete: 'cascade' }),
    rawTx: text('raw_tx').$type<Hex>().notNull(),
    txHash: text('tx_hash').$type<Hex>().notNull(),
    sentBlock: bigint('sent_block', { mode: 'bigint' }),
    // Real time (`now()`), not the sandbox's test clock: a stuck transaction is judged by the chain's own time.
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('chain_submission_attempts_hash_key').on(t.txHash),
    index('chain_submission_attempts_submission_idx').on(t.submissionId, t.createdAt),
  ],
);

export type SubmissionAttemptRow = typeof chainSubmissionAttempts.$inferSelect;

/** The next nonce of every address the service signs for, allocated in the database so workers never collide. */
export const addressNonces = pgTable('address_nonces', {
  address: text('address').$type<Address>().primaryKey(),
  nextNonce: bigint('next_nonce', { mode: 'number' }).notNull(),
  updatedAt: updatedAt(),
});

/** How far the chain follower has read a chain: the last block whose logs are recorded. */
export const chainCursors = pgTable('chain_cursors', {
  chainId: integer('chain_id').primaryKey(),
  lastBlock: bigint('last_block', { mode: 'bigint' }).notNull(),
  updatedAt: updatedAt(),
});
