/**
 * Letters of value: creation (the escrow leg), claim (the release leg), void and expiry (the refund leg). Who may
 * see what is in views.service.ts, mailing in mailing.service.ts, the operator's sweep in sweep.service.ts, the
 * legs' state machines in operations/.
 */
import type { Address } from 'viem';
import { decryptConfidentialBalance, letterIdToBytes32 } from '../../adapters/confidential/helpers.ts';
import type { Tx } from '../../db/client.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { LetterRow, RecipientAddress, TransactionRow, UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Scope } from '../../lib/key-scope.ts';
import type { Logger } from '../../lib/logger.ts';
import { formatAmount } from '../../lib/money.ts';
import { driveInline } from '../../worker/worker.ts';
import { reserveSpend } from '../keys/spend.service.ts';
import { assertMoneyConfigured, requireNetwork } from '../network/network.service.ts';
import { queuedTransaction, replayOf, requestHashOf } from '../transactions/money.service.ts';
import { insertTransaction } from '../transactions/transactions.repository.ts';
import { openWalletKey } from '../wallets/custody.ts';
import { assertCanSend, ownWallet } from '../wallets/wallets.service.ts';
import { claimCodeHash, generateClaimCode, normalizeClaimCode } from './claim-code.ts';
import {
  CLAIMABLE,
  findLetterByCodeHash,
  findLetterById,
  insertLetter,
  moveLetter,
} from './letters.repository.ts';
import { claimCodeContext, memoContext } from './letters.schema.ts';
import { cancelMailing } from './mailing.service.ts';

const DAY_MS = 86_400_000;

export interface CreateLetterInput {
  walletId: string;
  amount: bigint;
  memo: string | null;
  recipient: { name: string; address: RecipientAddress };
  expiresInDays: number;
  claimOrigin: string;
}

/**
 * Seals `amount` from one of the sender's custodial wallets (within the caller's scope) into the vault and answers
 * once the escrow is settled (or the blocking budget is spent: `502 escrow_unsettled`, the worker carries on). The
 * escrow leg counts against the spend limit of the key that asks.
 */
export async function createLetter(
  deps: Deps,
  user: UserRow,
  scope: Scope,
  input: CreateLetterInput,
  logger: Logger,
  idempotencyKey?: string,
): Promise<LetterRow> {
  assertMoneyConfigured(deps);
  const wallet = await ownWallet(deps, user.id, input.walletId, scope);
  assertCanSend(wallet);
  // The key is bound to this request: a repeat follows the letter it made (a client that lost the answer, or met
  // `escrow_unsettled`, never escrows a second one); the key on another request is `409 idempotency_conflict`.
  const requestHash = requestHashOf(['LETTER_ESCROW', { ...input, amount: input.amount.toString() }]);
  if (idempotencyKey) {
    const earlier = await replayOf(deps, user.id, idempotencyKey, requestHash);
    if (earlier) return settledLetter(deps, earlier.id, logger);
  }
  const network = requireNetwork(deps);
  const { db } = deps.database;
  const balance = await decryptConfidentialBalance(network, openWalletKey(deps.keyring, wallet));
  if (balance < input.amount) {
    throw new AppError(
      'insufficient_balance',
      `The wallet holds ${formatAmount(balance)} cSTABLE: too little to seal ${formatAmount(input.amount)}.`,
      {
        details: { available: formatAmount(balance), requested: formatAmount(input.amount) },
      },
    );
  }
  const now = deps.clock.now();
  const letterId = newId();
  const code = generateClaimCode();
  const escrowId = newId();
  try {
    await db.transaction(async (tx) => {
      await reserveSpend(deps, tx, scope, input.amount, now);
      await insertTransaction(
        tx,
        queuedTransaction(deps, now, {
          id: escrowId,
          userId: user.id,
          walletId: wallet.id,
          type: 'LETTER_ESCROW',
          amount: input.amount.toString(),
          fromAddress: wallet.address,
          toAddress: network.contracts.letterVault,
          counterparty: `Letter escrow ${letterId}`,
          metadata: { letterId, leg: 'escrow' },
          apiKeyId: scope.keyId,
          idempotencyKey: idempotencyKey ?? null,
          requestHash: idempotencyKey ? requestHash : null,
        }),
      );
      await insertLetter(tx, {
        id: letterId,
        userId: user.id,
        senderWalletId: wallet.id,
        senderAddress: wallet.address,
        status: 'DRAFT',
        chainId: network.chainId,
        amount: input.amount.toString(),
        memoSealed: input.memo ? deps.keyring.seal(input.memo, memoContext(letterId)) : null,
        recipientName: input.recipient.name,
        recipientAddress: input.recipient.address,
        expiresAt: new Date(now.getTime() + input.expiresInDays * DAY_MS),
        claimOrigin: input.claimOrigin,
        claimCodeHash: claimCodeHash(normalizeClaimCode(code)),
        claimCodeSealed: deps.keyring.seal(code, claimCodeContext(letterId)),
        vaultLetterId: letterIdToBytes32(letterId),
        escrowTransactionId: escrowId,
        createdAt: now,
        updatedAt: now,
      });
    });
  } catch (error) {
    // The same key sent twice at once: the second meets the first at the unique index and follows its letter.
    const earlier =
      idempotencyKey && isUniqueViolation(error)
        ? await replayOf(deps, user.id, idempotencyKey, requestHash)
        : undefined;
    if (earlier) return settledLetter(deps, earlier.id, logger);
    throw error;
  }
  return settledLetter(deps, escrowId, logger);
}

/**
 * Drives a letter's escrow leg (`escrowId`) within the blocking budget and answers the letter once it is escrowed:
 * `escrow_failed`/`insufficient_balance` when nothing moved, `502 escrow_unsettled` while it is not settled yet.
 */
async function settledLetter(deps: Deps, escrowId: string, logger: Logger): Promise<LetterRow> {
  const escrow = await driveInline(deps, escrowId, logger);
  const letterId = escrow.metadata?.letterId;
  const letter = typeof letterId === 'string' ? await findLetterById(deps.database.db, letterId) : undefined;
  if (!letter) throw new Error(`The letter of escrow ${escrowId} does not exist.`);
  // Past its escrow (a replay may find it mailed, claimed or voided since): the letter as it stands now.
  if (letter.status !== 'DRAFT' && letter.status !== 'FAILED') return letter;
  if (letter.status === 'FAILED' || escrow.status === 'FAILED') {
    // An escrow fails only with its own code, `escrow_failed`, and only when nothing moved: what the confidential
    // token does with an amount over the balance (it moves zero), or a refusal before signing.
    throw new AppError('insufficient_balance', escrow.error ?? 'The escrow failed; nothing moved.', {
      details: { letterId },
    });
  }
  throw new AppError(
    'escrow_unsettled',
    escrow.txHash
      ? 'The escrow was sent; its bookkeeping is still pending. Follow the letter with GET /transfer/letter/{id}.'
      : 'The escrow is not sent yet (the network is slow to answer); it is retried and the letter follows. ' +
          'Follow it with GET /transfer/letter/{id}.',
    {
      details: { letterId, txHash: escrow.txHash },
    },
  );
}

class LostRace extends Error {}

/**
 * Runs a leg's insert and its letter's guarded move in one database transaction; when the move finds the letter
 * already moved by someone else, everything is rolled back and undefined returned.
 */
async function guardedMove(
  deps: Deps,
  work: (tx: Tx) => Promise<LetterRow | undefined>,
): Promise<LetterRow | undefined> {
  try {
    return await deps.database.db.transaction(async (tx) => {
      const moved = await work(tx);
      if (!moved) throw new LostRace();
      return moved;
    });
  } catch (error) {
    if (error instanceof LostRace) return undefined;
    throw error;
  }
}

/** Queues the refund of an escrowed letter; the letter moves to `status` (VOIDED or EXPIRED) in the same step. */
export async function refundLetter(
  deps: Deps,
  letter: LetterRow,
  from: readonly ('ESCROWED' | 'MAILED' | 'VOIDED' | 'EXPIRED')[],
  status: 'VOIDED' | 'EXPIRED',
  reason: string,
): Promise<LetterRow | undefined> {
  const network = requireNetwork(deps);
  const now = deps.clock.now();
  const refundId = newId();
  const moved = await guardedMove(deps, async (tx) => {
    await insertTransaction(
      tx,
      queuedTransaction(deps, now, {
        id: refundId,
        userId: letter.userId,
        walletId: letter.senderWalletId,
        type: 'LETTER_REFUND',
        amount: letter.amount,
        fromAddress: network.contracts.letterVault,
        toAddress: letter.senderAddress,
        counterparty: `Letter refund ${letter.id}`,
        metadata: { letterId: letter.id, leg: 'refund', reason },
      }),
    );
    return moveLetter(tx, letter.id, from, {
      status,
      refundReason: reason,
      refundTransactionId: refundId,
      updatedAt: now,
    });
  });
  if (moved) deps.workSignal.notify('transactions');
  return moved;
}

export function expireLetter(deps: Deps, letter: LetterRow) {
  return refundLetter(deps, letter, CLAIMABLE, 'EXPIRED', 'expired');
}

/**
 * Voids an escrowed or mailed letter (a mailed one only when acknowledged) and queues its refund; a mailed letter's
 * printing is stopped if it is not too late (its `mail.status` then reads `cancelled`).
 */
export async function voidLetter(
  deps: Deps,
  letter: LetterRow,
  acknowledgeMailed: boolean,
  logger: Logger,
): Promise<LetterRow> {
  const voided = await refundVoided(deps, letter, acknowledgeMailed);
  if (letter.status === 'MAILED') return cancelMailing(deps, voided, logger);
  return voided;
}

async function refundVoided(deps: Deps, letter: LetterRow, acknowledgeMailed: boolean): Promise<LetterRow> {
  if (letter.status === 'VOIDED') return letter;
  if (letter.status === 'CLAIMING' || letter.status === 'CLAIMED') {
    throw new AppError('already_claimed', 'This letter has been claimed: it can no longer be voided.');
  }
  if (letter.status === 'MAILED' && !acknowledgeMailed) {
    throw new AppError(
      'void_requires_acknowledgement',
      'This letter was mailed: send acknowledgeMailed: true to void it (the paper letter then stops working).',
    );
  }
  if (letter.status !== 'ESCROWED' && letter.status !== 'MAILED') {
    throw new AppError('letter_not_claimable', `A ${letter.status} letter cannot be voided.`);
  }
  const moved = await refundLetter(deps, letter, [letter.status], 'VOIDED', 'voided');
  if (!moved)
    return refundVoided(
      deps,
      (await findLetterById(deps.database.db, letter.id)) as LetterRow,
      acknowledgeMailed,
    );
  return moved;
}

export interface ClaimOutcome {
  letter: LetterRow;
  transaction: TransactionRow;
}

async function awaitClaim(deps: Deps, letter: LetterRow, logger: Logger): Promise<ClaimOutcome> {
  const transaction = await driveInline(deps, letter.claimTransactionId as string, logger);
  const current = (await findLetterById(deps.database.db, letter.id)) as LetterRow;
  if (transaction.status === 'FAILED') {
    if (transaction.errorCode === 'escrow_vault_underfunded') {
      throw new AppError(
        'escrow_vault_underfunded',
        transaction.error ?? 'The escrow vault cannot cover this letter right now.',
        { details: { letterId: letter.id } },
      );
    }
    throw new AppError(
      'claim_failed',
      'The release failed on-chain; nothing moved and the letter is claimable again.',
      { details: { letterId: letter.id } },
    );
  }
  if (transaction.status === 'CONFIRMED' && current.status !== 'CLAIMED') {
    throw new AppError(
      'claim_unsettled',
      'The release was sent; its bookkeeping is still pending. Follow the letter with GET /transfer/letter/{id}.',
      {
        details: { letterId: letter.id, txHash: transaction.txHash },
      },
    );
  }
  return { letter: current, transaction };
}

/** Who claims: the account, and the principal (`api_key:<id>` or `session:<id>`) it claims through. */
export interface Claimant {
  user: UserRow;
  principal: string;
}

/**
 * Whether a claim already made is this claimant's into this wallet: the same principal (each API key and each
 * browser session is one), not merely the same account. A claim made before principals were recorded (migration
 * 0009) keeps the rule it was made under: the same account.
 */
function isOwnClaim(letter: LetterRow, claimant: Claimant, walletId: string): boolean {
  if (letter.claimantWalletId !== walletId) return false;
  return letter.claimantPrincipal === null
    ? letter.claimantUserId === claimant.user.id
    : letter.claimantPrincipal === claimant.principal;
}

/**
 * Claims a letter by its code into one of the claimant's wallets and answers once the release is settled. The
 * first claimant wins; the same principal asking again into the same wallet gets the claim in progress; any other
 * principal (even of the same account) or wallet gets `409 already_claimed`.
 */
export async function claimLetter(
  deps: Deps,
  claimant: Claimant,
  scope: Scope,
  input: { claimCode: string; walletId: string },
  logger: Logger,
): Promise<ClaimOutcome> {
  assertMoneyConfigured(deps);
  const wallet = await ownWallet(deps, claimant.user.id, input.walletId, scope);
  return claimInto(deps, claimant, wallet, input.claimCode, logger);
}

async function claimInto(
  deps: Deps,
  claimant: Claimant,
  wallet: { id: string; address: Address },
  claimCode: string,
  logger: Logger,
): Promise<ClaimOutcome> {
  const { user } = claimant;
  const network = requireNetwork(deps);
  const { db } = deps.database;
  const letter = await findLetterByCodeHash(db, claimCodeHash(normalizeClaimCode(claimCode)));
  if (!letter) throw new AppError('letter_not_found', 'No letter matches this claim code.');
  if (letter.userId === user.id)
    throw new AppError(
      'cannot_claim_own_letter',
      'You sent this letter: it cannot be claimed by its sender.',
    );
  if (letter.status === 'CLAIMING' || letter.status === 'CLAIMED') {
    if (isOwnClaim(letter, claimant, wallet.id)) return awaitClaim(deps, letter, logger);
    throw new AppError('already_claimed', 'This letter has already been claimed.');
  }
  if (letter.status === 'EXPIRED')
    throw new AppError('letter_expired', 'This letter has expired; its amount went back to the sender.');
  if (letter.status !== 'ESCROWED' && letter.status !== 'MAILED') {
    throw new AppError(
      'letter_not_claimable',
      `This letter cannot be claimed (${letter.status.toLowerCase()}).`,
    );
  }
  const now = deps.clock.now();
  if (letter.expiresAt <= now) {
    await expireLetter(deps, letter);
    throw new AppError('letter_expired', 'This letter has expired; its amount goes back to the sender.');
  }
  const claimId = newId();
  const claimable = letter.status;
  const claimed = await guardedMove(deps, async (tx) => {
    await insertTransaction(
      tx,
      queuedTransaction(deps, now, {
        id: claimId,
        userId: user.id,
        walletId: wallet.id,
        type: 'LETTER_CLAIM',
        amount: letter.amount,
        fromAddress: network.contracts.letterVault,
        toAddress: wallet.address,
        counterparty: `Letter escrow ${letter.id}`,
        metadata: { letterId: letter.id, leg: 'claim' },
      }),
    );
    // The guarded flip: of concurrent claimants exactly one moves the letter out of a claimable status.
    return moveLetter(tx, letter.id, [claimable], {
      status: 'CLAIMING',
      claimableStatus: claimable,
      claimantUserId: user.id,
      claimantPrincipal: claimant.principal,
      claimantWalletId: wallet.id,
      claimantAddress: wallet.address,
      claimTransactionId: claimId,
      updatedAt: now,
    });
  });
  if (!claimed) return claimInto(deps, claimant, wallet, claimCode, logger);
  return awaitClaim(deps, claimed, logger);
}
