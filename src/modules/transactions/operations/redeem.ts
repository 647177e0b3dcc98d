import { CONFIDENTIAL_TOKEN_SYMBOL } from '../../../adapters/chain/contracts.ts';
import {
  encodeFinalizeUnwrap,
  encodeUnwrap,
  findUnwrapRequest,
} from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import {
  amountOf,
  blockFields,
  ensureGas,
  fail,
  markSubmitted,
  withMetadata,
} from '../../../worker/steps.ts';
import { findSubmission } from '../../../worker/submissions.repository.ts';
import { RevertedError, settle, submitOnce } from '../../../worker/submissions.ts';
import { openWalletKey } from '../../wallets/custody.ts';
import { transactionWallet } from '../../wallets/wallets.service.ts';

/**
 * cSTABLE back into public STABLE: the wallet unwraps (burns and requests a public decryption of the amount), the
 * row goes SETTLING, and the operator finalizes the payout with the decryption proof.
 */
async function runRedeem(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const wallet = await transactionWallet(ctx.deps, row);
  const token = ctx.network.contracts.confidentialToken;
  let current = row;
  if (row.status !== 'SETTLING') {
    const key = openWalletKey(ctx.deps.keyring, wallet);
    const gasTxHash = await ensureGas(ctx, row, wallet);
    const unwrap = await submitOnce(ctx, row, 'unwrap', key, async () => {
      const encrypted = await ctx.network.rail.encryptAmount({
        contract: token,
        caller: wallet.address,
        amount: amountOf(row),
      });
      return {
        to: token,
        data: encodeUnwrap(wallet.address, wallet.address, encrypted),
      };
    });
    const metadata = await markSubmitted(ctx, row, unwrap.txHash, gasTxHash);
    const receipt = await settle(ctx, unwrap);
    const request = findUnwrapRequest(receipt, token);
    if (!request) throw new Error(`unwrap ${unwrap.txHash} emitted no UnwrapRequested event`);
    const moved = await transition(db, row.id, 'PENDING', {
      status: 'SETTLING',
      step: 'finalize',
      metadata: withMetadata({ ...row, metadata }, { unwrapRequestId: request.requestId }),
      ...blockFields(receipt),
    });
    if (!moved) return;
    current = moved;
  }
  const requestId = current.metadata?.unwrapRequestId;
  if (!requestId) throw new Error(`redeem ${row.id} is SETTLING without its unwrap request`);
  const decryption = await ctx.network.rail.publicDecrypt([requestId]);
  const cleartext = decryption.cleartexts[0] ?? 0n;
  if (cleartext === 0n) {
    // The burn was an encrypted zero (balance too low): nothing left the wallet and nothing is owed.
    await fail(ctx, current, 'redeem_failed', 'The confidential balance was too low: nothing was redeemed.');
    return;
  }
  const attempt = current.metadata?.finalizeAttempt ?? 0;
  // An earlier finalize may have landed while its receipt could not be read: the payout is done, adopt it.
  for (let earlier = 0; earlier < attempt; earlier++) {
    const previous = await findSubmission(db, row.id, `finalize-${earlier}`);
    if (!previous) continue;
    const landed = await ctx.network.publicClient
      .getTransactionReceipt({ hash: previous.txHash })
      .catch(() => null);
    if (landed?.status === 'success') {
      const settled = await settle(ctx, previous);
      await transition(db, row.id, 'SETTLING', {
        status: 'SETTLED',
        settlementTxHash: settled.transactionHash,
      });
      return;
    }
  }
  const finalize = await submitOnce(
    ctx,
    row,
    `finalize-${attempt}`,
    ctx.network.operator.privateKey,
    async () => ({
      to: token,
      data: encodeFinalizeUnwrap(requestId, cleartext, decryption.decryptionProof),
    }),
  );
  let settlementTxHash = finalize.txHash;
  try {
    settlementTxHash = (await settle(ctx, finalize)).transactionHash;
  } catch (error) {
    if (!(error instanceof RevertedError)) throw error; // no receipt yet: the same bytes are waited for again
    // The payout reverted: the row stays SETTLING and the next attempt signs a fresh finalize. The burn has
    // moved the funds, so this is never a failure of the row (a transient fault, not a RevertedError).
    await transition(db, row.id, 'SETTLING', {
      metadata: withMetadata(current, { finalizeAttempt: attempt + 1 }),
    });
    throw new Error(`finalizeUnwrap ${finalize.txHash} reverted; a fresh one will be signed`, {
      cause: error,
    });
  }
  await transition(db, row.id, 'SETTLING', { status: 'SETTLED', settlementTxHash });
}

export const redeem: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'redeem_failed',
  direction: 'out',
  creditsWallet: false,
  spendsKeyLimit: false,
  letterLeg: false,
  queue: { path: '/redeem' },
  run: runRedeem,
};
