/** Who may see which letter, and how: the sender's and the claimant's views, and the public preview by code. */
import type { LetterRow, TransactionRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { inScope, type Scope } from '../../lib/key-scope.ts';
import type { Logger } from '../../lib/logger.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import { allowanceLeft } from '../keys/spend.service.ts';
import { findOwnTransaction } from '../transactions/transactions.repository.ts';
import { toTransaction } from '../transactions/transactions.schema.ts';
import { claimCodeHash, normalizeClaimCode } from './claim-code.ts';
import { findLetterByCodeHash, findLetterById, legTransactions } from './letters.repository.ts';
import { senderLabelOf, toLetter } from './letters.schema.ts';
import { refreshMailing } from './mailing.service.ts';

export interface LetterViewer {
  userId: string;
  /** The credential the letter is shown through: what it may send decides whether it reads a claim code. */
  scope: Scope;
}

/**
 * The letters' legs, and which of the letters the credential may read the claim code of. A claim code is a bearer
 * credential for the escrowed money: reading it is as good as sending the amount. So only a credential that may
 * send that amount now reads it (a session; a full key without a spend limit; a limited key whose allowance left
 * over its rolling 24 hours covers it), or the key that created the letter (its escrow leg records the key). A
 * read-only key may send nothing. Whether the caller sent the letter at all is the caller's check.
 */
async function readableCodes(
  deps: Deps,
  rows: LetterRow[],
  scope: Scope,
  userId: string,
): Promise<{ legs: Map<string, TransactionRow>; mayReadCode: (row: LetterRow) => boolean }> {
  const { keyId } = scope;
  const legs = await legTransactions(deps.database.db, rows);
  // Only a sender reads a code: with none of the rows sent by the caller, what the key may spend is not asked.
  if (keyId === null || !rows.some((row) => row.userId === userId)) return { legs, mayReadCode: () => true };
  const allowance =
    scope.permissions === 'read_only' ? 0n : await allowanceLeft(deps, scope, deps.clock.now());
  const createdByKey = (row: LetterRow) =>
    row.escrowTransactionId !== null && legs.get(row.escrowTransactionId)?.apiKeyId === keyId;
  return {
    legs,
    mayReadCode: (row) => allowance === null || allowance >= BigInt(row.amount) || createdByKey(row),
  };
}

export async function presentLetters(deps: Deps, rows: LetterRow[], viewer: LetterViewer) {
  const { legs, mayReadCode } = await readableCodes(deps, rows, viewer.scope, viewer.userId);
  return rows.map((row) =>
    toLetter(row, legs, deps.keyring, deps.network, {
      showClaimCode: row.userId === viewer.userId && mayReadCode(row),
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
  return presentLetter(deps, current, { userId, scope });
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

/**
 * A letter the caller sent (within its scope) and may print: the PDF carries the claim code and its QR, so a
 * credential that may not read the code (`readableCodes`) is refused with `403 insufficient_scope`.
 */
export async function printableLetter(
  deps: Deps,
  userId: string,
  id: string,
  scope: Scope,
): Promise<LetterRow> {
  const row = await ownLetter(deps, userId, id, scope);
  const { mayReadCode } = await readableCodes(deps, [row], scope, userId);
  if (!mayReadCode(row)) {
    throw new AppError(
      'insufficient_scope',
      "This API key may not send this letter's amount, so it may not read its claim code or print it: use the key " +
        'that created the letter, a key whose spend limit covers the amount, or a session.',
    );
  }
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
    letter: await presentLetter(deps, letter, { userId, scope }),
    transaction: toTransaction(transaction, deps.network),
  };
}
