/** The one error every failed call throws: the service's envelope `{ok: false, error: {code, message, details?}}`. */

/** Codes of the client's own: the service could not be reached, or answered outside its envelope. */
export type ClientErrorCode = 'network_error' | 'unexpected_response' | 'timeout';

export interface SealpayErrorInit {
  code: string;
  message: string;
  status: number;
  details?: unknown;
  /** The service's id of the request (`X-Request-Id`), for its logs; null when no answer came. */
  requestId?: string | null;
  /** Seconds a `429` (or `503`) asked to wait (`Retry-After`). */
  retryAfter?: number | null;
  cause?: unknown;
}

/** Statuses after which the same request may succeed later, unchanged. */
const RETRYABLE_STATUSES = new Set([0, 408, 429, 500, 503]);

export class SealpayError extends Error {
  /** The service's stable code (`invalid_amount`, `rate_limited`, …) or a `ClientErrorCode`: match on this. */
  readonly code: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly details: unknown;
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  /**
   * Whether sending the same request again later can succeed: the service says so where it does
   * (`details.retryable` of `receipt_unavailable`), else a network failure, a timeout, `429`, `500` or `503`.
   */
  readonly retryable: boolean;

  constructor(init: SealpayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SealpayError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details;
    this.requestId = init.requestId ?? null;
    this.retryAfter = init.retryAfter ?? null;
    const stated = (init.details as { retryable?: unknown } | null | undefined)?.retryable;
    this.retryable = typeof stated === 'boolean' ? stated : RETRYABLE_STATUSES.has(init.status);
  }
}

export function isSealpayError(value: unknown): value is SealpayError {
  return value instanceof SealpayError;
}

/**
 * `details` of `403 spend_limit_exceeded` (an API key with a spend limit): the limit, what the key sent in the last
 * 24 hours and what is left of it (decimal strings), and when the refused amount fits again (ISO timestamp). Such a
 * refusal is not `retryable`: the same request succeeds only after `resetsAt`, or with a smaller amount.
 */
export interface SpendLimitDetails {
  limit: string;
  spent: string;
  remaining: string;
  resetsAt: string;
}

/** The spend limit's figures when `error` is a `spend_limit_exceeded`, else null. */
export function spendLimitOf(error: unknown): SpendLimitDetails | null {
  if (!isSealpayError(error) || error.code !== 'spend_limit_exceeded') return null;
  const details = error.details as Partial<SpendLimitDetails> | null | undefined;
  const fields = [details?.limit, details?.spent, details?.remaining, details?.resetsAt];
  return fields.every((field) => typeof field === 'string') ? (details as SpendLimitDetails) : null;
}

/** `Retry-After` in seconds (a delay or an HTTP date), or null. */
export function retryAfterOf(response: Response): number | null {
  const header = response.headers.get('retry-after');
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** The error of a failed answer, from its envelope (or `unexpected_response` when it has none). */
export function errorFromAnswer(response: Response, body: unknown): SealpayError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const requestId = response.headers.get('x-request-id');
  const retryAfter = retryAfterOf(response);
  if (typeof error?.code === 'string' && typeof error.message === 'string') {
    return new SealpayError({
      code: error.code,
      message: error.message,
      status: response.status,
      details: error.details,
      requestId,
      retryAfter,
    });
  }
  return new SealpayError({
    code: 'unexpected_response',
    message: `Unexpected answer from the service (HTTP ${response.status}).`,
    status: response.status,
    requestId,
    retryAfter,
  });
}
