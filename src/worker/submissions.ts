import { type Address, type Hex, TransactionNotFoundError, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  broadcastTransaction,
  estimateGasLimit,
  isInsufficientFunds,
  isRefusedByNode,
  isRevert,
  signTransaction,
  waitForReceipt,
} from '../adapters/chain/tx.ts';
import type { Network } from '../adapters/chain/types.ts';
import type { SubmissionRow, TransactionRow } from '../db/schema/index.ts';
import type { Deps, OperationContext } from '../deps.ts';
import type { TransactionErrorCode } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import {
  allocateNonce,
  deleteSubmission,
  findSubmission,
  insertSubmission,
  recordReceipt,
  releaseNonce,
} from './submissions.repository.ts';

/**
 * A failure before anything was broadcast for the row: it can be marked FAILED, nothing moved. The row's
 * `errorCode` is `errorCode` when the refusal names itself (`escrow_vault_underfunded`), else its type's failure
 * code.
 */
export class PreflightError extends Error {
  readonly errorCode: TransactionErrorCode | undefined;
  constructor(message: string, options: { errorCode?: TransactionErrorCode; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PreflightError';
    this.errorCode = options.errorCode;
  }
}

/** A mined transaction that reverted: a revert moves nothing, so the row can be marked FAILED. */
export class RevertedError extends Error {
  readonly receipt: TransactionReceipt;
  constructor(receipt: TransactionReceipt) {
    super(`transaction ${receipt.transactionHash} reverted`);
    this.name = 'RevertedError';
    this.receipt = receipt;
  }
}

export interface Call {
  to: Address;
  data?: Hex;
  value?: bigint;
  /** A fixed gas limit, for a call that cannot be estimated before an earlier step is mined. */
  gas?: bigint;
}

/**
 * Allocating a nonce, signing, storing and broadcasting for one address never interleave, in any process sharing
 * the database (`Database.withLock`), so a broadcast the chain refuses can give its nonce back before anyone takes
 * the next one: nonces stay gap-free.
 */
export function nonceLockKey(address: Address): string {
  return `nonce:${address.toLowerCase()}`;
}

/**
 * Whether the chain has the transaction (mined or in its pool). Only a definite "not found" is false: an RPC that
 * fails throws, so that a transaction that landed is never mistaken for one that did not.
 */
export async function isKnownToChain(network: Network, hash: Hex): Promise<boolean> {
  try {
    await network.publicClient.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

/** The call's gas limit: its own, or the chain's estimate; a call the chain refuses fails before it is signed. */
async function gasLimitOf(network: Network, from: Address, call: Call): Promise<bigint> {
  if (call.gas) return call.gas;
  try {
    return await estimateGasLimit(network, from, call);
  } catch (error) {
    if (isInsufficientFunds(error)) {
      throw new PreflightError('The wallet has too little gas currency to pay for this operation.', {
        cause: error,
      });
    }
    if (isRevert(error)) {
      throw new PreflightError('The chain refuses this operation (it would revert).', { cause: error });
    }
    throw error;
  }
}

/**
 * Signs the step's transaction once and stores the signed bytes, hash and nonce before anything is broadcast;
 * then broadcasts. Called again for the same (transaction, purpose), it rebroadcasts the stored bytes: never a
 * second signature for the same intent.
 */
export async function submitOnce(
  { deps, network }: OperationContext,
  row: Pick<TransactionRow, 'id'>,
  purpose: string,
  privateKey: Hex,
  buildCall: () => Promise<Call>,
): Promise<SubmissionRow> {
  const transactionId = row.id;
  const account = privateKeyToAccount(privateKey);
  const existing = await findSubmission(deps.database.db, transactionId, purpose);
  if (existing) {
    if (existing.status !== 'SIGNED') return existing;
    try {
      await broadcastTransaction(network, existing.rawTx);
      return existing;
    } catch (error) {
      if (!(await withdrawDeadSignature(deps, network, existing))) throw error;
      // Its nonce went to another transaction (`sealpay repair nonces` filled a gap there): those bytes can never
      // be mined, so the intent is signed again, once, at a fresh nonce.
    }
  }
  const call = await buildCall();
  const gas = await gasLimitOf(network, account.address, call);
  const fees = await deps.feeCache.get(() => network.publicClient.estimateFeesPerGas());
  // Read before the lock: it only ever raises the counter (a key also used elsewhere), so a read that is a moment
  // old is as good, and the lock is then held only for the database write and the broadcast.
  const chainNonce = await network.publicClient.getTransactionCount({
    address: account.address,
    blockTag: 'pending',
  });
  return deps.database.withLock(nonceLockKey(account.address), async (db) => {
    const submission = await db.transaction(async (tx) => {
      const nonce = await allocateNonce(tx, account.address, chainNonce);
      const signed = await signTransaction(network, { privateKey, ...call, gas, nonce, fees });
      return insertSubmission(tx, {
        id: newId(),
        transactionId,
        purpose,
        fromAddress: account.address,
        nonce,
        rawTx: signed.serialized,
        txHash: signed.hash,
        status: 'SIGNED',
      });
    });
    try {
      await broadcastTransaction(network, submission.rawTx);
    } catch (error) {
      // The chain refused the bytes outright (they are not in its pool): nothing was sent, so the signature is
      // withdrawn and its nonce given back while no later one has been taken.
      if (isRefusedByNode(error) && !(await isKnownToChain(network, submission.txHash))) {
        await db.transaction(async (tx) => {
          await deleteSubmission(tx, submission.id);
          await releaseNonce(tx, submission);
        });
        throw new PreflightError(`The chain refused the transaction: ${messageOf(error)}`, {
          cause: error,
        });
      }
      throw error;
    }
    return submission;
  });
}

/**
 * A stored signature whose nonce the chain has already used for another transaction can never be mined: it is
 * deleted (under the address's nonce lock) and true is returned. Anything less certain leaves it alone.
 */
async function withdrawDeadSignature(
  deps: Deps,
  network: Network,
  submission: SubmissionRow,
): Promise<boolean> {
  const from = submission.fromAddress;
  return deps.database.withLock(nonceLockKey(from), async (db) => {
    const used = await network.publicClient.getTransactionCount({ address: from, blockTag: 'latest' });
    if (used <= submission.nonce) return false;
    if (await isKnownToChain(network, submission.txHash)) return false;
    await deleteSubmission(db, submission.id);
    return true;
  });
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}

/** Waits for the stored transaction's receipt and records it; a revert throws RevertedError. */
export async function settle(
  { deps, network }: OperationContext,
  submission: SubmissionRow,
  options: { timeoutMs?: number } = {},
): Promise<TransactionReceipt> {
  const receipt = await waitForReceipt(network, submission.txHash, {
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  if (submission.status === 'SIGNED') {
    await recordReceipt(deps.database.db, submission.id, {
      status: receipt.status === 'success' ? 'MINED' : 'REVERTED',
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
    });
  }
  if (receipt.status !== 'success') throw new RevertedError(receipt);
  return receipt;
}
