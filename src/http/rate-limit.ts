import { sql } from 'drizzle-orm';
import type { FastifyReply } from 'fastify';
import { type Db, rows } from '../db/client.ts';
import { AppError } from '../lib/errors.ts';

export interface RateLimitHit {
  count: number;
  resetAt: Date;
}

/**
 * Fixed-window counters. In memory for one process (the embedded default); in PostgreSQL when several API
 * processes share one database, so a principal's budget holds across all of them.
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number, now: Date): Promise<RateLimitHit>;
  peek(key: string, windowMs: number, now: Date): Promise<RateLimitHit>;
}

function windowOf(windowMs: number, now: Date): { start: number; resetAt: Date } {
  const start = Math.floor(now.getTime() / windowMs) * windowMs;
  return { start, resetAt: new Date(start + windowMs) };
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

  /** Drops finished windows now and then so the map does not grow without bound. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    const horizon = now - 60 * 60_000;
    for (const [key, value] of this.counters) if (value.start < horizon) this.counters.delete(key);
  }
}

export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0;
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async hit(key: string, windowMs: number, now: Date): Promise<RateLimitHit> {
    const { start, resetAt } = windowOf(windowMs, now);
    const windowStart = new Date(start).toISOString();
    const [row] = await rows<{ count: number }>(
      this.db,
      sql`
      insert into rate_limit_counters (key, window_start, count, expires_at)
      values (${key}, ${windowStart}, 1, ${resetAt.toISOString()})
      on conflict (key) do update set
        count = case when rate_limit_counters.window_start = excluded.window_start
                     then rate_limit_counters.count + 1 else 1 end,
        window_start = excluded.window_start,
        expires_at = excluded.expires_at
      returning count`,
    );
    if (now.getTime() - this.lastSweep > 60_000) {
      this.lastSweep = now.getTime();
      await this.db.execute(sql`delete from rate_limit_counters where expires_at < ${now.toISOString()}`);
    }
    return { count: Number(row?.count ?? 1), resetAt };
  }

  async peek(key: string, windowMs: number, now: Date): Promise<RateLimitHit> {
    const { start, resetAt } = windowOf(windowMs, now);
    const [row] = await rows<{ count: number }>(
      this.db,
      sql`
      select count from rate_limit_counters where key = ${key} and window_start = ${new Date(start).toISOString()}`,
    );
    return { count: Number(row?.count ?? 0), resetAt };
  }
}

export interface Limit {
  /** Names the budget (`write`, `read`, `claim`, …) so budgets never share a counter. */
  bucket: string;
  max: number;
  windowMs: number;
}

/** Sets the RateLimit-* headers for a window that has counted `hit.count`; returns the seconds until it resets. */
export function setRateLimitHeaders(reply: FastifyReply, limit: Limit, hit: RateLimitHit, now: Date): number {
  const resetSeconds = Math.max(1, Math.ceil((hit.resetAt.getTime() - now.getTime()) / 1000));
  reply.header('RateLimit-Limit', limit.max);
  reply.header('RateLimit-Remaining', Math.max(0, limit.max - hit.count));
  reply.header('RateLimit-Reset', resetSeconds);
  return resetSeconds;
}

/** The `429 rate_limited` of a spent budget, with its Retry-After header set. */
function rateLimited(reply: FastifyReply, resetSeconds: number): AppError {
  reply.header('Retry-After', resetSeconds);
  return new AppError('rate_limited', `Too many requests. Retry in ${resetSeconds} seconds, with jitter.`, {
    details: { retryAfter: resetSeconds },
  });
}

/**
 * Counts one request against `limit` for `subject`, sets the RateLimit-* headers, and throws
 * `429 rate_limited` (with Retry-After) once the budget is spent.
 */
export async function consume(
  store: RateLimitStore,
  reply: FastifyReply,
  limit: Limit,
  subject: string,
  now: Date,
): Promise<void> {
  const hit = await store.hit(`${limit.bucket}:${subject}`, limit.windowMs, now);
  const resetSeconds = setRateLimitHeaders(reply, limit, hit, now);
  if (hit.count > limit.max) throw rateLimited(reply, resetSeconds);
}
