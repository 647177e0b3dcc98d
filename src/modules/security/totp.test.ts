import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  sessionCookieOf,
  signup,
  type TestContext,
} from '../../../test/harness.ts';
import { totpCode, wrongTotpCode } from '../../../test/support/totp.ts';
import { pendingTotpLogins, users } from '../../db/schema/index.ts';
import { runAccountsCommand } from '../accounts/accounts.cli.ts';
import { matchTotpStep } from './totp.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const STEP = 30_000;
/**
 * The test clock may run with real time: each test starts in the middle of a 30-second step, so a code computed
 * here is still in the same step when the server checks it.
 */
beforeEach(() => {
  const into = ctx.clock.now().getTime() % STEP;
  ctx.clock.advance((STEP + STEP / 2 - into) % STEP);
});
let ipCounter = 0;
/** A fresh client IP, so the per-IP login limit of one test does not leak into another. */
function freshIp(): string {
  ipCounter += 1;
  return `203.0.113.${ipCounter}`;
}

async function setup(caller: Caller): Promise<string> {
  const response = await api.post('/me/totp/setup', { headers: caller.headers });
  expect(response.statusCode).toBe(200);
  return response.json().data.secret as string;
}

/** A fresh account with TOTP on; the step of the enabling code is spent, so the clock moves one step on. */
async function enrolled(): Promise<{ caller: Caller; secret: string }> {
  const caller = await signup(ctx.app);
  const secret = await setup(caller);
  const enabled = await api.post('/me/totp/enable', {
    body: { code: totpCode(secret, ctx.clock.now()) },
    headers: caller.headers,
  });
  expect(enabled.statusCode).toBe(200);
  ctx.clock.advance(STEP);
  return { caller, secret };
}

async function passwordStep(caller: Caller, ip: string) {
  return api.post('/auth/login', {
    body: { email: caller.email, password: caller.password },
    remoteAddress: ip,
  });
}

async function pendingTokenOf(caller: Caller, ip: string): Promise<string> {
  const response = await passwordStep(caller, ip);
  expect(response.statusCode).toBe(200);
  return response.json().data.pendingToken as string;
}

async function userRow(id: string) {
  const [row] = await ctx.deps.database.db.select().from(users).where(eq(users.id, id));
  if (!row) throw new Error('no user');
  return row;
}

describe('TOTP codes', () => {
  // RFC 6238 appendix B: the ASCII secret "12345678901234567890", SHA-1; the last 6 of the 8-digit values.
  const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  const vectors: [number, string][] = [
    [59, '287082'],
    [1111111109, '081804'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ];

  it('the test generator and the server agree with the RFC 6238 vectors', () => {
    for (const [seconds, code] of vectors) {
      const at = new Date(seconds * 1000);
      expect(totpCode(RFC_SECRET, at)).toBe(code);
      expect(matchTotpStep(RFC_SECRET, code, at, null)).toBe(Math.floor(seconds / 30));
    }
  });

  it('matches ±1 step, never a step at or below the last accepted one', () => {
    const at = new Date(1234567890 * 1000);
    const step = Math.floor(1234567890 / 30);
    expect(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, at, -1), at, null)).toBe(step - 1);
    expect(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, at, 1), at, null)).toBe(step + 1);
    expect(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, at, 2), at, null)).toBeNull();
    expect(matchTotpStep(RFC_SECRET, '005924', at, step - 1)).toBe(step);
    expect(matchTotpStep(RFC_SECRET, '005924', at, step)).toBeNull();
    expect(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, at, -1), at, step)).toBeNull();
    expect(matchTotpStep(RFC_SECRET, '5924', at, null)).toBeNull();
  });
});

describe('TOTP setup', () => {
  it('returns a base32 secret and its otpauth URI, and keeps the secret sealed as the pending secret', async () => {
    const caller = await signup(ctx.app);
    const response = await api.post('/me/totp/setup', { headers: caller.headers });
    expect(response.statusCode).toBe(200);
    const { secret, otpauthUrl } = response.json().data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('sealpay');
    expect(url.searchParams.get('algorithm')).toBe('SHA1');
    expect(url.searchParams.get('digits')).toBe('6');
    expect(url.searchParams.get('period')).toBe('30');
    expect(decodeURIComponent(url.pathname)).toContain(caller.email);
    const row = await userRow(caller.userId);
    expect(row.totpEnabled).toBe(false);
    expect(row.totpSecretSealed).toBeNull();
    expect(row.totpPendingSecretSealed).toMatch(/^v1\./);
    expect(row.totpPendingSecretSealed).not.toContain(secret);
    expect(
      ctx.deps.keyring.openText(row.totpPendingSecretSealed as string, `totp-secret:${caller.userId}`),
    ).toBe(secret);
  });

  it('a second setup replaces the pending secret: codes of the first no longer enable', async () => {
    const caller = await signup(ctx.app);
    const first = await setup(caller);
    const second = await setup(caller);
    expect(second).not.toBe(first);
    const stale = await api.post('/me/totp/enable', {
      body: { code: totpCode(first, ctx.clock.now()) },
      headers: caller.headers,
    });
    expect(stale.statusCode).toBe(400);
    expect(errorOf(stale).code).toBe('invalid_totp_code');
    const fresh = await api.post('/me/totp/enable', {
      body: { code: totpCode(second, ctx.clock.now()) },
      headers: caller.headers,
    });
    expect(fresh.statusCode).toBe(200);
  });

  it('answers 400 totp_already_enabled while 2FA is on', async () => {
    const { caller } = await enrolled();
    const response = await api.post('/me/totp/setup', { headers: caller.headers });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'totp_already_enabled' });
  });
});

describe('TOTP enable', () => {
  it('confirms with a live code: {totpEnabled: true, recoveryCodes}, the user shows it, the secret moves to the active slot', async () => {
    const caller = await signup(ctx.app);
    const secret = await setup(caller);
    const at = ctx.clock.now();
    const response = await api.post('/me/totp/enable', {
      body: { code: totpCode(secret, at) },
      headers: caller.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      ok: true,
      data: { totpEnabled: true, recoveryCodes: expect.any(Array) },
    });
    expect(response.json().data.recoveryCodes).toHaveLength(10);
    const me = await api.get('/me', { headers: caller.headers });
    expect(me.json().data.user).toMatchObject({ totpEnabled: true, recoveryCodesRemaining: 10 });
    const row = await userRow(caller.userId);
    expect(row.totpPendingSecretSealed).toBeNull();
    expect(row.totpSecretSealed).toMatch(/^v1\./);
    expect(row.totpLastStep).toBe(Math.floor(at.getTime() / STEP));
  });

  it('answers 400 totp_not_configured without a pending enrollment, and while already enabled', async () => {
    const caller = await signup(ctx.app);
    const none = await api.post('/me/totp/enable', { body: { code: '123456' }, headers: caller.headers });
    expect(errorOf(none)).toMatchObject({ status: 400, code: 'totp_not_configured' });
    const { caller: on, secret } = await enrolled();
    const again = await api.post('/me/totp/enable', {
      body: { code: totpCode(secret, ctx.clock.now()) },
      headers: on.headers,
    });
    expect(errorOf(again)).toMatchObject({ status: 400, code: 'totp_not_configured' });
  });

  it('answers 400 invalid_totp_code for a wrong code and leaves 2FA off', async () => {
    const caller = await signup(ctx.app);
    const secret = await setup(caller);
    const wrong = wrongTotpCode(secret, ctx.clock.now());
    const response = await api.post('/me/totp/enable', { body: { code: wrong }, headers: caller.headers });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_totp_code' });
    expect((await userRow(caller.userId)).totpEnabled).toBe(false);
  });

  it('validates the code format (^[0-9]{6}$) with 400 validation_error', async () => {
    const caller = await signup(ctx.app);
    await setup(caller);
    for (const code of ['12345', '1234567', 'abcdef', '']) {
      const response = await api.post('/me/totp/enable', { body: { code }, headers: caller.headers });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
    }
    // Without the code the document requires: sent as written.
    const missing = await api.raw('POST', '/me/totp/enable', { payload: {}, headers: caller.headers });
    expect(errorOf(missing)).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('accepts a code one step early or late and refuses two steps away', async () => {
    for (const offset of [-1, 1]) {
      const caller = await signup(ctx.app);
      const secret = await setup(caller);
      const response = await api.post('/me/totp/enable', {
        body: { code: totpCode(secret, ctx.clock.now(), offset) },
        headers: caller.headers,
      });
      expect(response.statusCode).toBe(200);
    }
    for (const offset of [-2, 2]) {
      const caller = await signup(ctx.app);
      const secret = await setup(caller);
      const response = await api.post('/me/totp/enable', {
        body: { code: totpCode(secret, ctx.clock.now(), offset) },
        headers: caller.headers,
      });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_totp_code' });
    }
  });
});

describe('two-step login', () => {
  it('setup → enable → login answers {totpRequired, pendingToken} without a cookie → /auth/login/totp mints the session', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const first = await passwordStep(caller, ip);
    expect(first.statusCode).toBe(200);
    const data = first.json().data;
    expect(Object.keys(data).sort()).toEqual(['pendingToken', 'totpRequired']);
    expect(data.totpRequired).toBe(true);
    expect(data.pendingToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.headers['set-cookie']).toBeUndefined();
    // Only the token's hash is stored.
    const rows = await ctx.deps.database.db
      .select()
      .from(pendingTotpLogins)
      .where(eq(pendingTotpLogins.userId, caller.userId));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).not.toBe(data.pendingToken);

    const before = ctx.clock.now().getTime();
    const second = await api.post('/auth/login/totp', {
      body: { pendingToken: data.pendingToken, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(second.statusCode).toBe(200);
    expect(second.json().data.user).toMatchObject({ id: caller.userId, totpEnabled: true });
    const lastLoginAt = Date.parse(second.json().data.user.lastLoginAt);
    expect(lastLoginAt).toBeGreaterThanOrEqual(before);
    expect(lastLoginAt).toBeLessThanOrEqual(ctx.clock.now().getTime());
    const cookie = sessionCookieOf(second.headers['set-cookie']);
    const session = await api.get('/auth/session', { headers: { cookie } });
    expect(session.statusCode).toBe(200);
    expect(session.json().data.principal.kind).toBe('session');
  });

  it('refuses a wrong code with 401 invalid_totp_code and no cookie; the token survives a few mistakes', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const pendingToken = await pendingTokenOf(caller, ip);
    const right = totpCode(secret, ctx.clock.now());
    const wrong = wrongTotpCode(secret, ctx.clock.now());
    const response = await api.post('/auth/login/totp', {
      body: { pendingToken, code: wrong },
      remoteAddress: ip,
    });
    expect(errorOf(response)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    expect(response.headers['set-cookie']).toBeUndefined();
    const retry = await api.post('/auth/login/totp', {
      body: { pendingToken, code: right },
      remoteAddress: ip,
    });
    expect(retry.statusCode).toBe(200);
  });

  it('burns the pending token after five wrong codes', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const pendingToken = await pendingTokenOf(caller, ip);
    const right = totpCode(secret, ctx.clock.now());
    const wrong = wrongTotpCode(secret, ctx.clock.now());
    for (let i = 0; i < 5; i += 1) {
      const response = await api.post('/auth/login/totp', {
        body: { pendingToken, code: wrong },
        remoteAddress: ip,
      });
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    }
    const late = await api.post('/auth/login/totp', {
      body: { pendingToken, code: right },
      remoteAddress: ip,
    });
    expect(errorOf(late)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    expect(late.headers['set-cookie']).toBeUndefined();
  });

  it('pending tokens are single use: a second exchange is 401 invalid_totp_code', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const pendingToken = await pendingTokenOf(caller, ip);
    const ok = await api.post('/auth/login/totp', {
      body: { pendingToken, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(ok.statusCode).toBe(200);
    ctx.clock.advance(STEP);
    const reused = await api.post('/auth/login/totp', {
      body: { pendingToken, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(errorOf(reused)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    expect(reused.headers['set-cookie']).toBeUndefined();
  });

  it('pending tokens live 5 minutes', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const fresh = await pendingTokenOf(caller, ip);
    ctx.clock.advance(5 * 60_000 - 60_000); // a minute short, whatever a stalled machine adds
    const inTime = await api.post('/auth/login/totp', {
      body: { pendingToken: fresh, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(inTime.statusCode).toBe(200);
    const stale = await pendingTokenOf(caller, ip);
    ctx.clock.advance(5 * 60_000 + 1000);
    const late = await api.post('/auth/login/totp', {
      body: { pendingToken: stale, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(errorOf(late)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
  });

  it('an unknown pending token is 401 invalid_totp_code', async () => {
    const { secret } = await enrolled();
    const response = await api.post('/auth/login/totp', {
      body: { pendingToken: 'A'.repeat(43), code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: freshIp(),
    });
    expect(errorOf(response)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
  });

  it('refuses a replayed code inside its window: the code that enabled 2FA, and the code of a previous login', async () => {
    const caller = await signup(ctx.app);
    const secret = await setup(caller);
    const enabling = totpCode(secret, ctx.clock.now());
    expect(
      (await api.post('/me/totp/enable', { body: { code: enabling }, headers: caller.headers })).statusCode,
    ).toBe(200);
    const ip = freshIp();
    // Same step: the enabling code is spent.
    const replayEnable = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code: enabling },
      remoteAddress: ip,
    });
    expect(errorOf(replayEnable)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    // 10 seconds on, still inside that code's step, the code is still refused.
    ctx.clock.advance(10_000);
    const stillSpent = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code: enabling },
      remoteAddress: ip,
    });
    expect(errorOf(stillSpent)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    // The next step's code works once …
    ctx.clock.advance(STEP - 10_000);
    const code = totpCode(secret, ctx.clock.now());
    const first = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code },
      remoteAddress: ip,
    });
    expect(first.statusCode).toBe(200);
    // … and a second login with the same code (a fresh pending token) is refused.
    const replay = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code },
      remoteAddress: ip,
    });
    expect(errorOf(replay)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    expect(replay.headers['set-cookie']).toBeUndefined();
    // An older code (the previous step, inside the window) is refused too: steps only move forward.
    const older = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code: totpCode(secret, ctx.clock.now(), -1) },
      remoteAddress: ip,
    });
    expect(errorOf(older)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
  });

  it('brute force: after 10 failures per 15 minutes an IP gets 401 even with the right code, and no session', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const right = () => totpCode(secret, ctx.clock.now());
    // Ten wrong codes, spread over pending tokens (each tolerates five).
    let pendingToken = await pendingTokenOf(caller, ip);
    for (let i = 0; i < 10; i += 1) {
      if (i === 5) pendingToken = await pendingTokenOf(caller, ip);
      const response = await api.post('/auth/login/totp', {
        body: { pendingToken, code: wrongTotpCode(secret, ctx.clock.now()) },
        remoteAddress: ip,
      });
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    }
    // Locked out: the password step is refused …
    const password = await passwordStep(caller, ip);
    expect(errorOf(password)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    // … and a valid pending token with the right code gets no session either.
    const other = freshIp();
    const token = await pendingTokenOf(caller, other);
    const locked = await api.post('/auth/login/totp', {
      body: { pendingToken: token, code: right() },
      remoteAddress: ip,
    });
    expect(errorOf(locked)).toMatchObject({ status: 401, code: 'invalid_totp_code' });
    expect(locked.headers['set-cookie']).toBeUndefined();
    // The code was not spent by the refused attempt: the same token and code work from another IP.
    const elsewhere = await api.post('/auth/login/totp', {
      body: { pendingToken: token, code: right() },
      remoteAddress: other,
    });
    expect(elsewhere.statusCode).toBe(200);
    // After the window the IP may try again.
    ctx.clock.advance(15 * 60_000);
    const later = await api.post('/auth/login/totp', {
      body: { pendingToken: await pendingTokenOf(caller, ip), code: right() },
      remoteAddress: ip,
    });
    expect(later.statusCode).toBe(200);
  });

  it('a disabled account gets 403 account_disabled at the second step', async () => {
    const { caller, secret } = await enrolled();
    const ip = freshIp();
    const pendingToken = await pendingTokenOf(caller, ip);
    await runAccountsCommand(ctx.deps, 'disable', { email: caller.email });
    const response = await api.post('/auth/login/totp', {
      body: { pendingToken, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(errorOf(response)).toMatchObject({ status: 403, code: 'account_disabled' });
    expect(response.headers['set-cookie']).toBeUndefined();
  });

  it('validates the body with 400 validation_error', async () => {
    // Without the pendingToken the document requires: sent as written.
    const response = await api.raw('POST', '/auth/login/totp', {
      payload: { code: '123456' },
      remoteAddress: freshIp(),
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
  });
});

describe('TOTP disable', () => {
  it('needs the password (401 invalid_credentials) and a live code (400 invalid_totp_code); then login is one step again', async () => {
    const { caller, secret } = await enrolled();
    const code = totpCode(secret, ctx.clock.now());
    const wrongPassword = await api.post('/me/totp/disable', {
      body: { password: 'Wrong-Password-1', code },
      headers: caller.headers,
    });
    expect(errorOf(wrongPassword)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const wrongCode = await api.post('/me/totp/disable', {
      body: { password: caller.password, code: wrongTotpCode(secret, ctx.clock.now()) },
      headers: caller.headers,
    });
    expect(errorOf(wrongCode)).toMatchObject({ status: 400, code: 'invalid_totp_code' });
    expect((await userRow(caller.userId)).totpEnabled).toBe(true);

    const response = await api.post('/me/totp/disable', {
      body: { password: caller.password, code },
      headers: caller.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, data: { totpEnabled: false } });
    const row = await userRow(caller.userId);
    expect(row).toMatchObject({ totpEnabled: false, totpSecretSealed: null, totpPendingSecretSealed: null });

    const login = await passwordStep(caller, freshIp());
    expect(login.statusCode).toBe(200);
    expect(login.json().data.user.id).toBe(caller.userId);
    expect(sessionCookieOf(login.headers['set-cookie'])).toMatch(/^svc_session=/);
  });

  it('counts password attempts per account with POST /me/password: past 10 in 15 minutes, 429 even with the right one', async () => {
    const { caller, secret } = await enrolled();
    const changes = Array.from({ length: 5 }, (_, i) =>
      api.post('/me/password', {
        body: { currentPassword: `Wrong-Guess-${i}a`, newPassword: 'Brand-New-Pass-2' },
        headers: caller.headers,
      }),
    );
    for (const response of await Promise.all(changes)) expect(response.statusCode).toBe(401);
    for (let i = 0; i < 5; i += 1) {
      const wrong = await api.post('/me/totp/disable', {
        body: { password: `Wrong-Guess-${i}b`, code: '000000' },
        headers: caller.headers,
      });
      expect(errorOf(wrong)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    }
    const code = totpCode(secret, ctx.clock.now());
    const limited = await api.post('/me/totp/disable', {
      body: { password: caller.password, code },
      headers: caller.headers,
    });
    expect(errorOf(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await userRow(caller.userId)).totpEnabled).toBe(true);
    ctx.clock.advance(15 * 60_000);
    const later = totpCode(secret, ctx.clock.now());
    expect(
      (
        await api.post('/me/totp/disable', {
          body: { password: caller.password, code: later },
          headers: caller.headers,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('refuses a code spent already (replay) with 400 invalid_totp_code', async () => {
    const caller = await signup(ctx.app);
    const secret = await setup(caller);
    const code = totpCode(secret, ctx.clock.now());
    expect((await api.post('/me/totp/enable', { body: { code }, headers: caller.headers })).statusCode).toBe(
      200,
    );
    const replay = await api.post('/me/totp/disable', {
      body: { password: caller.password, code },
      headers: caller.headers,
    });
    expect(errorOf(replay)).toMatchObject({ status: 400, code: 'invalid_totp_code' });
  });

  it('answers 400 totp_not_configured when 2FA is off', async () => {
    const caller = await signup(ctx.app);
    const response = await api.post('/me/totp/disable', {
      body: { password: caller.password, code: '123456' },
      headers: caller.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'totp_not_configured' });
  });

  it('requires both password and code (400 validation_error)', async () => {
    const { caller } = await enrolled();
    for (const body of [{ password: caller.password }, { code: '123456' }, {}]) {
      // Bodies the document refuses: sent as written.
      const response = await api.raw('POST', '/me/totp/disable', { payload: body, headers: caller.headers });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
    }
  });
});

describe('session only', () => {
  it('setup, enable and disable answer 403 session_required to an API key', async () => {
    const caller = await signup(ctx.app);
    const { headers } = await apiKeyOf(ctx.app, caller);
    for (const [url, body] of [
      ['/me/totp/setup', undefined],
      ['/me/totp/enable', { code: '123456' }],
      ['/me/totp/disable', { password: caller.password, code: '123456' }],
    ] as const) {
      // A table of routes: each sent as written.
      const response = await api.raw('POST', url, { payload: body, headers });
      expect(errorOf(response)).toMatchObject({ status: 403, code: 'session_required' });
    }
    expect((await userRow(caller.userId)).totpPendingSecretSealed).toBeNull();
  });

  it('answers 401 unauthenticated without a credential', async () => {
    const response = await api.post('/me/totp/setup');
    expect(errorOf(response)).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});
