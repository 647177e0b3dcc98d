/**
 * Reorgs deeper than `CONFIRMATIONS`. `settle` holds a row until its mined transaction has its confirmations and
 * follows any reorg until then; what a deeper reorg undoes afterwards can no longer be held back. The worker looks
 * over the submissions mined in the last `FINALITY_WINDOW_BLOCKS` blocks (past their confirmations) every
 * `FINALITY_CHECK_MS`: one whose receipt is gone, or in another block, is logged, counted
 * (`sealpay_chain_deep_reorgs_total`) and handed to its rows' `Operation.onDeepReorg` (a letter leg marks its letter
 * `needsReview`); bytes the chain no longer has are broadcast again (the same transaction, the same nonce).
 */
import { type Hex, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import { broadcastTransaction } from '../adapters/chain/tx.ts';
import type { SubmissionRow, TransactionRow } from '../db/schema/index.ts';
import type { OperationContext } from '../deps.ts';
import { findBatchLegs, findTransactionById } from './outbox.repository.ts';
import { BATCH_PURPOSE, findMinedBetween, recordReorganized } from './submissions.repository.ts';

/** How far back a deep reorg is looked for (mainnet finalizes in 64-95 blocks). */
export const FINALITY_WINDOW_BLOCKS = 128n;
/** How often the worker looks. */
export const FINALITY_CHECK_MS = 15_000;
/** At most this many submissions are checked in one look (the oldest first). */
const CHECK_LIMIT = 500;

async function receiptOf(ctx: OperationContext, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await ctx.network.publicClient.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** The rows a submission carried: its own row, or every leg of its batch. */
async function rowsOf(ctx: OperationContext, submission: SubmissionRow): Promise<TransactionRow[]> {
  const { db } = ctx.deps.database;
  if (submission.purpose === BATCH_PURPOSE) return findBatchLegs(db, submission.transactionId);
  const row = await findTransactionById(db, submission.transactionId);
  return row ? [row] : [];
}

/** One look: returns how many deep reorgs it found (each counted once, by one process). */
export async function checkFinality(ctx: OperationContext): Promise<number> {
  const { deps, network } = ctx;
  const confirmations = BigInt(Math.max(1, deps.config.chainPolicy.confirmations));
  const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
  // Blocks with their confirmations: the ones before are still `settle`'s to follow.
  const upTo = head - confirmations + 1n;
  const from = upTo - FINALITY_WINDOW_BLOCKS < 0n ? 0n : upTo - FINALITY_WINDOW_BLOCKS;
  if (upTo < 0n) return 0;
  let found = 0;
  for (const submission of await findMinedBetween(deps.database.db, from, upTo, CHECK_LIMIT)) {
    const receipt = await receiptOf(ctx, submission.txHash);
    if (receipt && receipt.blockHash === submission.blockHash) continue;
    const moved = receipt ? { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash } : null;
    if (!(await recordReorganized(deps.database.db, submission, moved))) continue;
    found += 1;
    deps.metrics.chain.deepReorgs.inc();
    const rows = await rowsOf(ctx, submission);
    ctx.logger?.error(
      {
        txHash: submission.txHash,
        purpose: submission.purpose,
        transactionIds: rows.map((row) => row.id),
        recordedBlock: submission.blockNumber?.toString(),
        nowInBlock: receipt?.blockNumber.toString() ?? null,
      },
      'a reorg deeper than CONFIRMATIONS moved a confirmed transaction: its rows are marked for review',
    );
    if (!receipt) {
      // The same bytes again: at its nonce nothing else of ours can be mined instead, and it may land again.
      await broadcastTransaction(network, submission.rawTx).catch(() => undefined);
    }
    for (const row of rows) await deps.operations[row.type].onDeepReorg?.(ctx, row);
  }
  return found;
}
