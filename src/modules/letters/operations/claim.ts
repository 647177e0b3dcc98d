import { CONFIDENTIAL_TOKEN_SYMBOL, LETTER_STATE } from '../../../adapters/chain/contracts.ts';
import { encodeLetterRelease, readLetter } from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import { sandboxTrigger } from '../../../worker/sandbox-faults.ts';
import { amountOf, blockFields, recipientOf, withMetadata } from '../../../worker/steps.ts';
import { PreflightError, submitOnce } from '../../../worker/submissions.ts';
import { hasFailedClaim, moveLetter } from '../letters.repository.ts';
import { legLetter, letterNeedsReview, settleLeg } from './legs.ts';

/** The operator releases exactly the letter's escrow to the claimant's address. */
async function runClaim(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await legLetter(ctx, row);
  const vaultId = letter.vaultLetterId;
  const amount = amountOf(row);
  const submission = await submitOnce(ctx, row, 'release', ctx.network.operator.privateKey, async () => {
    // Checked only before the release is signed (a release already signed is carried through, never re-judged):
    // the vault must hold exactly this letter's amount, or nothing is sent and the letter stays claimable.
    const onChain = await readLetter(ctx.network, vaultId);
    const held =
      onChain.state === LETTER_STATE.Escrowed
        ? await ctx.network.rail.userDecrypt({
            handle: onChain.amount,
            contract: ctx.network.contracts.confidentialToken,
            privateKey: ctx.network.operator.privateKey,
          })
        : 0n;
    await sandboxClaimPreflight(ctx, row, letter.id);
    if (held !== amount) {
      throw new PreflightError(
        'The escrow vault cannot cover this letter right now. The letter stays claimable.',
        {
          errorCode: 'escrow_vault_underfunded',
        },
      );
    }
    return {
      to: ctx.network.contracts.letterVault,
      data: encodeLetterRelease(vaultId, recipientOf(row)),
    };
  });
  const { receipt, verified } = await settleLeg(ctx, row, submission, {
    letterId: vaultId,
    leg: 'release',
    expectedAmount: amount,
    gasTxHash: null,
  });
  const now = ctx.deps.clock.now();
  await db.transaction(async (tx) => {
    await transition(tx, row.id, ['QUEUED', 'PENDING'], {
      status: 'CONFIRMED',
      metadata: withMetadata(row, { verified }),
      ...blockFields(receipt),
    });
    // A sandbox letter of `…504`: the release is done and recorded, the letter's own bookkeeping is left to the
    // reconciliation (the sweep), so the claim answers `502 claim_unsettled` until it lands.
    if (sandboxTrigger(ctx.deps, row) === 'claim_unsettled') return;
    await moveLetter(tx, letter.id, ['CLAIMING'], {
      status: 'CLAIMED',
      claimedAt: now,
      claimCodeSealed: null,
      needsReview: !verified,
      error: verified ? null : 'The release could not be verified; an operator will review it.',
    });
  });
}

/**
 * The first claim of a sandbox letter of `…502` or `…503` is refused before the release is signed (`claim_failed`,
 * `escrow_vault_underfunded`); the letter stays claimable and the next claim goes through.
 */
async function sandboxClaimPreflight(ctx: OperationContext, row: TransactionRow, letterId: string) {
  const trigger = sandboxTrigger(ctx.deps, row);
  if (trigger !== 'claim_failed' && trigger !== 'escrow_vault_underfunded') return;
  if (await hasFailedClaim(ctx.deps.database.db, letterId)) return;
  throw new PreflightError(
    trigger === 'claim_failed'
      ? 'The release was refused (sandbox test amount ending in 502): nothing moved; the letter stays claimable.'
      : 'The escrow vault cannot cover this letter right now (sandbox test amount ending in 503). The letter ' +
          'stays claimable.',
    { errorCode: trigger },
  );
}

/** A release that did not happen leaves the letter claimable again, by anyone holding the code. */
async function claimFailed(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const letter = await legLetter(ctx, row);
  await moveLetter(ctx.deps.database.db, letter.id, ['CLAIMING'], {
    status: letter.claimableStatus ?? 'ESCROWED',
    claimantUserId: null,
    claimantWalletId: null,
    claimantAddress: null,
    claimTransactionId: null,
  });
}

export const claim: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'claim_failed',
  direction: 'in',
  creditsWallet: true,
  spendsKeyLimit: false,
  letterLeg: true,
  run: runClaim,
  onFailure: claimFailed,
  onDeepReorg: letterNeedsReview,
};
