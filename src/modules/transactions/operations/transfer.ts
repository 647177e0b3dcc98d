import { CONFIDENTIAL_TOKEN_SYMBOL } from '../../../adapters/chain/contracts.ts';
import {
  encodeConfidentialTransfer,
  verifyConfidentialTransfer,
} from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { claimGoingAlone, findTransactionById, transition } from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, fail, markSubmitted, recipientOf } from '../../../worker/steps.ts';
import { TRANSFER_PURPOSE } from '../../../worker/submissions.repository.ts';
import { AwaitingChain, settle, submitOnce } from '../../../worker/submissions.ts';
import { spendingWallet } from '../../wallets/wallets.service.ts';
import {
  canJoinTransferBatch,
  driveBatch,
  drivesItsBatch,
  resumeOperatorGrant,
  runTransferBatch,
} from './transfer-batch.ts';

/**
 * A confidential transfer measured ~408k gas. Estimating it runs the whole FHE transfer on the EVM a second time,
 * so it is sent with a fixed limit; a transfer that would revert is then mined as reverted (FAILED, nothing moved).
 */
const CONFIDENTIAL_TRANSFER_GAS = 800_000n;

/** How soon a leg whose batch another run drives is looked at again (a block or so: the batch is on its way). */
const BATCH_WAIT_MS = 1000;

/** cSTABLE to an address, the amount encrypted; verified by decrypting what the receipt says moved. */
async function runTransfer(ctx: OperationContext, claimed: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  let row = claimed;
  if (row.batchId) {
    // A leg of a batch, resumed after a crash or a fault: the batch is driven from its first leg; the others wait.
    if (!(await drivesItsBatch(ctx, row))) {
      // Not a fault: no attempt is counted and nothing is logged; the first leg's run settles every leg.
      throw new AwaitingChain(
        `transfer ${row.id} waits for its batch, driven from its first leg ${row.batchId}`,
        BATCH_WAIT_MS,
      );
    }
    if ((await driveBatch(ctx, row.batchId)) === 'settled') return;
    const requeued = await findTransactionById(db, row.id);
    if (requeued?.status !== 'QUEUED') return;
    row = requeued;
  }
  // This run's copy of the row may be old (a lease that lapsed while the worker drove other rows): if a batch took
  // the row meanwhile, that batch carries it, and signing it alone as well would move the money twice.
  if (!(await claimGoingAlone(db, row.id))) {
    // Worth an operator's look: a lease lapsed while its worker still held the row (a stall, a slow database).
    ctx.logger?.warn(
      { transactionId: row.id, batchId: (await findTransactionById(db, row.id))?.batchId },
      'a transfer about to go alone had joined a batch meanwhile: not sent again (its lease had lapsed)',
    );
    throw new AwaitingChain(`transfer ${row.id} joined a batch meanwhile: the batch carries it`, 0);
  }
  await resumeOperatorGrant(ctx, row);
  const { wallet, key, gasTxHash } = await spendingWallet(ctx, row);
  const amount = amountOf(row);
  const to = recipientOf(row);
  const token = ctx.network.contracts.confidentialToken;
  const submission = await submitOnce(ctx, row, TRANSFER_PURPOSE, key, async () => {
    const encrypted = await ctx.network.rail.encryptAmount({
      contract: token,
      caller: wallet.address,
      amount,
    });
    return { to: token, data: encodeConfidentialTransfer(to, encrypted), gas: CONFIDENTIAL_TRANSFER_GAS };
  });
  const metadata = await markSubmitted(ctx, row, submission.txHash, gasTxHash);
  const receipt = await settle(ctx, submission);
  const verification = await verifyConfidentialTransfer({
    network: ctx.network,
    receipt,
    from: wallet.address,
    to,
    expectedAmount: amount,
    decryptAs: key,
  });
  if (!verification.ok) {
    // An ERC-7984 transfer the sender cannot cover moves an encrypted zero: nothing moved, so it is FAILED.
    await fail(
      ctx,
      row,
      'transfer_failed',
      'The confidential balance was too low: the transfer moved nothing.',
    );
    return;
  }
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    metadata,
    ...blockFields(receipt),
  });
}

export const transfer: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'transfer_failed',
  direction: 'out',
  creditsWallet: false,
  spendsKeyLimit: true,
  letterLeg: false,
  queue: { path: '/transfer' },
  run: runTransfer,
  batch: { canJoin: canJoinTransferBatch, run: runTransferBatch },
};
