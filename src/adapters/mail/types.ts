import type { RecipientAddress } from '../../db/schema/letters.ts';

/**
 * The print provider behind `POST /transfer/letter/{id}/mail`: it receives the finished PDF (which alone
 * carries the claim code and the QR code of the claim URL) and the recipient's address, and prints and
 * mails the letter. Two implementations: the local print sandbox (files under `{dataDir}/mail`) and Lob.
 */

/** The recipient as the letter row keeps it, with the country's English name (`LetterDocument['recipient']`). */
export interface MailRecipient {
  name: string;
  address: RecipientAddress & { countryName: string };
}

/** The return address printed in the envelope's upper window (Lob requires one). */
export interface SenderAddress {
  name: string;
  company?: string | null;
  line1: string;
  line2?: string | null;
  city: string;
  region: string;
  postal: string;
  /** ISO 3166-1 alpha-2; Lob mails from `US`. */
  country: string;
}

/** How a letter travels: standard post, or tracked (certified at home, registered abroad). */
export type DeliveryMethod = 'standard' | 'tracked';

/** A letter to print and post: the PDF, the recipient, and the key that makes a retry the same mailing. */
export interface MailRequest {
  letterId: string;
  /**
   * One mailing per key: a repeat with the same key (a retry after a timeout, a second worker) adopts the
   * letter the provider already accepted instead of printing a second copy. Derive it from the letter and
   * the attempt, e.g. `letter-mail:{letterId}:{deliveryMethod}`.
   */
  idempotencyKey: string;
  pdf: Buffer;
  deliveryMethod: DeliveryMethod;
  to: MailRecipient;
  isDomestic: boolean;
  /** Internal note at the provider. Never the claim code or URL (a description that looks like one is dropped). */
  description?: string;
}

/** What the print provider answered for a mailing: its id, status and, when tracked, the tracking number. */
export interface MailResult {
  provider: 'printer';
  providerId: string;
  deliveryMethod: DeliveryMethod;
  /** The provider's word for where the letter is: `created`, `in_transit`, `processed_for_delivery`, … */
  status: string;
  trackingNumber: string | null;
  /** YYYY-MM-DD */
  expectedDeliveryDate: string | null;
  mailedAt: Date;
  /** Validated and priced, never printed or mailed. */
  testMode: boolean;
}

/**
 * The print-and-mail adapter: Lob, or the local sandbox on local networks; chosen at start-up by
 * `createPrintProvider`.
 */
export interface PrintProvider {
  readonly name: 'local' | 'lob';
  readonly testMode: boolean;
  /**
   * Idempotent per `idempotencyKey`. Throws `AppError`: `postage_unavailable` (422) when the provider rejects
   * the letter (address, file, service); `upstream_error` (502, `retryable: true`) when it could not be
   * reached or failed on its side, so the same key may be retried; `mail_provider_not_configured` (503) when
   * the service's own provider settings are missing or refused.
   */
  send(request: MailRequest): Promise<MailResult>;
  /** Best effort, never throws: `cancelled: false` (with a reason) when it is too late or the call failed. */
  cancel(providerId: string): Promise<{ cancelled: boolean; reason?: string }>;
  /** The current status and tracking. Throws `upstream_error` when the provider cannot answer. */
  refresh(providerId: string): Promise<Partial<MailResult>>;
}

/** A claim code (7 groups of 4 Crockford base32 characters) or a claim link: never sent outside the PDF. */
const CLAIM_SECRET = /[0-9A-Z]{4}(?:-?[0-9A-Z]{4}){6}|claim#/i;

/** Whether `text` holds what looks like a claim code or link: such text never goes to the provider. */
export function looksLikeClaimSecret(text: string): boolean {
  return CLAIM_SECRET.test(text);
}

/** The provider's description: the caller's when it is safe, else a neutral one. */
export function safeDescription(request: MailRequest): string {
  const fallback = `sealpay letter ${request.letterId}`;
  const description = request.description?.trim();
  if (!description || looksLikeClaimSecret(description)) return fallback;
  return description.slice(0, 255);
}

/** `YYYY-MM-DD` (UTC) `days` business days (Monday to Friday) after `from`. */
export function addBusinessDays(from: Date, days: number): string {
  const date = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  let left = days;
  while (left > 0) {
    date.setUTCDate(date.getUTCDate() + 1);
    const weekday = date.getUTCDay();
    if (weekday !== 0 && weekday !== 6) left--;
  }
  return date.toISOString().slice(0, 10);
}
