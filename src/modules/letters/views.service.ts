/** Who may see which letter, and how: the sender's and the claimant's views, and the public preview by code. */
import type { LetterRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { inScope, type Scope } from '../../lib/key-scope.ts';
import type { Logger } from '../../lib/logger.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import { findOwnTransaction } from '../transactions/transactions.repository.ts';
import { toTransaction } from '../transactions/transactions.schema.ts';
import { claimCodeHash, normalizeClaimCode } from './claim-code.ts';
import { findLetterByCodeHash, findLetterById, legTransactions } from './letters.repository.ts';
import { senderLabelOf, toLetter } from './letters.schema.ts';
import { refreshMailing } from './mailing.service.ts';

export interface LetterViewer {
  userId: string;
}

export async function presentLetters(deps: Deps, rows: LetterRow[], viewer: LetterViewer) {
  const legs = await legTransactions(deps.database.db, rows);
  return rows.map((row) =>
    toLetter(row, legs, deps.keyring, deps.network, {
      audience: row.userId === viewer.userId ? 'sender' : 'claimant',
      apiOrigin: deps.config.publicOrigin,
    }),
  );
}

export async function presentLetter(deps: Deps, row: LetterRow, viewer: LetterViewer) {
  const [letter] = await presentLetters(deps, [row], viewer);
  return letter as NonNullable<typeof letter>;
}

/** One letter as its sender or claimant sees it; the sender's view refreshes a mailed letter's tracking first. */
export async function viewLetter(deps: Deps, userId: string, id: string, scope: Scope, logger: Logger) {
  const letter = await visibleLetter(deps, userId, id, scope);
  const current = letter.userId === userId ? await refreshMailing(deps, letter, logger) : letter;
  return presentLetter(deps, current, { userId });
}

/** Whether the caller sent the letter: from one of its account's wallets, within its scope. */
function sentBy(row: LetterRow, userId: string, scope: Scope): boolean {
  return row.userId === userId && inScope(scope, row.senderWalletId);
}

/** Whether the caller claimed the letter: into one of its account's wallets, within its scope. */
function claimedBy(row: LetterRow, userId: string, scope: Scope): boolean {
  return (
    row.claimantUserId === userId && row.claimantWalletId !== null && inScope(scope, row.claimantWalletId)
  );
}

/**
 * A letter its sender or its claimant may see; anyone else reads `404 letter_not_found`. A letter belongs to its
 * sending wallet (and, once claimed, to the receiving one): a key bound to other wallets reads it as absent.
 */
export async function visibleLetter(
  deps: Deps,
  userId: string,
  id: string,
  scope: Scope,
): Promise<LetterRow> {
  const row = await findLetterById(deps.database.db, id);
  if (!row || (!sentBy(row, userId, scope) && !claimedBy(row, userId, scope))) {
    throw new AppError('letter_not_found', 'No such letter.');
  }
  return row;
}

/** A letter the caller sent (within its scope), which it may mail, void or print; else `404 letter_not_found`. */
export async function ownLetter(deps: Deps, userId: string, id: string, scope: Scope): Promise<LetterRow> {
  const row = await findLetterById(deps.database.db, id);
  if (!row || !sentBy(row, userId, scope)) throw new AppError('letter_not_found', 'No such letter.');
  return row;
}

/** What anyone holding a claim code may see before claiming: never the amount or the memo. */
export async function previewLetter(deps: Deps, code: string) {
  const letter = await findLetterByCodeHash(deps.database.db, claimCodeHash(normalizeClaimCode(code)));
  if (!letter) throw new AppError('letter_not_found', 'No letter matches this claim code.');
  const sender = await findUserById(deps.database.db, letter.userId);
  const expired =
    letter.status === 'EXPIRED' ||
    ((letter.status === 'ESCROWED' || letter.status === 'MAILED') && letter.expiresAt <= deps.clock.now());
  const status = expired ? 'EXPIRED' : letter.status;
  return {
    status,
    expiresAt: letter.expiresAt.toISOString(),
    recipientName: letter.recipientName,
    senderLabel: senderLabelOf(sender),
    amountVisibility: 'sealed' as const,
    claimable: status === 'ESCROWED' || status === 'MAILED',
  };
}

/**
 * The caller's own claim of the letter with this code: the letter as its claimant sees it and the claim
 * transaction, as `POST /transfer/letter/claim` answered them. Anyone but the claimant (and a letter not claimed,
 * or one whose claim was undone) reads `404 letter_not_found`, as for a code that matches nothing.
 */
export async function ownClaim(deps: Deps, userId: string, code: string, scope: Scope) {
  const { db } = deps.database;
  const letter = await findLetterByCodeHash(db, claimCodeHash(normalizeClaimCode(code)));
  const claimed = letter?.status === 'CLAIMING' || letter?.status === 'CLAIMED';
  const transaction =
    letter && claimed && claimedBy(letter, userId, scope) && letter.claimTransactionId
      ? await findOwnTransaction(db, userId, letter.claimTransactionId)
      : undefined;
  if (!letter || !transaction) {
    throw new AppError('letter_not_found', 'You have not claimed a letter with this code.');
  }
  return {
    letter: await presentLetter(deps, letter, { userId }),
    transaction: toTransaction(transaction, deps.network),
  };
}
