import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  createTestContext,
  errorOf,
  openTestDatabase,
  signup,
  type TestContext,
  toWindowStart,
} from '../../test/harness.ts';
import { ManualClock } from '../../test/support/clock.ts';
import { PostgresRateLimitStore } from '../db/rate-limits.ts';
import { runAccountsCommand } from '../modules/accounts/accounts.cli.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

// Fixed windows: each test starts just after a minute boundary (toWindowStart) so its whole burst falls in one.
describe('rate limits', () => {
  it('gives each principal 120 reads a minute, with RateLimit-* headers, then 429 with Retry-After', async () => {
    const caller = await signup(ctx.app);
    toWindowStart(ctx.clock, 60_000);
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
    toWindowStart(ctx.clock, 60_000);
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

describe('writes refused with 403', () => {
  it("count against the principal's write budget with RateLimit-* headers: 35 POST /keys with a key meet a 429", async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    toWindowStart(ctx.clock, 60_000);
    const answers = [];
    for (let i = 0; i < 35; i += 1) {
      answers.push(
        await ctx.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: key.headers,
          payload: { name: `k${i}` },
        }),
      );
    }
    for (const [i, answer] of answers.slice(0, 30).entries()) {
      expect(errorOf(answer)).toMatchObject({ status: 403, code: 'session_required' });
      expect(answer.headers['ratelimit-limit']).toBe('30');
      expect(answer.headers['ratelimit-remaining']).toBe(String(29 - i));
    }
    for (const answer of answers.slice(30)) {
      expect(errorOf(answer)).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The budget spent is the key's own: the owner's session still writes.
    const own = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: caller.headers,
      payload: { name: 'mine' },
    });
    expect(own.statusCode).toBe(201);
  });

  it("charge a disabled account's principal too", async () => {
    const caller = await signup(ctx.app);
    await runAccountsCommand(ctx.deps, 'disable', { email: caller.email });
    toWindowStart(ctx.clock, 60_000);
    const patch = () =>
      ctx.app.inject({ method: 'PATCH', url: '/api/v1/me', headers: caller.headers, payload: { name: 'x' } });
    const first = await patch();
    expect(errorOf(first)).toMatchObject({ status: 403, code: 'account_disabled' });
    expect(first.headers['ratelimit-remaining']).toBe('29');
    for (let i = 1; i < 30; i += 1) await patch();
    expect(errorOf(await patch())).toMatchObject({ status: 429, code: 'rate_limited' });
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
