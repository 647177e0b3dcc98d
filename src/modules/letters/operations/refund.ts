import { CONFIDENTIAL_TOKEN_SYMBOL, LETTER_STATE } from '../../../adapters/chain/contracts.ts';
import { encodeLetterRefund, readLetter } from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, withMetadata } from '../../../worker/steps.ts';
import { PreflightError, submitOnce } from '../../../worker/submissions.ts';
import { updateLetter } from '../letters.repository.ts';
import { legLetter, letterNeedsReview, settleLeg } from './legs.ts';

/** The operator returns the letter's escrow to its sender (void, expiry). */
async function runRefund(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await legLetter(ctx, row);
  const vaultId = letter.vaultLetterId;
  const submission = await submitOnce(ctx, row, 'refund', ctx.network.operator.privateKey, async () => {
    const onChain = await readLetter(ctx.network, vaultId);
    if (onChain.state !== LETTER_STATE.Escrowed) {
      throw new PreflightError('The vault no longer holds this letter: nothing to refund.');
    }
    return { to: ctx.network.contracts.letterVault, data: encodeLetterRefund(vaultId) };
  });
  const { receipt, verified } = await settleLeg(ctx, row, submission, {
    letterId: vaultId,
    leg: 'refund',
    expectedAmount: amountOf(row),
    gasTxHash: null,
  });
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    metadata: withMetadata(row, { verified }),
    ...blockFields(receipt),
  });
  if (!verified) await updateLetter(db, letter.id, { needsReview: true });
}

export const refund: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'refund_failed',
  // Paid back into the sender's wallet by the vault; no batch waits for it (as before the registry held it).
  direction: 'in',
  creditsWallet: false,
  spendsKeyLimit: false,
  letterLeg: true,
  run: runRefund,
  onDeepReorg: letterNeedsReview,
};
