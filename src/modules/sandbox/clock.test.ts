import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  createTestContext,
  errorOf,
  openTestDatabase,
  signup,
  type TestContext,
  toWindowStart,
} from '../../../test/harness.ts';
import { totpCode } from '../../../test/support/totp.ts';
import { rows } from '../../db/client.ts';
import { DatabaseClock } from '../../db/test-clock.ts';
import { systemClock } from '../../lib/time.ts';

const SECRET = 'operator-clock-secret';
const HOUR = 3600;
const DAY = 24 * HOUR;
const operator = { 'x-sweep-secret': SECRET };

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ env: { SWEEP_SECRET: SECRET } });
});
afterAll(() => ctx.close());

async function clockCall(method: 'GET' | 'POST', headers: Record<string, string>, payload?: object) {
  return ctx.app.inject({
    method,
    url: '/api/v1/sandbox/clock',
    headers,
    ...(payload ? { payload } : {}),
  });
}

async function advance(seconds: number) {
  const response = await clockCall('POST', operator, { advanceSeconds: seconds });
  expect(response.statusCode).toBe(200);
  return response.json().data as { now: string; offsetSeconds: number };
}

describe('the test clock', () => {
  it('needs the operator secret, as the sweep', async () => {
    for (const headers of [{}, { 'x-sweep-secret': 'wrong' }, (await signup(ctx.app)).headers]) {
      expect(errorOf(await clockCall('GET', headers))).toMatchObject({
        status: 401,
        code: 'unauthenticated',
      });
      expect(errorOf(await clockCall('POST', headers, { advanceSeconds: 60 }))).toMatchObject({
        status: 401,
        code: 'unauthenticated',
      });
    }
  });

  it('moves forward only, by 1 second to 400 days a call', async () => {
    const before = (await clockCall('GET', operator)).json().data;
    for (const advanceSeconds of [0, -60, 400 * DAY + 1, 1.5, '60']) {
      expect(errorOf(await clockCall('POST', operator, { advanceSeconds }))).toMatchObject({
        status: 400,
        code: 'validation_error',
      });
    }
    expect((await clockCall('GET', operator)).json().data.offsetSeconds).toBe(before.offsetSeconds);
    const moved = await advance(HOUR);
    expect(moved.offsetSeconds).toBe(before.offsetSeconds + HOUR);
    expect(Date.parse(moved.now) - Date.now()).toBeGreaterThanOrEqual(moved.offsetSeconds * 1000 - 5000);
    const read = (await clockCall('GET', operator)).json().data;
    expect(read.offsetSeconds).toBe(moved.offsetSeconds);
    expect(Date.parse(read.now)).toBeGreaterThanOrEqual(Date.parse(moved.now));
    // The probe and every other reader of time see it.
    const probe = (await ctx.app.inject({ url: '/api/v1/sandbox' })).json();
    expect(Date.parse(probe.timestamp)).toBeGreaterThanOrEqual(Date.parse(moved.now));
  });

  it('dates rows the code leaves to their defaults on the same clock (sealpay_now)', async () => {
    const { offsetSeconds } = (await clockCall('GET', operator)).json().data;
    expect(offsetSeconds).toBeGreaterThan(0);
    const [row] = await rows<{ ahead: number }>(
      ctx.deps.database.db,
      sql`select extract(epoch from sealpay_now() - now())::float8 as ahead`,
    );
    expect(Number(row?.ahead)).toBe(offsetSeconds);
  });

  it('expires a 1-day API key at 25 hours: 401 invalid_api_key', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller, { name: 'one day', expiresInDays: 1 });
    expect((await ctx.app.inject({ url: '/api/v1/wallets', headers: key.headers })).statusCode).toBe(200);
    await advance(23 * HOUR);
    expect((await ctx.app.inject({ url: '/api/v1/wallets', headers: key.headers })).statusCode).toBe(200);
    await advance(2 * HOUR);
    expect(errorOf(await ctx.app.inject({ url: '/api/v1/wallets', headers: key.headers }))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
  });

  it('ends a session at 24 hours: 401 session_expired', async () => {
    const caller = await signup(ctx.app);
    await advance(24 * HOUR - 60);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers })).statusCode).toBe(200);
    await advance(61);
    expect(errorOf(await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers }))).toMatchObject({
      status: 401,
      code: 'session_expired',
    });
  });

  it('leaves TOTP codes on real time: an authenticator app does not know the test clock', async () => {
    await advance(HOUR);
    const caller = await signup(ctx.app);
    const setup = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/me/totp/setup',
      headers: caller.headers,
    });
    const secret = setup.json().data.secret as string;
    const enable = (code: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/api/v1/me/totp/enable',
        headers: caller.headers,
        payload: { code },
      });
    expect(errorOf(await enable(totpCode(secret, ctx.deps.clock.now())))).toMatchObject({
      code: 'invalid_totp_code',
    });
    expect((await enable(totpCode(secret, ctx.clock.now()))).statusCode).toBe(200);
  });

  it('opens a new window of a budget: a limited principal is served again once the clock passes it', async () => {
    const limited = await createTestContext({
      env: { SWEEP_SECRET: SECRET, RATE_LIMIT_READS_PER_MINUTE: '2' },
    });
    try {
      const caller = await signup(limited.app);
      toWindowStart(limited.clock, 60_000);
      const read = () => limited.app.inject({ url: '/api/v1/wallets', headers: caller.headers });
      expect((await read()).statusCode).toBe(200);
      expect((await read()).statusCode).toBe(200);
      expect(errorOf(await read())).toMatchObject({ status: 429, code: 'rate_limited' });
      const moved = await limited.app.inject({
        method: 'POST',
        url: '/api/v1/sandbox/clock',
        headers: operator,
        payload: { advanceSeconds: 61 },
      });
      expect(moved.statusCode).toBe(200);
      expect((await read()).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  }, 180_000);

  it('is seen by every process on the database, and never moves a process back', async () => {
    const { database, drop } = await openTestDatabase();
    try {
      await database.migrate();
      const api = await DatabaseClock.open(database.db, systemClock, { shared: true });
      const worker = await DatabaseClock.open(database.db, systemClock, { shared: true });
      expect(worker.offsetSeconds).toBe(0);
      await api.advance(DAY);
      await api.advance(HOUR);
      await worker.refresh();
      expect(worker.offsetSeconds).toBe(DAY + HOUR);
      expect(worker.now().getTime() - Date.now()).toBeGreaterThanOrEqual((DAY + HOUR) * 1000 - 1000);
      // A row written behind its back cannot take it back: the offset only grows in the table and in a process.
      await expect(
        database.db.execute(sql`update test_clock set offset_seconds = -1 where id = 1`),
      ).rejects.toThrow();
      await database.db.execute(sql`update test_clock set offset_seconds = 60 where id = 1`);
      await worker.refresh();
      expect(worker.offsetSeconds).toBe(DAY + HOUR);
    } finally {
      await database.close();
      await drop();
    }
  }, 180_000);
});

describe('the test clock in production', () => {
  let production: TestContext;
  beforeAll(async () => {
    production = await createTestContext({
      env: { NETWORK: 'mainnet', MASTER_KEY: randomBytes(32).toString('hex'), SWEEP_SECRET: SECRET },
    });
  });
  afterAll(() => production.close());

  it('is 404 not_found, with or without the secret, and absent from the document', async () => {
    for (const method of ['GET', 'POST'] as const) {
      for (const headers of [{}, operator]) {
        const response = await production.app.inject({
          method,
          url: '/api/v1/sandbox/clock',
          headers,
          ...(method === 'POST' ? { payload: { advanceSeconds: 60 } } : {}),
        });
        expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
      }
    }
    expect(production.deps.testClock).toBeNull();
    const document = (await production.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(document.paths['/sandbox/clock']).toBeUndefined();
  });
});
