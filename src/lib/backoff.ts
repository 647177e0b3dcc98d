/**
 * How long a queue waits before trying a row again: `firstMs × factor^retry`, capped at `maxMs`, each wait drawn
 * between half and all of it (jitter: rows that failed together are not retried together). Every queue's retries
 * use it: the worker's transactions, the email outbox, the webhook deliveries.
 */
export interface Backoff {
  /** The wait before the first retry (`retry` 0), before jitter. */
  firstMs: number;
  /** How much each further retry multiplies it. */
  factor: number;
  /** No wait is longer, before jitter. */
  maxMs: number;
}

/** The wait before retry number `retry` (0 for the first), in milliseconds, jitter included. */
export function backoffMs(policy: Backoff, retry: number): number {
  const exponent = Math.min(Math.max(0, retry), 64);
  const base = Math.min(policy.maxMs, policy.firstMs * policy.factor ** exponent);
  return Math.round(base / 2 + Math.random() * (base / 2));
}
