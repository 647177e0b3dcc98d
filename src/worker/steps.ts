/**
 * The steps every operation is built from: marking a row submitted or failed, the sponsored gas top-up, and the
 * block fields of a receipt. Each operation (src/operations.ts lists them) composes these with `submitOnce` and
 * `settle`.
 */
import type { Address, Hex, TransactionReceipt } from 'viem';
import { getGasBalance } from '../adapters/confidential/helpers.ts';
import type { TransactionMetadata, TransactionRow } from '../db/schema/index.ts';
import type { OperationContext } from '../deps.ts';
import type { TransactionErrorCode } from '../lib/errors.ts';
import { GAS_DECIMALS, parseAmount } from '../lib/money.ts';
import { transition } from './outbox.repository.ts';
import { findSubmission } from './submissions.repository.ts';
import { PreflightError, settle, submitOnce } from './submissions.ts';

/** Marks the row FAILED and runs its type's failure hook: only ever called when nothing moved on-chain for it. */
export async function fail(
  ctx: OperationContext,
  row: TransactionRow,
  code: TransactionErrorCode,
  message: string,
) {
  const failed = await transition(ctx.deps.database.db, row.id, ['QUEUED', 'PENDING', 'SETTLING'], {
    status: 'FAILED',
    error: message,
    errorCode: code,
    leaseOwner: null,
    leaseUntil: null,
  });
  if (failed) await ctx.deps.operations[row.type].onFailure?.(ctx, failed);
  return failed;
}

/**
 * Where a receipt landed, for the row and its receipt (nota): the mined transaction's hash (whichever attempt of
 * its submission was mined: a replacement has a hash of its own), block number, hash, and the last log's index.
 */
export function blockFields(receipt: TransactionReceipt, logIndex?: number) {
  return {
    txHash: receipt.transactionHash,
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
    logIndex: logIndex ?? receipt.logs[receipt.logs.length - 1]?.logIndex ?? null,
  };
}

/** The amount a row moves (base units). Only rows of money received may lack one, and no operation runs those. */
export function amountOf(row: TransactionRow): bigint {
  if (row.amount === null) throw new Error(`transaction ${row.id} has no amount`);
  return BigInt(row.amount);
}

/** The row's recipient: a transfer's address, a claim's wallet (the request that queued it always set one). */
export function recipientOf(row: TransactionRow): Address {
  if (!row.toAddress) throw new PreflightError(`Transaction ${row.id} has no recipient.`);
  return row.toAddress;
}

export function withMetadata(row: TransactionRow, extra: TransactionMetadata): TransactionMetadata {
  return { ...(row.metadata ?? {}), ...extra };
}

/**
 * On sandbox networks the operator tops up a custodial wallet that is short of gas before it signs, so a wallet
 * that received confidential funds can move them without a separate faucet call.
 */
export async function ensureGas(
  ctx: OperationContext,
  row: TransactionRow,
  wallet: { address: Address },
): Promise<Hex | null> {
  const { config } = ctx.deps;
  if (config.environment !== 'sandbox') return null;
  const topUp = parseAmount(config.faucet.gasTopUp, GAS_DECIMALS);
  const balance = await getGasBalance(ctx.network, wallet.address);
  // A top-up this row signed already is sent again even when the wallet has gas now (another row's top-up landed
  // first): the operator signed it, and its bytes left unsent would hold back every later operator transaction.
  const enough = balance >= topUp / 4n;
  if (enough && !row.metadata?.gasTxHash && !(await findSubmission(ctx.deps.database.db, row.id, 'gas'))) {
    return null;
  }
  const submission = await submitOnce(ctx, row, 'gas', ctx.network.operator.privateKey, async () => ({
    to: wallet.address,
    value: topUp,
  }));
  return (await settle(ctx, submission)).transactionHash;
}

/**
 * QUEUED → PENDING once the step that carries the row's hash is broadcast, with the sponsored gas top-up's hash
 * when there was one. Returns the row's metadata as written.
 */
export async function markSubmitted(
  ctx: OperationContext,
  row: TransactionRow,
  txHash: Hex,
  gasTxHash: Hex | null,
) {
  const metadata = gasTxHash ? withMetadata(row, { gasTxHash }) : row.metadata;
  await transition(ctx.deps.database.db, row.id, 'QUEUED', {
    status: 'PENDING',
    txHash,
    step: 'submitted',
    metadata,
  });
  return metadata;
}
