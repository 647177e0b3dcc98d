import type { Address } from 'viem';
import { getStablecoinBalance } from '../../adapters/confidential/helpers.ts';
import type { TransactionRow, TransactionType, WalletRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { formatAmount } from '../../lib/money.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { requireNetwork } from '../wallets/balances.ts';
import { findByIdempotencyKey, insertTransaction } from './transactions.repository.ts';

export interface QueueRequest {
  userId: string;
  wallet: WalletRow;
  type: TransactionType;
  amount: bigint;
  fromAddress: string | null;
  toAddress: string | null;
  counterparty?: string | null;
  idempotencyKey?: string | undefined;
  /** What the idempotency key is bound to: the route and its body. */
  requestFingerprint: unknown;
  /**
   * Request-time checks on state the request itself changes (a balance). Every new request runs them, keyed or
   * not; only a replay of an existing key skips them, since the first request may have spent what they check.
   */
  check?: () => Promise<void>;
}

function isUniqueViolation(error: unknown): boolean {
  const code =
    (error as { code?: string; cause?: { code?: string } })?.cause?.code ??
    (error as { code?: string })?.code;
  return code === '23505';
}

export function assertIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && (key.length < 1 || key.length > 255)) {
    throw new AppError('validation_error', 'Idempotency-Key must be 1 to 255 characters.', {
      details: [{ path: 'headers.idempotency-key', message: 'must be 1 to 255 characters' }],
    });
  }
}

function replay(existing: TransactionRow, requestHash: string): TransactionRow {
  if (existing.requestHash !== requestHash) {
    throw new AppError('idempotency_conflict', 'This Idempotency-Key was used with a different request.');
  }
  return existing;
}

/**
 * Records a queued money movement, after every check the request can be judged on. With an Idempotency-Key, a
 * repeat of the same request returns the original row (without re-running `check`); concurrent duplicates meet
 * at the unique index.
 */
export async function queueTransaction(deps: Deps, request: QueueRequest): Promise<TransactionRow> {
  const { db } = deps.database;
  const network = requireNetwork(deps);
  const requestHash = sha256Hex(JSON.stringify(request.requestFingerprint));
  if (request.idempotencyKey) {
    const existing = await findByIdempotencyKey(db, request.userId, request.idempotencyKey);
    if (existing) return replay(existing, requestHash);
  }
  await request.check?.();
  const now = deps.clock.now();
  try {
    const row = await insertTransaction(db, {
      id: newId(),
      userId: request.userId,
      walletId: request.wallet.id,
      type: request.type,
      status: 'QUEUED',
      chainId: network.chainId,
      amount: request.amount.toString(),
      token: deps.operations[request.type].token,
      fromAddress: request.fromAddress,
      toAddress: request.toAddress,
      counterparty: request.counterparty ?? null,
      metadata: null,
      idempotencyKey: request.idempotencyKey ?? null,
      requestHash: request.idempotencyKey ? requestHash : null,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    });
    deps.workSignal.notify();
    return row;
  } catch (error) {
    if (request.idempotencyKey && isUniqueViolation(error)) {
      const existing = await findByIdempotencyKey(db, request.userId, request.idempotencyKey);
      if (existing) return replay(existing, requestHash);
    }
    throw error;
  }
}

export function assertCanSend(wallet: WalletRow): void {
  if (wallet.type !== 'CUSTODIAL') {
    throw new AppError('wallet_not_custodial', 'External (watch-only) wallets can receive but cannot send.');
  }
}

/** The public balance must cover the amount (the worker checks again before it signs). */
export async function assertPublicBalance(deps: Deps, wallet: WalletRow, amount: bigint): Promise<void> {
  const balance = await getStablecoinBalance(requireNetwork(deps), wallet.address as Address);
  if (balance < amount) {
    throw new AppError(
      'insufficient_balance',
      `The wallet holds ${formatAmount(balance)} STABLE: too little to mint ${formatAmount(amount)}.`,
      {
        details: { available: formatAmount(balance), requested: formatAmount(amount) },
      },
    );
  }
}
