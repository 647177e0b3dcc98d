import type { Address } from 'viem';
import { isUniqueViolation } from '../../db/errors.ts';
import type { NewTransaction, TransactionRow, TransactionType } from '../../db/schema/index.ts';
import type { Deps, WalletIdentity } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Scope } from '../../lib/key-scope.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { insertWithinSpendLimit } from '../keys/spend.service.ts';
import { assertMoneyConfigured, requireNetwork } from '../network/network.service.ts';
import { assertCanSend, ownWalletIdentity } from '../wallets/wallets.service.ts';
import {
  type DirectedTransaction,
  findByIdempotencyKey,
  insertTransaction,
} from './transactions.repository.ts';

/** The transaction types a client queues directly (letter legs are queued by the letters module). */
export type MoneyMovement = 'FUND' | 'MINT' | 'TRANSFER' | 'REDEEM';

interface QueueRequest {
  userId: string;
  /** The caller's: the key that asks is recorded on the row, and a transfer counts against its spend limit. */
  scope: Scope;
  wallet: WalletIdentity;
  type: TransactionType;
  amount: bigint;
  fromAddress: Address | null;
  toAddress: Address | null;
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

/**
 * The request's Idempotency-Key from every value it was sent with (undefined when none). Sent twice (two header
 * lines, or two values joined by a comma in one) it is refused: Node joins repeated headers into one value with
 * ", ", which would silently become a key neither copy names.
 */
export function idempotencyKeyOf(sent: readonly string[]): string | undefined {
  if (sent.length > 1) {
    throw new AppError('validation_error', 'Send one Idempotency-Key header, not several.', {
      details: [{ path: 'headers.idempotency-key', message: 'must be sent once' }],
    });
  }
  const [key] = sent;
  if (key !== undefined && (key.length < 1 || key.length > 255)) {
    throw new AppError('validation_error', 'Idempotency-Key must be 1 to 255 characters.', {
      details: [{ path: 'headers.idempotency-key', message: 'must be 1 to 255 characters' }],
    });
  }
  return key;
}

/**
 * A QUEUED row of `values.type`, due now: its token from the operation registry, its chain this process's. Every
 * transaction starts here, whoever queues it (a money movement, a letter leg).
 */
export function queuedTransaction(
  deps: Deps,
  now: Date,
  values: Omit<
    NewTransaction,
    'status' | 'token' | 'chainId' | 'nextAttemptAt' | 'createdAt' | 'updatedAt'
  > & {
    type: TransactionType;
  },
): DirectedTransaction {
  return {
    ...values,
    status: 'QUEUED',
    chainId: requireNetwork(deps).chainId,
    token: deps.operations[values.type].token,
    direction: deps.operations[values.type].direction,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

/** What an Idempotency-Key is bound to: a hash of the request's fingerprint (its route and body). */
export function requestHashOf(fingerprint: unknown): string {
  return sha256Hex(JSON.stringify(fingerprint));
}

/**
 * The row an Idempotency-Key of the account already recorded, when it was recorded for this same request; undefined
 * when the key is new. A key recorded for another request (another body, another route) is `409
 * idempotency_conflict`.
 */
export async function replayOf(
  deps: Deps,
  userId: string,
  key: string,
  requestHash: string,
): Promise<TransactionRow | undefined> {
  const existing = await findByIdempotencyKey(deps.database.db, userId, key);
  if (existing && existing.requestHash !== requestHash) {
    throw new AppError('idempotency_conflict', 'This Idempotency-Key was used with a different request.');
  }
  return existing;
}

/**
 * Records a queued money movement, after every check the request can be judged on. With an Idempotency-Key, a
 * repeat of the same request returns the original row (without re-running `check`); concurrent duplicates meet
 * at the unique index.
 */
async function queueTransaction(deps: Deps, request: QueueRequest): Promise<TransactionRow> {
  const requestHash = requestHashOf(request.requestFingerprint);
  if (request.idempotencyKey) {
    const existing = await replayOf(deps, request.userId, request.idempotencyKey, requestHash);
    if (existing) return existing;
  }
  await request.check?.();
  const now = deps.clock.now();
  const values = queuedTransaction(deps, now, {
    id: newId(),
    userId: request.userId,
    walletId: request.wallet.id,
    type: request.type,
    amount: request.amount.toString(),
    fromAddress: request.fromAddress,
    toAddress: request.toAddress,
    counterparty: request.counterparty ?? null,
    metadata: null,
    apiKeyId: request.scope.keyId,
    idempotencyKey: request.idempotencyKey ?? null,
    requestHash: request.idempotencyKey ? requestHash : null,
  });
  try {
    const row = await insertWithinSpendLimit(
      deps,
      request.scope,
      { type: request.type, amount: request.amount, now },
      (db) => insertTransaction(db, values),
    );
    deps.workSignal.notify('transactions');
    return row;
  } catch (error) {
    if (request.idempotencyKey && isUniqueViolation(error)) {
      const existing = await replayOf(deps, request.userId, request.idempotencyKey, requestHash);
      if (existing) return existing;
    }
    throw error;
  }
}

/**
 * A client's faucet, mint, transfer or redeem, after the checks it can be judged on now: configuration, the
 * wallet's ownership (within the caller's scope) and its custody, (mint) the public balance, and (transfer) the
 * key's spend limit. The row is QUEUED (or the Idempotency-Key's replayed) and a worker is woken.
 */
export async function queueMoneyMovement(
  deps: Deps,
  userId: string,
  scope: Scope,
  request: {
    type: MoneyMovement;
    walletId: string;
    amount: bigint;
    /** The recipient of a transfer; the wallet itself otherwise. */
    to?: Address;
    idempotencyKey: string | undefined;
  },
): Promise<TransactionRow> {
  const { type, amount } = request;
  assertMoneyConfigured(deps);
  const wallet = await ownWalletIdentity(deps, userId, request.walletId, scope);
  const funding = type === 'FUND';
  if (!funding) assertCanSend(wallet);
  const to = request.to ?? wallet.address;
  return queueTransaction(deps, {
    userId,
    scope,
    wallet,
    type,
    amount,
    fromAddress: funding ? requireNetwork(deps).operator.address : wallet.address,
    toAddress: to,
    counterparty: funding ? 'Sandbox faucet' : null,
    idempotencyKey: request.idempotencyKey,
    requestFingerprint: [type, wallet.id, to, amount.toString()],
    check: async () => {
      await deps.operations[type].queue?.check?.(deps, wallet, amount);
    },
  });
}
