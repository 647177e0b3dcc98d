import { sql } from 'drizzle-orm';
import { type RateLimitHit, type RateLimitStore, windowOf } from '../lib/rate-limit.ts';
import { type Db, rows } from './client.ts';

/** The rate-limit counters in PostgreSQL, so a principal's budget holds across every API process sharing it. */
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

  async forget(key: string): Promise<void> {
    await this.db.execute(sql`delete from rate_limit_counters where key = ${key}`);
  }
}
