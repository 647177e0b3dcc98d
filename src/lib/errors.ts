/**
 * The one error type of the service. Every failure that reaches a client is an AppError; the HTTP layer maps
 * it to the envelope `{ok: false, error: {code, message, details?}}` in one place (src/http/errors.ts).
 */

const STATUS_BY_CODE = {
  // 400
  invalid_json: 400,
  validation_error: 400,
  invalid_request: 400,
  invalid_amount: 400,
  invalid_recipient: 400,
  invalid_nota: 400,
  invalid_passphrase: 400,
  weak_password: 400,
  totp_already_enabled: 400,
  totp_not_configured: 400,
  invalid_totp_code: 400,
  invalid_reset_token: 400,
  invalid_challenge: 400,
  challenge_expired: 400,
  passkey_verification_failed: 400,
  invalid_host: 400,
  wallet_limit_reached: 400,
  key_limit_reached: 400,
  webhook_limit_reached: 400,
  invalid_webhook_url: 400,
  invalid_claim_code: 400,
  cannot_claim_own_letter: 400,
  void_requires_acknowledgement: 400,
  delivery_method_unavailable: 400,
  claim_origin_not_public: 400,
  receipt_unavailable: 400,
  insufficient_balance: 400,
  wallet_not_custodial: 400,
  // 401
  unauthenticated: 401,
  invalid_api_key: 401,
  session_expired: 401,
  invalid_credentials: 401,
  unknown_passkey: 401,
  // 403
  session_required: 403,
  account_disabled: 403,
  signup_closed: 403,
  insufficient_scope: 403,
  spend_limit_exceeded: 403,
  // 404
  not_found: 404,
  letter_not_found: 404,
  // 409
  wallet_exists: 409,
  passkey_exists: 409,
  already_claimed: 409,
  letter_not_claimable: 409,
  letter_already_mailed: 409,
  email_taken: 409,
  idempotency_conflict: 409,
  // 408
  request_timeout: 408,
  // 410
  letter_expired: 410,
  // 421: a request to a name the service does not answer to (src/http/host-check.ts)
  misdirected_request: 421,
  // 413, 415
  payload_too_large: 413,
  unsupported_media_type: 415,
  // 422
  postage_unavailable: 422,
  // 429, 431
  rate_limited: 429,
  request_headers_too_large: 431,
  // 500
  internal_error: 500,
  // 502
  claim_failed: 502,
  claim_unsettled: 502,
  escrow_unsettled: 502,
  escrow_failed: 502,
  upstream_error: 502,
  // 503
  escrow_vault_underfunded: 503,
  fhe_credentials_missing: 503,
  mail_provider_not_configured: 503,
  configuration_missing: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

/**
 * The `errorCode` of a FAILED transaction: the interface's failure codes of the queued operations (answered
 * asynchronously, never as an HTTP status), and the two refusals that name themselves. Each operation's own code is
 * its `failureCode` (src/operations.ts).
 */
export const TRANSACTION_ERROR_CODES = [
  'faucet_failed',
  'faucet_cap_exceeded',
  'mint_failed',
  'transfer_failed',
  'redeem_failed',
  'escrow_failed',
  'claim_failed',
  'refund_failed',
  'escrow_vault_underfunded',
] as const;
export type TransactionErrorCode = (typeof TRANSACTION_ERROR_CODES)[number];

export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

export interface AppErrorOptions {
  /** Overrides the code's usual status where the interface names two (e.g. `invalid_totp_code` is 401 at login). */
  status?: number;
  details?: unknown;
  /**
   * Whether the same request may succeed later, unchanged, stated to the client: the envelope then carries it as
   * `details.retryable` (the interface's `receipt_unavailable`; the mail route's provider failures). Left out, the
   * error says nothing and `retryable` follows the status (`RETRYABLE_STATUSES`).
   */
  retryable?: boolean;
  cause?: unknown;
}

/** Statuses after which the same request may succeed later, unchanged (the client's default, clients/typescript). */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 503]);

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** Whether the same request may succeed later: as stated (`AppErrorOptions.retryable`), else by status. */
  readonly retryable: boolean;
  /** Whether `retryable` was stated, so that the envelope shows it (`details.retryable`). */
  readonly statesRetryable: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? statusOf(code);
    this.details = options.details;
    this.statesRetryable = options.retryable !== undefined;
    this.retryable = options.retryable ?? RETRYABLE_STATUSES.has(this.status);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * The AppError an error is or carries in its cause chain: libraries wrap what our code throws beneath them (viem
 * wraps what a transport throws: the provider list's `503 service_unavailable`, `missingSetting('RPC_URL')`), and
 * the HTTP layer answers with the AppError, not with a 500 for the wrapper.
 */
export function findAppError(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 10; depth++) {
    if (current instanceof AppError) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** A required setting is absent: a 503 that names the variable (platform-side, never the client's fault). */
export function missingSetting(variable: string): AppError {
  return new AppError('configuration_missing', `The service is not configured: ${variable} is not set.`, {
    details: { variable },
  });
}
