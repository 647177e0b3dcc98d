import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Hex } from 'viem';
import { LETTER_STATE } from '../../adapters/chain/contracts.ts';
import {
  decryptConfidentialBalance,
  letterIdToBytes32,
  readLetter,
} from '../../adapters/confidential/helpers.ts';
import type { DeliveryMethod, MailResult } from '../../adapters/mail/index.ts';
import type { Tx } from '../../db/client.ts';
import {
  type LetterRow,
  letters,
  type TransactionRow,
  transactions,
  type UserRow,
  type WalletRow,
} from '../../db/schema/index.ts';
import type { MailBlock, RecipientAddress } from '../../db/schema/letters.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/logger.ts';
import { formatAmount } from '../../lib/money.ts';
import { driveInline } from '../../worker/worker.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import { insertTransaction } from '../transactions/transactions.repository.ts';
import { requireNetwork } from '../wallets/balances.ts';
import { openWalletKey } from '../wallets/custody.ts';
import { claimCodeHash, generateClaimCode, normalizeClaimCode } from './claim-code.ts';
import { type LetterDocument, renderLetterPdf } from './letter-pdf.ts';
import {
  findLetterByCodeHash,
  findLetterById,
  legTransactions,
  moveLetter,
  updateLetter,
} from './letters.repository.ts';
import { claimCodeContext, countryName, HOME_COUNTRY, memoContext, toLetter } from './letters.schema.ts';

const CLAIMABLE = ['ESCROWED', 'MAILED'] as const;

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

/** A letter its sender or its claimant may see; anyone else reads `404 letter_not_found`. */
export async function visibleLetter(deps: Deps, userId: string, id: string): Promise<LetterRow> {
  const row = await findLetterById(deps.database.db, id);
  if (!row || (row.userId !== userId && row.claimantUserId !== userId)) {
    throw new AppError('letter_not_found', 'No such letter.');
  }
  return row;
}

export async function ownLetter(deps: Deps, userId: string, id: string): Promise<LetterRow> {
  const row = await findLetterById(deps.database.db, id);
  if (!row || row.userId !== userId) throw new AppError('letter_not_found', 'No such letter.');
  return row;
}

export interface CreateLetterInput {
  wallet: WalletRow;
  amount: bigint;
  memo: string | null;
  recipient: { name: string; address: RecipientAddress };
  expiresInDays: number;
  claimOrigin: string;
}

export async function createLetter(
  deps: Deps,
  user: UserRow,
  input: CreateLetterInput,
  logger: Logger,
): Promise<LetterRow> {
  const network = requireNetwork(deps);
  const { db } = deps.database;
  const balance = await decryptConfidentialBalance(network, openWalletKey(deps.keyring, input.wallet));
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
  await db.transaction(async (tx) => {
    await tx.insert(letters).values({
      id: letterId,
      userId: user.id,
      senderWalletId: input.wallet.id,
      senderAddress: input.wallet.address,
      status: 'DRAFT',
      chainId: network.chainId,
      amount: input.amount.toString(),
      memoSealed: input.memo ? deps.keyring.seal(input.memo, memoContext(letterId)) : null,
      recipientName: input.recipient.name,
      recipientAddress: input.recipient.address,
      expiresAt: new Date(now.getTime() + input.expiresInDays * 86_400_000),
      claimOrigin: input.claimOrigin,
      claimCodeHash: claimCodeHash(normalizeClaimCode(code)),
      claimCodeSealed: deps.keyring.seal(code, claimCodeContext(letterId)),
      vaultLetterId: letterIdToBytes32(letterId),
      createdAt: now,
      updatedAt: now,
    });
    await insertTransaction(tx, {
      id: escrowId,
      userId: user.id,
      walletId: input.wallet.id,
      type: 'LETTER_ESCROW',
      status: 'QUEUED',
      chainId: network.chainId,
      amount: input.amount.toString(),
      token: deps.operations.LETTER_ESCROW.token,
      fromAddress: input.wallet.address,
      toAddress: network.contracts.letterVault,
      counterparty: `Letter escrow ${letterId}`,
      metadata: { letterId, leg: 'escrow' },
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    });
    await tx.update(letters).set({ escrowTransactionId: escrowId }).where(eq(letters.id, letterId));
  });
  const escrow = await driveInline(deps, escrowId, logger);
  const letter = (await findLetterById(db, letterId)) as LetterRow;
  if (letter.status === 'ESCROWED') return letter;
  if (letter.status === 'FAILED' || escrow.status === 'FAILED') {
    const silentZero = escrow.errorCode === 'escrow_failed';
    throw new AppError(
      silentZero ? 'insufficient_balance' : 'escrow_failed',
      escrow.error ?? 'The escrow failed; nothing moved.',
      {
        details: { letterId },
      },
    );
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
async function refundLetter(
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
    await insertTransaction(tx, {
      id: refundId,
      userId: letter.userId,
      walletId: letter.senderWalletId,
      type: 'LETTER_REFUND',
      status: 'QUEUED',
      chainId: network.chainId,
      amount: letter.amount,
      token: deps.operations.LETTER_REFUND.token,
      fromAddress: network.contracts.letterVault,
      toAddress: letter.senderAddress,
      counterparty: `Letter refund ${letter.id}`,
      metadata: { letterId: letter.id, leg: 'refund', reason },
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    });
    return moveLetter(tx, letter.id, from, {
      status,
      refundReason: reason,
      refundTransactionId: refundId,
      updatedAt: now,
    });
  });
  if (moved) deps.workSignal.notify();
  return moved;
}

export function expireLetter(deps: Deps, letter: LetterRow) {
  return refundLetter(deps, letter, CLAIMABLE, 'EXPIRED', 'expired');
}

export async function voidLetter(
  deps: Deps,
  letter: LetterRow,
  acknowledgeMailed: boolean,
): Promise<LetterRow> {
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
    return voidLetter(
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

export async function claimLetter(
  deps: Deps,
  user: UserRow,
  input: { claimCode: string; wallet: WalletRow },
  logger: Logger,
): Promise<ClaimOutcome> {
  const network = requireNetwork(deps);
  const { db } = deps.database;
  const normalized = normalizeClaimCode(input.claimCode);
  const letter = await findLetterByCodeHash(db, claimCodeHash(normalized));
  if (!letter) throw new AppError('letter_not_found', 'No letter matches this claim code.');
  if (letter.userId === user.id)
    throw new AppError(
      'cannot_claim_own_letter',
      'You sent this letter: it cannot be claimed by its sender.',
    );
  if (letter.status === 'CLAIMING' || letter.status === 'CLAIMED') {
    if (letter.claimantUserId === user.id && letter.claimantWalletId === input.wallet.id)
      return awaitClaim(deps, letter, logger);
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
  const claimed = await guardedMove(deps, async (tx) => {
    await insertTransaction(tx, {
      id: claimId,
      userId: user.id,
      walletId: input.wallet.id,
      type: 'LETTER_CLAIM',
      status: 'QUEUED',
      chainId: network.chainId,
      amount: letter.amount,
      token: deps.operations.LETTER_CLAIM.token,
      fromAddress: network.contracts.letterVault,
      toAddress: input.wallet.address,
      counterparty: `Letter escrow ${letter.id}`,
      metadata: { letterId: letter.id, leg: 'claim' },
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    });
    // The guarded flip: of concurrent claimants exactly one moves the letter out of a claimable status.
    return moveLetter(tx, letter.id, [letter.status as 'ESCROWED' | 'MAILED'], {
      status: 'CLAIMING',
      claimableStatus: letter.status as 'ESCROWED' | 'MAILED',
      claimantUserId: user.id,
      claimantWalletId: input.wallet.id,
      claimantAddress: input.wallet.address,
      claimTransactionId: claimId,
      updatedAt: now,
    });
  });
  if (!claimed) return claimLetter(deps, user, input, logger);
  return awaitClaim(deps, claimed, logger);
}

/** The provider's errors the mail route may answer as they are; anything else becomes a retryable 500. */
const MAIL_ROUTE_CODES: ReadonlySet<string> = new Set([
  'postage_unavailable',
  'mail_provider_not_configured',
]);

/** Mailed letters refresh their provider status at most this often (the interface's polling guidance). */
const MAIL_REFRESH_MS = 15 * 60_000;

type MailRecord = MailBlock & { refreshedAt?: string };

function toMailBlock(result: MailResult, now: Date): MailRecord {
  return {
    provider: 'printer',
    providerId: result.providerId,
    deliveryMethod: result.deliveryMethod,
    status: result.status,
    trackingNumber: result.trackingNumber,
    expectedDeliveryDate: result.expectedDeliveryDate,
    mailedAt: result.mailedAt.toISOString(),
    testMode: result.testMode,
    refreshedAt: now.toISOString(),
  };
}

/**
 * Prints and mails an escrowed letter. The provider call is idempotent per letter and method, so a retry after a
 * timeout adopts the mailing the provider already accepted; a failure leaves the letter ESCROWED with the attempt
 * recorded and the provider's reason in the letter's `error`, which the next successful mailing clears.
 *
 * The interface allows this route `postage_unavailable` (the provider refused the letter),
 * `mail_provider_not_configured` (503), 401, 403, 404, 429 and 500, and no 502. A provider that cannot be reached
 * or fails on its side is therefore `500 internal_error`, whose contract ("safe to retry with backoff") is exactly
 * the case: nothing was mailed that a retry would mail again. A 503 would claim a configuration problem.
 */
export async function mailLetter(
  deps: Deps,
  letter: LetterRow,
  deliveryMethod: DeliveryMethod,
): Promise<LetterRow> {
  if (letter.status === 'MAILED')
    throw new AppError('letter_already_mailed', 'This letter has already been mailed.');
  if (letter.status !== 'ESCROWED')
    throw new AppError('letter_not_claimable', `A ${letter.status} letter cannot be mailed.`);
  if (!letter.claimOrigin.startsWith('https://')) {
    throw new AppError(
      'claim_origin_not_public',
      `The letter's claim address (${letter.claimOrigin}) is not public https: a printed letter must point to one.`,
    );
  }
  const provider = deps.mail;
  if (!provider)
    throw new AppError('mail_provider_not_configured', 'Mailing is not configured: LOB_API_KEY is not set.', {
      details: { variable: 'LOB_API_KEY' },
    });
  const document = await letterDocument(deps, letter);
  const { db } = deps.database;
  let result: MailResult;
  try {
    result = await provider.send({
      letterId: letter.id,
      idempotencyKey: `letter-mail:${letter.id}:${deliveryMethod}`,
      pdf: await renderLetterPdf(document),
      deliveryMethod,
      to: document.recipient,
      isDomestic: letter.recipientAddress.country === HOME_COUNTRY,
      description: `sealpay letter ${letter.id}`,
    });
  } catch (error) {
    const code = error instanceof AppError ? error.code : 'upstream_error';
    const reason = error instanceof Error ? error.message : String(error);
    const mailAttempts = [
      ...letter.mailAttempts,
      { at: deps.clock.now().toISOString(), error: `${code}: ${reason}` },
    ];
    // The reason is shown on the letter only while it is still ESCROWED (a void meanwhile has its own story).
    const recorded = await moveLetter(db, letter.id, ['ESCROWED'], {
      mailAttempts,
      error: `Mailing failed (${code}): ${reason}`,
    });
    if (!recorded) await updateLetter(db, letter.id, { mailAttempts });
    if (error instanceof AppError && MAIL_ROUTE_CODES.has(error.code)) throw error;
    throw new AppError(
      'internal_error',
      'The print provider could not be reached or failed; the letter was not mailed and stays ESCROWED. It is ' +
        'safe to retry with backoff: a mailing the provider did accept is adopted, never printed twice.',
      { details: { letterId: letter.id, retryable: true }, cause: error },
    );
  }
  const moved = await moveLetter(db, letter.id, ['ESCROWED'], {
    status: 'MAILED',
    mail: toMailBlock(result, deps.clock.now()),
    error: null,
  });
  if (moved) return moved;
  const current = (await findLetterById(db, letter.id)) as LetterRow;
  if (current.status === 'MAILED') return current;
  // Voided or claimed while the provider was printing: stop the paper letter if it is not too late.
  await provider.cancel(result.providerId);
  throw new AppError(
    'letter_not_claimable',
    `The letter became ${current.status} while it was being mailed; the mailing was cancelled.`,
  );
}

/** Stops the printing of a voided letter, best effort: a letter already on its way cannot be recalled. */
export async function cancelMailing(deps: Deps, letter: LetterRow, logger: Logger): Promise<void> {
  if (!letter.mail || !deps.mail) return;
  const outcome = await deps.mail.cancel(letter.mail.providerId);
  if (!outcome.cancelled)
    logger.info({ letterId: letter.id, reason: outcome.reason }, 'mailing not cancelled');
}

/** Refreshes a mailed letter's tracking from the provider, at most every 15 minutes; failures keep the old block. */
export async function refreshMailing(deps: Deps, letter: LetterRow, logger: Logger): Promise<LetterRow> {
  const mail = letter.mail as MailRecord | null;
  if (letter.status !== 'MAILED' || !mail || !deps.mail) return letter;
  const now = deps.clock.now();
  if (mail.refreshedAt && now.getTime() - new Date(mail.refreshedAt).getTime() < MAIL_REFRESH_MS)
    return letter;
  try {
    const update = await deps.mail.refresh(mail.providerId);
    const next: MailRecord = {
      ...mail,
      ...(update.status ? { status: update.status } : {}),
      ...(update.trackingNumber !== undefined ? { trackingNumber: update.trackingNumber } : {}),
      ...(update.expectedDeliveryDate !== undefined
        ? { expectedDeliveryDate: update.expectedDeliveryDate }
        : {}),
      refreshedAt: now.toISOString(),
    };
    return await updateLetter(deps.database.db, letter.id, { mail: next });
  } catch (error) {
    logger.warn({ letterId: letter.id, err: error }, 'mail status refresh failed');
    return letter;
  }
}

export function senderLabelOf(sender: Pick<UserRow, 'name' | 'company'> | undefined): string {
  return sender?.company || sender?.name || 'A sealpay user';
}

/** What the printed page shows: never the amount or the memo. Only while the letter still has its code. */
export async function letterDocument(deps: Deps, letter: LetterRow): Promise<LetterDocument> {
  if (!letter.claimCodeSealed || !['DRAFT', 'ESCROWED', 'MAILED'].includes(letter.status)) {
    throw new AppError('letter_not_claimable', `A ${letter.status} letter has no printable claim code.`);
  }
  const claimCode = deps.keyring.openText(letter.claimCodeSealed, claimCodeContext(letter.id));
  const sender = await findUserById(deps.database.db, letter.userId);
  const country = letter.recipientAddress.country;
  return {
    letterId: letter.id,
    recipient: {
      name: letter.recipientName,
      address: { ...letter.recipientAddress, countryName: countryName(country) ?? country },
    },
    senderLabel: senderLabelOf(sender),
    claimCode,
    claimUrl: `${letter.claimOrigin}/claim#${claimCode}`,
    expiresAt: letter.expiresAt,
    createdAt: letter.createdAt,
  };
}

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
 * The operator's sweep: expires and refunds letters past `expiresAt`, re-queues refunds that failed, and settles
 * letters whose leg finished while nobody was watching. Safe to run from several processes at once.
 */
export async function sweepLetters(
  deps: Deps,
): Promise<{ expired: number; refunded: number; reconciled: number }> {
  const { db } = deps.database;
  const now = deps.clock.now();
  let expired = 0;
  let refunded = 0;
  let reconciled = 0;
  const due = await db
    .select()
    .from(letters)
    .where(and(inArray(letters.status, [...CLAIMABLE]), lte(letters.expiresAt, now)))
    .limit(200);
  for (const letter of due) if (await expireLetter(deps, letter)) expired += 1;

  const failedRefunds = await db
    .select({ letter: letters })
    .from(letters)
    .innerJoin(transactions, eq(transactions.id, letters.refundTransactionId))
    .where(and(inArray(letters.status, ['VOIDED', 'EXPIRED']), eq(transactions.status, 'FAILED')))
    .limit(200);
  const network = requireNetwork(deps);
  for (const { letter } of failedRefunds) {
    const onChain = await readLetter(network, letter.vaultLetterId as Hex);
    if (onChain.state !== LETTER_STATE.Escrowed) {
      await updateLetter(db, letter.id, {
        needsReview: true,
        error: 'The refund failed and the vault no longer holds the letter.',
      });
      continue;
    }
    if (
      await refundLetter(
        deps,
        letter,
        [letter.status as 'VOIDED' | 'EXPIRED'],
        letter.status as 'VOIDED' | 'EXPIRED',
        letter.refundReason ?? 'voided',
      )
    ) {
      refunded += 1;
    }
  }

  const unsettled = await db
    .select({ letter: letters, leg: transactions })
    .from(letters)
    .innerJoin(
      transactions,
      sql`${transactions.id} = case when ${letters.status} = 'DRAFT' then ${letters.escrowTransactionId} else ${letters.claimTransactionId} end`,
    )
    .where(
      and(
        inArray(letters.status, ['DRAFT', 'CLAIMING']),
        inArray(transactions.status, ['CONFIRMED', 'FAILED']),
      ),
    )
    .limit(200);
  for (const { letter, leg } of unsettled) {
    const confirmed = leg.status === 'CONFIRMED';
    const moved =
      letter.status === 'DRAFT'
        ? await moveLetter(
            db,
            letter.id,
            ['DRAFT'],
            confirmed ? { status: 'ESCROWED' } : { status: 'FAILED', error: leg.error },
          )
        : await moveLetter(
            db,
            letter.id,
            ['CLAIMING'],
            confirmed
              ? { status: 'CLAIMED', claimedAt: leg.updatedAt, claimCodeSealed: null }
              : {
                  status: letter.claimableStatus ?? 'ESCROWED',
                  claimantUserId: null,
                  claimantWalletId: null,
                  claimantAddress: null,
                  claimTransactionId: null,
                },
          );
    if (moved) reconciled += 1;
  }
  return { expired, refunded, reconciled };
}

export type SweepCounts = Awaited<ReturnType<typeof sweepLetters>>;

export interface LetterSweeperOptions {
  /** The pause between the end of one run and the start of the next. */
  intervalMs?: number;
  /** The work of one run (tests pass a slow or failing one). */
  sweep?: (deps: Deps) => Promise<SweepCounts>;
}

/**
 * The sweep on a timer inside the service (every worker process runs it; the guarded updates make that safe).
 * The next run is scheduled only when the previous one has finished, so a run slower than the interval never
 * overlaps the next one; a failed run is logged and the timer goes on. Stopping waits for the run in progress.
 */
export function startLetterSweeper(
  deps: Deps,
  logger: Logger,
  options: LetterSweeperOptions = {},
): () => Promise<void> {
  const { intervalMs = 60_000, sweep = sweepLetters } = options;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      running = sweep(deps)
        .then((counts) => {
          if (counts.expired + counts.refunded + counts.reconciled > 0) logger.info(counts, 'letter sweep');
        })
        .catch((error: unknown) => logger.error({ err: error }, 'letter sweep failed'))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
