/**
 * Rate limits as fixed-window counters: the budgets (`Limit`), the counters' store (in memory here for one process;
 * in PostgreSQL, `src/db/rate-limits.ts`, when API processes share a database) and `consume`, which spends one
 * unit of a budget and refuses past it.
 */
import { AppError } from './errors.ts';

export interface RateLimitHit {
  count: number;
  resetAt: Date;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number, now: Date): Promise<RateLimitHit>;
  peek(key: string, windowMs: number, now: Date): Promise<RateLimitHit>;
  /** Drops the counter of `key` (its budget starts afresh). */
  forget(key: string): Promise<void>;
}

export interface Limit {
  /** Names the budget (`write`, `read`, `claim`, …) so budgets never share a counter. */
  bucket: string;
  max: number;
  windowMs: number;
}

/** Where a checked budget's state goes: the answer's RateLimit-* headers (`rateLimitHeaders` in src/http). */
export interface RateLimitReporter {
  report(limit: Limit, hit: RateLimitHit, now: Date): void;
}

/** A reporter for callers without an answer to put headers on (operator commands, tests). */
export const unreported: RateLimitReporter = { report() {} };

export function windowOf(windowMs: number, now: Date): { start: number; resetAt: Date } {
  const start = Math.floor(now.getTime() / windowMs) * windowMs;
  return { start, resetAt: new Date(start + windowMs) };
}

/** Whole seconds until the window of `hit` resets (at least 1). */
export function secondsUntilReset(hit: RateLimitHit, now: Date): number {
  return Math.max(1, Math.ceil((hit.resetAt.getTime() - now.getTime()) / 1000));
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  async hit(key: string, windowMs: number, now: Date): Promise<RateLimitHit> {
    const { start, resetAt } = windowOf(windowMs, now);
    const current = this.counters.get(key);
    const count = current && current.start === start ? current.count + 1 : 1;
    this.counters.set(key, { start, count });
    this.sweep(now.getTime());
    return { count, resetAt };
  }

  async peek(key: string, windowMs: number, now: Date): Promise<RateLimitHit> {
    const { start, resetAt } = windowOf(windowMs, now);
    const current = this.counters.get(key);
    return { count: current && current.start === start ? current.count : 0, resetAt };
  }

  async forget(key: string): Promise<void> {
    this.counters.delete(key);
  }

  /** Drops finished windows now and then so the map does not grow without bound. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    const horizon = now - 60 * 60_000;
    for (const [key, value] of this.counters) if (value.start < horizon) this.counters.delete(key);
  }
}

/**
 * Counts one request against `limit` for `subject` and reports the budget's state; past the budget it throws
 * `429 rate_limited` with `details.retryAfter` (the error handler also sends it as Retry-After).
 */
export async function consume(
  store: RateLimitStore,
  reporter: RateLimitReporter,
  limit: Limit,
  subject: string,
  now: Date,
): Promise<void> {
  const hit = await store.hit(`${limit.bucket}:${subject}`, limit.windowMs, now);
  reporter.report(limit, hit, now);
  if (hit.count > limit.max) {
    const retryAfter = secondsUntilReset(hit, now);
    throw new AppError('rate_limited', `Too many requests. Retry in ${retryAfter} seconds, with jitter.`, {
      details: { retryAfter },
    });
  }
}
