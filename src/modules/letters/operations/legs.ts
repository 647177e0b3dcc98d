/** What the three letter legs (escrow, claim, refund) share. */
import type { Hex } from 'viem';
import { type LetterLeg, verifyLetterLeg } from '../../../adapters/confidential/helpers.ts';
import type { LetterRow, SubmissionRow, TransactionRow } from '../../../db/schema/index.ts';
import type { OperationContext } from '../../../deps.ts';
import { holdSandboxEscrow } from '../../../worker/sandbox-faults.ts';
import { markSubmitted } from '../../../worker/steps.ts';
import { PreflightError, settle } from '../../../worker/submissions.ts';
import { BLOCKING_BUDGET_MS } from '../../../worker/worker.ts';
import { findLetterById, updateLetter } from '../letters.repository.ts';

/** The letter a leg transaction belongs to (its metadata names it). */
export async function legLetter(ctx: OperationContext, row: TransactionRow): Promise<LetterRow> {
  const letterId = row.metadata?.letterId;
  const letter =
    typeof letterId === 'string' ? await findLetterById(ctx.deps.database.db, letterId) : undefined;
  if (!letter) throw new PreflightError(`The letter of transaction ${row.id} does not exist.`);
  return letter;
}

/**
 * A leg's submission from broadcast to verdict: the row goes PENDING, the receipt is waited for, and the vault's
 * event for the letter is decrypted as the operator and held against the amount.
 */
export async function settleLeg(
  ctx: OperationContext,
  row: TransactionRow,
  submission: SubmissionRow,
  leg: { letterId: Hex; leg: LetterLeg; expectedAmount: bigint; gasTxHash: Hex | null },
) {
  const metadata = await markSubmitted(ctx, row, submission.txHash, leg.gasTxHash);
  // A sandbox letter of `…505`: broadcast, then held past the creation's blocking budget (`502 escrow_unsettled`).
  holdSandboxEscrow(ctx.deps, row, BLOCKING_BUDGET_MS + 5000);
  const receipt = await settle(ctx, submission);
  const verification = await verifyLetterLeg({
    network: ctx.network,
    receipt,
    letterId: leg.letterId,
    leg: leg.leg,
    expectedAmount: leg.expectedAmount,
  });
  return { metadata, receipt, verified: verification.ok };
}

/**
 * A leg's transaction was reorganized away after its confirmations (`checkFinality`): its letter is marked for an
 * operator's review, whatever its state.
 */
export async function letterNeedsReview(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const letter = await legLetter(ctx, row).catch(() => undefined);
  if (letter) await updateLetter(ctx.deps.database.db, letter.id, { needsReview: true });
}
