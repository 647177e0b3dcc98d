import { CONFIDENTIAL_TOKEN_SYMBOL } from '../../../adapters/chain/contracts.ts';
import { encodeLetterEscrow } from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, fail, withMetadata } from '../../../worker/steps.ts';
import { submitOnce } from '../../../worker/submissions.ts';
import { spendingWallet } from '../../wallets/wallets.service.ts';
import { moveLetter } from '../letters.repository.ts';
import { legLetter, letterNeedsReview, settleLeg } from './legs.ts';

/** The sender's wallet moves the sealed amount into the vault, recorded under the letter's vault id. */
async function runEscrow(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await legLetter(ctx, row);
  const { wallet, key, gasTxHash } = await spendingWallet(ctx, row);
  const amount = amountOf(row);
  const token = ctx.network.contracts.confidentialToken;
  const submission = await submitOnce(ctx, row, 'escrow', key, async () => {
    const encrypted = await ctx.network.rail.encryptAmount({
      contract: token,
      caller: wallet.address,
      amount,
    });
    return {
      to: token,
      data: encodeLetterEscrow({
        vault: ctx.network.contracts.letterVault,
        letterId: letter.vaultLetterId,
        encrypted,
      }),
    };
  });
  const { metadata, receipt, verified } = await settleLeg(ctx, row, submission, {
    letterId: letter.vaultLetterId,
    leg: 'escrow',
    expectedAmount: amount,
    gasTxHash: gasTxHash,
  });
  if (!verified) {
    // The vault recorded an encrypted zero: nothing of value moved, so the leg and its letter fail.
    await fail(ctx, row, 'escrow_failed', 'The confidential balance was too low: nothing was escrowed.');
    return;
  }
  await db.transaction(async (tx) => {
    await transition(tx, row.id, ['QUEUED', 'PENDING'], {
      status: 'CONFIRMED',
      metadata: withMetadata({ ...row, metadata }, { verified: true }),
      ...blockFields(receipt),
    });
    await moveLetter(tx, letter.id, ['DRAFT'], { status: 'ESCROWED', error: null });
  });
}

/** A failed escrow fails its letter (nothing left the wallet). */
async function escrowFailed(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const letter = await legLetter(ctx, row);
  await moveLetter(ctx.deps.database.db, letter.id, ['DRAFT'], { status: 'FAILED', error: row.error });
}

export const escrow: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'escrow_failed',
  direction: 'out',
  creditsWallet: false,
  spendsKeyLimit: true,
  letterLeg: true,
  run: runEscrow,
  onFailure: escrowFailed,
  onDeepReorg: letterNeedsReview,
};
