import type { ErrorCode, TransactionErrorCode } from '../../src/lib/errors.ts';
import { ApiError, type ClientErrorCode } from './api.ts';
import { formatAmountsIn } from './money.ts';
import { passkeysUnavailableReason } from './webauthn.ts';

/**
 * Every error code the app can meet (the service's closed unions and the app's own), in plain words: a code
 * without words does not compile. `null` where the service's own message says it best (it names the file, the
 * setting or the reason); the service's message is also the fallback for a code this build does not know.
 */
const PLAIN: Record<ErrorCode | TransactionErrorCode | ClientErrorCode, string | null> = {
  // claim
  already_claimed: 'This letter has already been claimed by someone else.',
  letter_expired: 'This letter has expired. Its amount goes back to the sender.',
  letter_not_claimable:
    'This letter can no longer be claimed: the sender voided it, or it was never completed. Ask the sender for a new one.',
  cannot_claim_own_letter:
    'You sent this letter, so you cannot claim it yourself. Give the code to the recipient, or void the letter to get the money back.',
  letter_not_found: 'No letter matches this code. Check the code printed on the letter and try again.',
  invalid_claim_code:
    'This is not a valid claim code. A claim code has 28 letters and digits in 7 groups of 4, like ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345.',
  claim_failed:
    'The payout did not go through. Nothing was lost and the letter can still be claimed: please try again in a moment.',
  claim_unsettled:
    'The payout was sent, but our records are still catching up. Wait a minute, then press Claim again to see it.',
  escrow_vault_underfunded:
    'The vault cannot pay out right now. The letter can still be claimed: please try again later.',
  // letters
  escrow_unsettled:
    'The amount was sent to the vault, but the letter is not confirmed yet. It will appear in your letters shortly.',
  escrow_failed: 'Escrowing the amount failed. Nothing left your wallet.',
  void_requires_acknowledgement:
    'This letter was already mailed. Tick the box to confirm that the paper letter will stop working.',
  delivery_method_unavailable: 'That delivery method is not offered. Choose standard or tracked.',
  claim_origin_not_public:
    'This letter cannot be mailed: its claim address is not a public https address. Hand over the PDF or the code instead.',
  letter_already_mailed: 'This letter has already been mailed.',
  postage_unavailable: 'The print provider rejected this letter (check the address).',
  mail_provider_not_configured: 'Mailing is not set up on this service.',
  // accounts and security
  invalid_credentials: 'Wrong email or password.',
  invalid_totp_code:
    'That code is wrong or has expired. Enter the current 6-digit code from your authenticator app, or an unused recovery code.',
  email_taken: 'An account with this email already exists. Log in instead.',
  invalid_reset_token:
    'This reset link is not valid any more: it was used, or it is older than 30 minutes. Ask for a new one.',
  weak_password:
    'Choose a password of 10 to 200 characters with an uppercase letter, a lowercase letter and a digit.',
  signup_closed: 'Sign-up is closed on this service.',
  unauthenticated: 'Please log in.',
  session_expired: 'Your session has ended. Please log in again.',
  account_disabled: 'This account is disabled. Contact support.',
  session_required: 'This needs a browser session, not an API key.',
  unknown_passkey: 'This passkey is not registered with any account here.',
  passkey_verification_failed: 'The passkey could not be verified. Try again.',
  passkey_exists: 'This passkey is already registered.',
  invalid_challenge: 'The passkey request expired or was already used. Try again.',
  challenge_expired: 'The passkey request expired. Try again.',
  invalid_host: 'The passkey was made for another site address.',
  totp_already_enabled: 'Two-factor authentication is already on.',
  totp_not_configured: 'Start the two-factor setup first.',
  key_limit_reached: 'You already have 10 active API keys. Revoke one first.',
  insufficient_scope:
    'This API key is not allowed to do that: it is read-only, or bound to other wallets. Use a key with more scope, or the web app.',
  spend_limit_exceeded:
    'This API key has reached its 24-hour spend limit. Wait until it frees up, or send from the web app.',
  webhook_limit_reached: 'You already have 10 webhook endpoints. Delete one first.',
  invalid_webhook_url: null,
  // wallets and money
  wallet_limit_reached: 'You already have 10 wallets, the most an account can hold.',
  wallet_exists: 'This address is already registered.',
  wallet_not_custodial: 'Watch-only wallets can receive but cannot send.',
  // The service says how much the wallet holds and what was asked: its own words say it best.
  insufficient_balance: null,
  invalid_amount: 'Enter a positive decimal amount, such as 25 or 12.50.',
  invalid_recipient: 'The recipient is not a valid address (0x followed by 40 hexadecimal characters).',
  idempotency_conflict: 'This request was already sent with different details. Reload and try again.',
  faucet_cap_exceeded:
    'The sandbox faucet gives at most 1,000.00 test STABLE per account in any 24 hours, and this would pass it. Ask for less, or try again tomorrow.',
  faucet_failed: 'The faucet could not fund the wallet. Nothing moved; please try again.',
  // The service names the reason (a balance too low, a refusal on-chain): shown as it gave it.
  mint_failed: null,
  transfer_failed: null,
  redeem_failed: null,
  fhe_credentials_missing: 'Confidential operations are not configured on this service.',
  receipt_unavailable: 'No receipt yet: the transaction has not reached the chain.',
  refund_failed: null,
  invalid_nota: null,
  invalid_passphrase: null,
  invalid_api_key: null,
  upstream_error: 'A service we depend on did not answer. Please try again in a moment.',
  configuration_missing: null,
  service_unavailable: 'The service is busy or restarting. Please try again in a moment.',
  // generic
  invalid_request: null,
  request_timeout: 'The request took too long to arrive. Please try again.',
  misdirected_request: null,
  payload_too_large: null,
  unsupported_media_type: null,
  request_headers_too_large: null,
  unexpected_response: 'The service sent an answer the app could not read. Reload the page and try again.',
  rate_limited: 'Too many attempts. Please try again later.',
  validation_error: 'Some fields are not valid.',
  invalid_json: 'The request was malformed.',
  not_found: 'Not found.',
  internal_error: 'Something went wrong on our side. Please try again.',
  network_error: 'The service could not be reached. Check your connection and try again.',
  timeout: 'The service took too long to answer. Check your activity before trying again.',
};

/**
 * Request fields by the last part of their path, in words people know (the service's validation messages are
 * meant for developers: "must be an ISO 3166-1 alpha-2 country code").
 */
const FIELDS: Record<string, string> = {
  country: 'the country: use a real two-letter country code, such as US, GB or DE',
  postal: 'the postal code',
  line1: 'the street address',
  city: 'the city',
  region: 'the state or region',
  name: 'the name (at most 200 characters)',
  amount: 'the amount: a positive amount such as 25 or 1,000.50, with at most 6 decimals',
  to: 'the recipient: an address of 0x followed by 40 hexadecimal characters',
  email: 'the email address',
  password: 'the password',
  newPassword:
    'the new password: 10 to 200 characters with an uppercase letter, a lowercase letter and a digit',
  memo: 'the memo (at most 500 characters)',
  url: 'the address: a full https:// address',
  expiresInDays: 'the expiry: a whole number of days from 1 to 365',
  label: 'the label (at most 100 characters)',
};

function fieldWords(path: string | undefined, message: string | undefined): string {
  const name = (path ?? '').split(/[./]/).filter(Boolean).pop() ?? '';
  if (Object.hasOwn(FIELDS, name)) return FIELDS[name] as string;
  return `${path ? `${path}: ` : ''}${message ?? ''}`;
}

/** Messages of browser errors (a fetch that could not connect), which are not for people. */
const BROWSER_NOISE = /failed to fetch|networkerror|load failed|network request failed/i;

function wordsOf(code: string): string | null {
  return Object.hasOwn(PLAIN, code) ? PLAIN[code as keyof typeof PLAIN] : null;
}

export function plainCode(code: string | null | undefined, fallback?: string | null): string {
  return (code && wordsOf(code)) || fallback || 'Something went wrong. Please try again.';
}

/** A plain sentence for any thrown error. */
export function plainError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'not_found' && error.message.startsWith('No route')) {
      return 'This feature is not available on this server yet.';
    }
    if (error.code === 'rate_limited') {
      return error.retryAfter
        ? `Too many attempts. Please try again later (in about ${Math.ceil(error.retryAfter / 60)} min).`
        : (PLAIN.rate_limited ?? error.message);
    }
    if (error.code === 'validation_error' && Array.isArray(error.details)) {
      const parts = [
        ...new Set(
          (error.details as { path?: string; message?: string }[])
            .map((d) => fieldWords(d.path, d.message))
            .filter(Boolean),
        ),
      ];
      return parts.length ? `Please check ${parts.join('; ')}.` : (PLAIN.validation_error ?? error.message);
    }
    // The service's own words name amounts in its format ("5000.00"): shown in the app's ("5,000.00").
    const named =
      error.details && typeof error.details === 'object' ? Object.values(error.details as object) : [];
    return plainCode(error.code, formatAmountsIn(error.message, named));
  }
  if (error instanceof DOMException) {
    if (error.name === 'NotAllowedError') return 'The passkey request was cancelled or timed out.';
    if (error.name === 'TimeoutError') return PLAIN.timeout ?? error.message;
    if (error.name === 'InvalidStateError') return 'This passkey is already registered on this device.';
    if (error.name === 'SecurityError') {
      return passkeysUnavailableReason() ?? 'The browser refused this request for this site address.';
    }
    return 'The browser could not do this. Please try again.';
  }
  // Messages the app wrote itself are plain already; the browser's own (TypeError: Failed to fetch) are not.
  if (error instanceof TypeError || (error instanceof Error && BROWSER_NOISE.test(error.message))) {
    return PLAIN.network_error ?? 'The service could not be reached.';
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * `plainError`, with words of the caller's for some codes: the same code can mean something else on a form
 * (`invalid_credentials` in Settings is the current password, not the email or password of a log-in).
 */
export function plainErrorOn(error: unknown, words: Partial<Record<ErrorCode, string>>): string {
  if (error instanceof ApiError && Object.hasOwn(words, error.code)) {
    return words[error.code as ErrorCode] as string;
  }
  return plainError(error);
}

/** Settings forms that ask for the current password to confirm a change. */
export const WRONG_CURRENT_PASSWORD: Partial<Record<ErrorCode, string>> = {
  invalid_credentials: 'Your current password is not right. Type it again (it is the one you log in with).',
};
