/**
 * Printing and mailing an escrowed letter through the print provider (deps.mail), cancelling a voided one's
 * mailing, and refreshing a mailed one's tracking; and the printable document itself.
 */
import type { DeliveryMethod, MailResult } from '../../adapters/mail/index.ts';
import type { LetterRow, MailBlock } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import { type LetterDocument, renderLetterPdf } from './letter-pdf.ts';
import { findLetterById, moveLetter, updateLetter } from './letters.repository.ts';
import { addressOf, claimCodeContext, HOME_COUNTRY, senderLabelOf } from './letters.schema.ts';

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
      { details: { letterId: letter.id }, retryable: true, cause: error },
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

/** The mail block's status once the provider cancelled the mailing (the word Lob and the local sandbox use). */
const MAIL_CANCELLED = 'cancelled';

/**
 * Stops the printing of a voided letter, best effort: a letter already on its way cannot be recalled. When the
 * provider did cancel it, the letter's `mail.status` says so: a voided letter's mailing is never refreshed again,
 * and its last word (`created`) would read as a letter still about to be posted.
 */
export async function cancelMailing(deps: Deps, letter: LetterRow, logger: Logger): Promise<LetterRow> {
  if (!letter.mail || !deps.mail) return letter;
  const outcome = await deps.mail.cancel(letter.mail.providerId);
  if (!outcome.cancelled) {
    logger.info({ letterId: letter.id, reason: outcome.reason }, 'mailing not cancelled');
    return letter;
  }
  const mail: MailRecord = { ...(letter.mail as MailRecord), status: MAIL_CANCELLED };
  return updateLetter(deps.database.db, letter.id, { mail });
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

/** What the printed page shows: never the amount or the memo. Only while the letter still has its code. */
export async function letterDocument(deps: Deps, letter: LetterRow): Promise<LetterDocument> {
  if (!letter.claimCodeSealed || !['DRAFT', 'ESCROWED', 'MAILED'].includes(letter.status)) {
    throw new AppError('letter_not_claimable', `A ${letter.status} letter has no printable claim code.`);
  }
  const claimCode = deps.keyring.openText(letter.claimCodeSealed, claimCodeContext(letter.id));
  const sender = await findUserById(deps.database.db, letter.userId);
  return {
    letterId: letter.id,
    recipient: { name: letter.recipientName, address: addressOf(letter.recipientAddress) },
    senderLabel: senderLabelOf(sender),
    claimCode,
    claimUrl: `${letter.claimOrigin}/claim#${claimCode}`,
    expiresAt: letter.expiresAt,
    createdAt: letter.createdAt,
  };
}

/** The printable PDF of a letter that still has its code. */
export async function letterPdf(deps: Deps, letter: LetterRow): Promise<Buffer> {
  return renderLetterPdf(await letterDocument(deps, letter));
}
