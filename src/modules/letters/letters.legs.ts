import type { Address, Hex } from 'viem';
import { LETTER_STATE } from '../../adapters/chain/contracts.ts';
import {
  encodeLetterEscrow,
  encodeLetterRefund,
  encodeLetterRelease,
  readLetter,
  verifyLetterLeg,
} from '../../adapters/confidential/helpers.ts';
import type { Deps } from '../../deps.ts';
import {
  blockFields,
  ensureGas,
  fail,
  markSubmitted,
  type OperationContext,
  registerFailureHook,
  registerRunner,
  walletOf,
  withMetadata,
} from '../../worker/operations.ts';
import { PreflightError, settle, submitOnce } from '../../worker/submissions.ts';
import { type TransactionRow, transition } from '../transactions/transactions.repository.ts';
import { openWalletKey } from '../wallets/custody.ts';
import { findLetterById, type LetterRow, moveLetter, updateLetter } from './letters.repository.ts';

async function letterOf(ctx: OperationContext, row: TransactionRow): Promise<LetterRow> {
  const letterId = row.metadata?.letterId;
  const letter =
    typeof letterId === 'string' ? await findLetterById(ctx.deps.database.db, letterId) : undefined;
  if (!letter)
    throw new PreflightError('letter_missing', `The letter of transaction ${row.id} does not exist.`);
  return letter;
}

/** The sender's wallet moves the sealed amount into the vault, recorded under the letter's vault id. */
async function runEscrow(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await letterOf(ctx, row);
  const wallet = await walletOf(ctx, row);
  const key = openWalletKey(ctx.deps.keyring, wallet);
  const amount = BigInt(row.amount);
  const gasTxHash = await ensureGas(ctx, row, wallet);
  const token = ctx.network.contracts.confidentialToken;
  const submission = await submitOnce(ctx.deps, ctx.network, row.id, 'escrow', key, async () => {
    const encrypted = await ctx.network.rail.encryptAmount({
      contract: token,
      caller: wallet.address as Address,
      amount,
    });
    return {
      to: token,
      data: encodeLetterEscrow({
        vault: ctx.network.contracts.letterVault,
        letterId: letter.vaultLetterId as Hex,
        encrypted,
      }),
    };
  });
  const metadata = await markSubmitted(ctx, row, submission.txHash, gasTxHash);
  const receipt = await settle(ctx.deps, ctx.network, submission);
  const verification = await verifyLetterLeg({
    network: ctx.network,
    receipt,
    letterId: letter.vaultLetterId as Hex,
    leg: 'escrow',
    expectedAmount: amount,
  });
  if (!verification.ok) {
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

/** The operator releases exactly the letter's escrow to the claimant's address. */
async function runClaim(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await letterOf(ctx, row);
  const vaultId = letter.vaultLetterId as Hex;
  const amount = BigInt(row.amount);
  const submission = await submitOnce(
    ctx.deps,
    ctx.network,
    row.id,
    'release',
    ctx.network.operator.privateKey,
    async () => {
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
      if (held !== amount) {
        throw new PreflightError(
          'escrow_vault_underfunded',
          'The escrow vault cannot cover this letter right now. The letter stays claimable.',
        );
      }
      return {
        to: ctx.network.contracts.letterVault,
        data: encodeLetterRelease(vaultId, row.toAddress as Address),
      };
    },
  );
  await markSubmitted(ctx, row, submission.txHash, null);
  const receipt = await settle(ctx.deps, ctx.network, submission);
  const verification = await verifyLetterLeg({
    network: ctx.network,
    receipt,
    letterId: vaultId,
    leg: 'release',
    expectedAmount: amount,
  });
  const now = ctx.deps.clock.now();
  await db.transaction(async (tx) => {
    await transition(tx, row.id, ['QUEUED', 'PENDING'], {
      status: 'CONFIRMED',
      metadata: withMetadata(row, { verified: verification.ok }),
      ...blockFields(receipt),
    });
    await moveLetter(tx, letter.id, ['CLAIMING'], {
      status: 'CLAIMED',
      claimedAt: now,
      claimCodeSealed: null,
      needsReview: !verification.ok,
      error: verification.ok ? null : 'The release could not be verified; an operator will review it.',
    });
  });
}

/** The operator returns the letter's escrow to its sender (void, expiry). */
async function runRefund(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const letter = await letterOf(ctx, row);
  const vaultId = letter.vaultLetterId as Hex;
  const submission = await submitOnce(
    ctx.deps,
    ctx.network,
    row.id,
    'refund',
    ctx.network.operator.privateKey,
    async () => {
      const onChain = await readLetter(ctx.network, vaultId);
      if (onChain.state !== LETTER_STATE.Escrowed) {
        throw new PreflightError(
          'refund_failed',
          'The vault no longer holds this letter: nothing to refund.',
        );
      }
      return { to: ctx.network.contracts.letterVault, data: encodeLetterRefund(vaultId) };
    },
  );
  await markSubmitted(ctx, row, submission.txHash, null);
  const receipt = await settle(ctx.deps, ctx.network, submission);
  const verification = await verifyLetterLeg({
    network: ctx.network,
    receipt,
    letterId: vaultId,
    leg: 'refund',
    expectedAmount: BigInt(row.amount),
  });
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    metadata: withMetadata(row, { verified: verification.ok }),
    ...blockFields(receipt),
  });
  if (!verification.ok) await updateLetter(db, letter.id, { needsReview: true });
}

/** Registers the letter legs' state machines with the worker (once per process; idempotent). */
export function registerLetterLegs(_deps?: Deps): void {
  registerRunner('LETTER_ESCROW', runEscrow);
  registerRunner('LETTER_CLAIM', runClaim);
  registerRunner('LETTER_REFUND', runRefund);
  registerFailureHook('LETTER_ESCROW', async (ctx, row) => {
    const letter = await letterOf(ctx, row);
    await moveLetter(ctx.deps.database.db, letter.id, ['DRAFT'], { status: 'FAILED', error: row.error });
  });
  registerFailureHook('LETTER_CLAIM', async (ctx, row) => {
    // A release that did not happen leaves the letter claimable again, by anyone holding the code.
    const letter = await letterOf(ctx, row);
    await moveLetter(ctx.deps.database.db, letter.id, ['CLAIMING'], {
      status: letter.claimableStatus ?? 'ESCROWED',
      claimantUserId: null,
      claimantWalletId: null,
      claimantAddress: null,
      claimTransactionId: null,
    });
  });
}
