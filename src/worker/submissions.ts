import {
  type Address,
  type Hex,
  parseTransaction,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  broadcastTransaction,
  bumped,
  estimateGasLimit,
  type FeeEstimate,
  initialFees,
  isInsufficientFunds,
  isPriceRefusal,
  isRefusedByNode,
  isRevert,
  quoteFees,
  receiptPollMs,
  replacementFees,
  signTransaction,
} from '../adapters/chain/tx.ts';
import type { Network } from '../adapters/chain/types.ts';
import type { DbOrTx } from '../db/client.ts';
import type { SubmissionAttemptRow, SubmissionRow, TransactionRow } from '../db/schema/index.ts';
import type { Deps, OperationContext } from '../deps.ts';
import type { TransactionErrorCode } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { adoptMinedHash } from './outbox.repository.ts';
import {
  allocateNonce,
  deleteSubmission,
  findSubmission,
  insertReplacement,
  insertSubmission,
  listAttempts,
  markAttemptSent,
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
 * The chain has not got there yet: the row is looked at again in `retryInMs` (0: at once), without counting as a
 * fault. Thrown by `settle` while a mined transaction waits for its confirmations (past the wait's time), and when
 * a pending one is stuck or was refused for its price: the row's next run goes through `submitOnce`, which signs
 * the replacement (it holds the key).
 */
export class AwaitingChain extends Error {
  readonly retryInMs: number;
  constructor(message: string, retryInMs: number) {
    super(message);
    this.name = 'AwaitingChain';
    this.retryInMs = retryInMs;
  }
}

/**
 * Signs the step's transaction once and stores the signed bytes, hash and nonce before anything is broadcast;
 * then broadcasts. Called again for the same (transaction, purpose), it keeps that transaction alive at its nonce:
 * the latest attempt's bytes are broadcast again, or replaced (same nonce, `to`, `data`, `value`, higher fees) when
 * they are stuck or refused for their price: never a second nonce for the same intent. Fees follow the policy of
 * `config.chainPolicy` (`initialFees`, `replacementFees`).
 */
export async function submitOnce(
  ctx: OperationContext,
  row: Pick<TransactionRow, 'id'>,
  purpose: string,
  privateKey: Hex,
  buildCall: () => Promise<Call>,
): Promise<SubmissionRow> {
  const { deps, network } = ctx;
  const transactionId = row.id;
  const account = privateKeyToAccount(privateKey);
  const existing = await findSubmission(deps.database.db, transactionId, purpose);
  if (existing) {
    if (existing.status !== 'SIGNED') return existing;
    try {
      return await keepAlive(ctx, existing, privateKey);
    } catch (error) {
      if (!(await withdrawDeadSignature(deps, network, existing))) throw error;
      // Its nonce went to another transaction (`sealpay repair nonces` filled a gap there): those bytes can never
      // be mined, so the intent is signed again, once, at a fresh nonce.
    }
  }
  const call = await buildCall();
  const gas = await gasLimitOf(network, account.address, call);
  const fees = initialFees(await deps.feeCache.get(() => quoteFees(network)), deps.config.chainPolicy);
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
    const [first] = await listAttempts(db, submission.id);
    if (!first) throw new Error(`submission ${submission.id} has no attempt`);
    try {
      await send(ctx, db, first);
    } catch (error) {
      // The price alone was refused: nothing is wrong with the transaction, it is signed again higher at its nonce.
      if (isPriceRefusal(error)) return replace(ctx, db, submission, first, privateKey, { refused: true });
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

/** Broadcasts an attempt and notes the chain's height (the replacement rule counts blocks from it). */
async function send(ctx: OperationContext, db: DbOrTx, attempt: SubmissionAttemptRow): Promise<void> {
  await broadcastTransaction(ctx.network, attempt.rawTx);
  const height = await ctx.network.publicClient.getBlockNumber({ cacheTime: 0 });
  await markAttemptSent(db, attempt.id, height);
}

function feesOf(attempt: Pick<SubmissionAttemptRow, 'rawTx'>): FeeEstimate {
  const parsed = parseTransaction(attempt.rawTx);
  return { maxFeePerGas: parsed.maxFeePerGas ?? 0n, maxPriorityFeePerGas: parsed.maxPriorityFeePerGas ?? 0n };
}

/**
 * Signs a replacement of `previous` (its nonce, `to`, `data`, `value` and gas limit, at `replacementFees`), stores
 * it as the submission's latest attempt, then broadcasts it; a price refusal signs again higher. At the cap the
 * submission is returned as it is (it waits, PENDING, and `sealpay_chain_fee_cap_waits_total` counts it). Called
 * under the address's nonce lock (`db` is the lock's connection).
 */
async function replace(
  ctx: OperationContext,
  db: DbOrTx,
  submission: SubmissionRow,
  previous: SubmissionAttemptRow,
  privateKey: Hex,
  options: { refused: boolean },
): Promise<SubmissionRow> {
  const { deps, network } = ctx;
  const { chain } = deps.metrics;
  if (privateKeyToAccount(privateKey).address !== submission.fromAddress) {
    throw new Error(`submission ${submission.id} is not signed by the key given to replace it`);
  }
  let current = submission;
  let last = previous;
  let refused = options.refused;
  for (;;) {
    if (refused) chain.priceRefusals.inc();
    const fees = replacementFees(feesOf(last), await quoteFees(network), deps.config.chainPolicy, {
      refused,
    });
    if (!fees) {
      chain.feeCapWaits.inc();
      return current;
    }
    const tx = parseTransaction(last.rawTx);
    if (!tx.to) throw new Error(`submission ${submission.id} has no recipient to replace`);
    const signed = await signTransaction(network, {
      privateKey,
      to: tx.to,
      ...(tx.data ? { data: tx.data } : {}),
      value: tx.value ?? 0n,
      ...(tx.gas ? { gas: tx.gas } : {}),
      nonce: submission.nonce,
      fees,
    });
    const attempt = { id: newId(), rawTx: signed.serialized, txHash: signed.hash };
    current = await insertReplacement(db, current, attempt);
    chain.replacements.inc();
    last = { ...attempt, submissionId: submission.id, sentBlock: null, createdAt: new Date() };
    try {
      await send(ctx, db, last);
      return current;
    } catch (error) {
      if (!isPriceRefusal(error)) throw error;
      refused = true;
    }
  }
}

/**
 * A submission's next run: nothing to do once a receipt is recorded; else the latest attempt is replaced when it is
 * stuck (`isStuck`), or broadcast again (the same bytes, harmless when the chain has them), and replaced when
 * that is refused for its price. An attempt that may have been mined meanwhile is left to `settle`.
 */
async function keepAlive(
  ctx: OperationContext,
  submission: SubmissionRow,
  privateKey: Hex,
): Promise<SubmissionRow> {
  const { deps, network } = ctx;
  return deps.database.withLock(nonceLockKey(submission.fromAddress), async (db) => {
    const attempts = await listAttempts(db, submission.id);
    const latest = attempts.at(-1);
    if (!latest) throw new Error(`submission ${submission.id} has no attempt`);
    if (await minedAttempt(network, attempts)) return submission;
    if ((await stuckState(ctx, submission, latest)) === 'stuck') {
      return replace(ctx, db, submission, latest, privateKey, { refused: false });
    }
    try {
      await send(ctx, db, latest);
    } catch (error) {
      if (!isPriceRefusal(error)) throw error;
      return replace(ctx, db, submission, latest, privateKey, { refused: true });
    }
    return submission;
  });
}

/**
 * Whether the attempt has waited its turn: `STUCK_AFTER_BLOCKS` blocks since it was broadcast, or
 * `STUCK_AFTER_SECONDS` since it was signed (chains without regular blocks); one never broadcast has not (it is
 * sent as signed first: a stored batch after a crash goes out as it was stored). `at-cap` when it has, but no
 * replacement may raise its fees under `MAX_FEE_PER_GAS_GWEI`: it waits.
 */
async function stuckState(
  ctx: OperationContext,
  submission: Pick<SubmissionRow, 'fromAddress' | 'nonce'>,
  attempt: SubmissionAttemptRow,
): Promise<'stuck' | 'at-cap' | null> {
  // Never broadcast (a crash between storing and sending, or a start after one): the same bytes go out first.
  if (attempt.sentBlock === null) return null;
  const policy = ctx.deps.config.chainPolicy;
  let waited = Date.now() - attempt.createdAt.getTime() >= policy.stuckAfterMs;
  if (!waited) {
    const height = await ctx.network.publicClient.getBlockNumber({ cacheTime: 0 });
    waited = height - attempt.sentBlock >= BigInt(policy.stuckAfterBlocks);
  }
  if (!waited) return null;
  // A transaction queued behind an earlier nonce of its sender waits its turn: raising its own fee would not help.
  const address = submission.fromAddress;
  const next = await ctx.network.publicClient.getTransactionCount({ address, blockTag: 'latest' });
  if (submission.nonce > next) return null;
  return belowCap(ctx, attempt) ? 'stuck' : 'at-cap';
}

/** Whether a replacement of the attempt can still raise its max fee by 12.5 % under `MAX_FEE_PER_GAS_GWEI`. */
function belowCap(ctx: OperationContext, attempt: Pick<SubmissionAttemptRow, 'rawTx'>): boolean {
  return bumped(feesOf(attempt).maxFeePerGas) <= ctx.deps.config.chainPolicy.maxFeePerGas;
}

/** The receipt of whichever attempt the chain mined (the latest looked at first), or null. */
async function minedAttempt(
  network: Network,
  attempts: readonly SubmissionAttemptRow[],
): Promise<{ receipt: TransactionReceipt; attempt: SubmissionAttemptRow } | null> {
  for (const attempt of [...attempts].reverse()) {
    try {
      const receipt = await network.publicClient.getTransactionReceipt({ hash: attempt.txHash });
      return { receipt, attempt };
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
  }
  return null;
}

async function anyKnownToChain(
  network: Network,
  attempts: readonly SubmissionAttemptRow[],
): Promise<boolean> {
  for (const attempt of attempts) {
    if (await isKnownToChain(network, attempt.txHash)) return true;
  }
  return false;
}

/**
 * A stored signature whose nonce the chain has already used for another transaction can never be mined: it is
 * deleted (under the address's nonce lock) and true is returned. Anything less certain leaves it alone.
 *
 * The nonce is read as used both before and after none of the attempts is found: a reorganization between two
 * reads can take the block holding one of them away (anvil drops its transactions; a public chain may too), so
 * "used, then not known" is no proof that another transaction took the nonce. With the second read the block is
 * either still there (the attempt is known) or gone (the nonce reads free again). On a single read, a batch could
 * be signed again at a new nonce while a worker that still held the first bytes broadcast them again, and both
 * would mine.
 */
async function withdrawDeadSignature(
  deps: Deps,
  network: Network,
  submission: SubmissionRow,
): Promise<boolean> {
  const from = submission.fromAddress;
  return deps.database.withLock(nonceLockKey(from), async (db) => {
    const used = () => network.publicClient.getTransactionCount({ address: from, blockTag: 'latest' });
    if ((await used()) <= submission.nonce) return false;
    if (await anyKnownToChain(network, await listAttempts(db, submission.id))) return false;
    if ((await used()) <= submission.nonce) return false;
    await deleteSubmission(db, submission.id);
    return true;
  });
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}

/** How often `settle` asks whether the provider still knows a pending transaction (dropped from its pool?). */
const DROP_CHECK_MS = 1000;

/**
 * Waits for whichever attempt of the submission is mined, and for its `CONFIRMATIONS` (blocks including its own),
 * then records it and returns its receipt; a revert throws RevertedError. Meanwhile: an attempt the provider no
 * longer knows is broadcast again at once (the same bytes); a stuck one, or one refused for its price, throws
 * `AwaitingChain` (0 ms) so the row's next run replaces it; a block reorganized away before the confirmations is
 * noticed (the receipt is gone, or in another block) and waited for again. Past `timeoutMs` it throws
 * `AwaitingChain`: the row stays PENDING with its hash and is looked at again.
 */
export async function settle(
  ctx: OperationContext,
  submission: SubmissionRow,
  options: { timeoutMs?: number } = {},
): Promise<TransactionReceipt> {
  const { deps, network } = ctx;
  const { db } = deps.database;
  const required = BigInt(Math.max(1, deps.config.chainPolicy.confirmations));
  const pollMs = receiptPollMs(network);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let recorded: { blockHash: Hex | null } = { blockHash: submission.blockHash };
  let lastDropCheck = 0;
  let countedAtCap = false;
  for (;;) {
    const attempts = await listAttempts(db, submission.id);
    const mined = await minedAttempt(network, attempts);
    if (mined) {
      const { receipt, attempt } = mined;
      if (recorded.blockHash !== receipt.blockHash) {
        if (recorded.blockHash !== null) reorganized(ctx, submission, 'mined in another block');
        await recordReceipt(db, submission.id, {
          status: receipt.status === 'success' ? 'MINED' : 'REVERTED',
          blockNumber: receipt.blockNumber,
          blockHash: receipt.blockHash,
          attempt,
        });
        recorded = { blockHash: receipt.blockHash };
        // A replacement was mined: the row shows its hash from now on, while it waits for its confirmations.
        if (attempts.length > 1) {
          const hashes = attempts.map((each) => each.txHash);
          await adoptMinedHash(db, submission.transactionId, hashes, attempt.txHash);
        }
      }
      const head =
        required > 1n ? await network.publicClient.getBlockNumber({ cacheTime: 0 }) : receipt.blockNumber;
      if (head - receipt.blockNumber + 1n >= required) {
        if (receipt.status !== 'success') throw new RevertedError(receipt);
        return receipt;
      }
    } else {
      if (recorded.blockHash !== null) {
        reorganized(ctx, submission, 'its receipt is gone');
        await recordReceipt(db, submission.id, null);
        recorded = { blockHash: null };
      }
      const latest = attempts.at(-1);
      if (latest && Date.now() - lastDropCheck >= DROP_CHECK_MS) {
        lastDropCheck = Date.now();
        if (!(await anyKnownToChain(network, attempts))) await rebroadcast(ctx, latest);
        const state = await stuckState(ctx, submission, latest);
        if (state === 'stuck') {
          throw new AwaitingChain(`transaction ${latest.txHash} is stuck: it is replaced`, 0);
        }
        if (state === 'at-cap' && !countedAtCap) {
          countedAtCap = true;
          deps.metrics.chain.feeCapWaits.inc();
          ctx.logger?.warn(
            { transactionId: submission.transactionId, purpose: submission.purpose, txHash: latest.txHash },
            'a transaction waits at MAX_FEE_PER_GAS_GWEI: the base fee is above what it may pay',
          );
        }
      }
    }
    if (Date.now() > deadline) {
      throw new AwaitingChain(
        `transaction ${submission.txHash} not yet mined with ${required} block(s)`,
        pollMs,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A pending attempt the provider forgot (dropped from its pool, or a reorg's orphan): the same bytes again. */
async function rebroadcast(ctx: OperationContext, attempt: SubmissionAttemptRow): Promise<void> {
  try {
    await send(ctx, ctx.deps.database.db, attempt);
    ctx.deps.metrics.chain.rebroadcasts.inc();
  } catch (error) {
    if (!isPriceRefusal(error)) throw error;
    // Signed again higher by the row's next run; at the cap it waits here for the base fee to fall.
    if (belowCap(ctx, attempt))
      throw new AwaitingChain(`transaction ${attempt.txHash} is underpriced now`, 0);
  }
}

function reorganized(ctx: OperationContext, submission: SubmissionRow, how: string): void {
  ctx.deps.metrics.chain.reorgs.inc();
  ctx.logger?.warn(
    { transactionId: submission.transactionId, purpose: submission.purpose, txHash: submission.txHash },
    `a mined transaction's block was reorganized away (${how}) before its confirmations; it is waited for again`,
  );
}
