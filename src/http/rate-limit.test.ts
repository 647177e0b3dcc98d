import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  createTestContext,
  errorOf,
  openTestDatabase,
  signup,
  type TestContext,
} from '../../test/harness.ts';
import { PostgresRateLimitStore } from '../db/rate-limits.ts';
import { ManualClock } from '../lib/time.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Fixed windows: start each test just after a minute boundary so the whole burst falls in one window. */
function alignToMinute(): void {
  const now = ctx.clock.now().getTime();
  ctx.clock.advance(60_000 - (now % 60_000) + 100);
}

describe('rate limits', () => {
  it('gives each principal 120 reads a minute, with RateLimit-* headers, then 429 with Retry-After', async () => {
    const caller = await signup(ctx.app);
    alignToMinute();
    const first = await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    expect(first.headers['ratelimit-limit']).toBe('120');
    expect(first.headers['ratelimit-remaining']).toBe('119');
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThan(0);
    for (let i = 1; i < 120; i += 1) await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    const limited = await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    expect(errorOf(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Each API key is a principal of its own.
    const key = await apiKeyOf(ctx.app, caller);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: key.headers })).statusCode).toBe(200);
    ctx.clock.advance(60_000);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers })).statusCode).toBe(200);
  });

  it('gives each principal 30 writes a minute, counted apart from reads', async () => {
    const caller = await signup(ctx.app);
    alignToMinute();
    for (let i = 0; i < 30; i += 1) {
      const response = await ctx.app.inject({
        method: 'PATCH',
        url: '/api/v1/me',
        headers: caller.headers,
        payload: { name: `n${i}` },
      });
      expect(response.statusCode).toBe(200);
    }
    const limited = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: caller.headers,
      payload: { name: 'over' },
    });
    expect(errorOf(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers })).statusCode).toBe(200);
  });
});

describe('PostgreSQL-backed counters', () => {
  it('share one budget between stores on the same database (several API processes)', async () => {
    const { database, drop } = await openTestDatabase();
    try {
      await database.migrate();
      const clock = new ManualClock(new Date('2026-01-01T00:00:30Z'));
      const a = new PostgresRateLimitStore(database.db);
      const b = new PostgresRateLimitStore(database.db);
      expect((await a.hit('write:k', 60_000, clock.now())).count).toBe(1);
      expect((await b.hit('write:k', 60_000, clock.now())).count).toBe(2);
      expect((await a.peek('write:k', 60_000, clock.now())).count).toBe(2);
      const concurrent = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).hit('write:k', 60_000, clock.now())),
      );
      expect(concurrent.map((hit) => hit.count).sort((x, y) => x - y)).toEqual([
        3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
      ]);
      clock.advance(60_000);
      expect((await b.hit('write:k', 60_000, clock.now())).count).toBe(1);
    } finally {
      await database.close();
      await drop();
    }
  });
});
