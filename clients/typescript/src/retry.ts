/**
 * Sending a request again, safely: what may be replayed (reads, and writes carrying an `Idempotency-Key`, which the
 * service answers once), after what (a dropped connection, `429`, `503`), and how long to wait (`Retry-After` when the
 * service names it, else exponential backoff with jitter), within bounds.
 */
import { retryAfterOf } from './errors.ts';

export interface RetryOptions {
  /** Attempts in all, the first included (1 turns retries off). Default 4. */
  maxAttempts?: number;
  /** The first backoff; it doubles at each attempt, with jitter. Default 500 ms. */
  baseDelayMs?: number;
  /** The longest single wait: a `Retry-After` past it is not waited out, the answer is returned. Default 30 s. */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

export type Fetch = (input: Request) => Promise<Response>;

/**
 * A request the service handles at most once however often it is sent: a read, or a write with an
 * `Idempotency-Key` (a repeat returns the original answer). Only these are sent again after a dropped connection
 * or a `503`, where the first attempt may have been carried out.
 */
export function isReplayable(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The backoff before attempt `attempt + 1`: base × 2^(attempt − 1), between half and all of it (jitter). */
export function backoffMs(attempt: number, options: Required<RetryOptions>): number {
  const full = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/**
 * `fetch` that sends a request again where that is safe: after a network failure or a `503` when the request is
 * replayable, and after a `429` always (the service refuses over budget before doing anything). Each attempt sends
 * a clone, so the body and every header (the `Idempotency-Key` too) are the same each time.
 */
export function retryingFetch(fetchImpl: Fetch, retry: RetryOptions = {}): Fetch {
  const options = { ...DEFAULT_RETRY, ...retry };
  return async (request) => {
    const replayable = isReplayable(request);
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= options.maxAttempts;
      let response: Response;
      try {
        response = await fetchImpl(last ? request : request.clone());
      } catch (error) {
        if (last || !replayable || request.signal.aborted) throw error;
        await sleep(backoffMs(attempt, options), request.signal);
        continue;
      }
      const again = response.status === 429 || (response.status === 503 && replayable);
      if (!again || last) return response;
      const retryAfter = retryAfterOf(response);
      const wait = retryAfter === null ? backoffMs(attempt, options) : retryAfter * 1000;
      if (wait > options.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
