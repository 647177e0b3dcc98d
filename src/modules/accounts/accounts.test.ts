import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  createTestContext,
  errorOf,
  PASSWORD,
  sessionCookieOf,
  signup,
  type TestContext,
  toWindowStart,
} from '../../../test/harness.ts';
import { runAccountsCommand } from './accounts.cli.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function login(email: string, password: string, ip = '192.0.2.1') {
  return ctx.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email, password },
    remoteAddress: ip,
  });
}

describe('signup', () => {
  it('creates the account, answers 201 {user} and sets an httpOnly SameSite=Lax session cookie for 24 h', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'Ada@Example.com', password: PASSWORD, name: 'Ada', company: 'Engines' },
    });
    expect(response.statusCode).toBe(201);
    const user = response.json().data.user;
    expect(user).toMatchObject({
      email: 'Ada@Example.com',
      name: 'Ada',
      company: 'Engines',
      mustChangePassword: false,
      totpEnabled: false,
      recoveryCodesRemaining: 0,
    });
    expect(Object.keys(user).sort()).toEqual([
      'company',
      'createdAt',
      'email',
      'id',
      'lastLoginAt',
      'mustChangePassword',
      'name',
      'recoveryCodesRemaining',
      'totpEnabled',
    ]);
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(/svc_session=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const expires = new Date(/Expires=([^;]+)/.exec(cookie)?.[1] ?? '').getTime();
    expect(Math.abs(expires - (ctx.clock.now().getTime() + 86_400_000))).toBeLessThan(2000);
  });

  it('refuses a taken email, in any case, with 409 email_taken', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'ada@example.COM', password: PASSWORD },
    });
    expect(response.statusCode).toBe(409);
    expect(errorOf(response).code).toBe('email_taken');
  });

  it.each(['short1A', 'alllowercase1', 'ALLUPPERCASE1', 'NoDigitsHereAtAll', `A1${'a'.repeat(199)}`])(
    'refuses the weak password %s with 400 weak_password',
    async (password) => {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email: 'weak@example.com', password },
      });
      expect(response.statusCode).toBe(400);
      expect(errorOf(response).code).toBe('weak_password');
    },
  );

  it('is closed with 403 signup_closed when SIGNUP=closed', async () => {
    const closed = await createTestContext({ env: { SIGNUP: 'closed' } });
    try {
      const response = await closed.app.inject({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email: 'x@example.com', password: PASSWORD },
      });
      expect(response.statusCode).toBe(403);
      expect(errorOf(response).code).toBe('signup_closed');
    } finally {
      await closed.close();
    }
  });

  it('limits self-service signup to 30 per hour per IP', async () => {
    const ip = '198.51.100.77';
    for (let i = 0; i < 30; i += 1) {
      const ok = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email: `burst${i}@example.com`, password: 'x' },
        remoteAddress: ip,
      });
      expect(ok.statusCode).toBe(400);
    }
    const limited = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'burst-last@example.com', password: PASSWORD },
      remoteAddress: ip,
    });
    expect(limited.statusCode).toBe(429);
    expect(errorOf(limited).code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('login, session, logout', () => {
  it('logs in with the right password and stamps lastLoginAt', async () => {
    const caller = await signup(ctx.app);
    const response = await login(caller.email.toUpperCase(), caller.password);
    expect(response.statusCode).toBe(200);
    expect(response.json().data.user.lastLoginAt).not.toBeNull();
    const session = await ctx.app.inject({
      url: '/api/v1/auth/session',
      headers: { cookie: sessionCookieOf(response.headers['set-cookie']) },
    });
    expect(session.json().data.principal).toMatchObject({
      kind: 'session',
      expiresAt: expect.stringMatching(/Z$/),
    });
  });

  it('answers a wrong password and an unknown email alike: 401 invalid_credentials', async () => {
    const caller = await signup(ctx.app);
    const wrong = await login(caller.email, 'Wrong-Password-1', '192.0.2.10');
    const unknown = await login('nobody@example.com', 'Wrong-Password-1', '192.0.2.10');
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(errorOf(response)).toMatchObject({
        code: 'invalid_credentials',
        message: 'The email or password is incorrect.',
      });
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  it("answers a disabled account's right and wrong password alike: 403 account_disabled, the same budget spent", async () => {
    const caller = await signup(ctx.app);
    await runAccountsCommand(ctx.deps, 'disable', { email: caller.email });
    toWindowStart(ctx.clock, 15 * 60_000);
    const answers = [];
    for (const [password, ip] of [
      [caller.password, '192.0.2.11'],
      ['Wrong-Password-1', '192.0.2.12'],
    ] as const) {
      const response = await login(caller.email, password, ip);
      // What the next attempt from the same IP is told of its budget: a right password must not be spared.
      const next = await login(caller.email, password, ip);
      answers.push({
        status: response.statusCode,
        body: response.json(),
        cookie: response.headers['set-cookie'],
        remaining: next.headers['ratelimit-remaining'],
      });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toMatchObject({ status: 403, body: { error: { code: 'account_disabled' } } });
  });

  it('locks an IP out after 10 failures in 15 minutes, indistinguishably, then lets it in again', async () => {
    const caller = await signup(ctx.app);
    toWindowStart(ctx.clock, 15 * 60_000);
    const ip = '192.0.2.99';
    for (let i = 0; i < 10; i += 1)
      expect((await login(caller.email, 'Wrong-Password-1', ip)).statusCode).toBe(401);
    const locked = await login(caller.email, caller.password, ip);
    expect(locked.statusCode).toBe(401);
    expect(errorOf(locked).code).toBe('invalid_credentials');
    expect(locked.headers['set-cookie']).toBeUndefined();
    expect((await login(caller.email, caller.password, '192.0.2.98')).statusCode).toBe(200);
    ctx.clock.advance(15 * 60_000);
    expect((await login(caller.email, caller.password, ip)).statusCode).toBe(200);
  });

  it('logout revokes the session: the cookie then answers 401 session_expired', async () => {
    const caller = await signup(ctx.app);
    const out = await ctx.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: caller.headers });
    expect(out.statusCode).toBe(200);
    expect(out.json().data).toEqual({ loggedOut: true });
    expect(String(out.headers['set-cookie'])).toMatch(/svc_session=;/);
    const after = await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    expect(after.statusCode).toBe(401);
    expect(errorOf(after).code).toBe('session_expired');
  });

  it('logout is session-only', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: key.headers,
    });
    expect(response.statusCode).toBe(403);
    expect(errorOf(response).code).toBe('session_required');
  });

  it('expires a session after 24 hours', async () => {
    const caller = await signup(ctx.app);
    ctx.clock.advance(24 * 60 * 60_000 + 1000);
    const response = await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    expect(response.statusCode).toBe(401);
    expect(errorOf(response).code).toBe('session_expired');
  });

  it('answers a request without credentials with 401 unauthenticated, and a forged cookie with session_expired', async () => {
    expect(errorOf(await ctx.app.inject({ url: '/api/v1/me' })).code).toBe('unauthenticated');
    expect(
      errorOf(await ctx.app.inject({ url: '/api/v1/me', headers: { cookie: 'svc_session=forged' } })).code,
    ).toBe('session_expired');
  });
});

describe('profile', () => {
  it('PATCH /me updates name and company', async () => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: caller.headers,
      payload: { company: 'Sealed Ltd' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.user.company).toBe('Sealed Ltd');
    const me = await ctx.app.inject({ url: '/api/v1/me', headers: caller.headers });
    expect(me.json().data.user.company).toBe('Sealed Ltd');
  });

  it('PATCH /me with neither field is 400 validation_error with details', async () => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: caller.headers,
      payload: {},
    });
    const error = errorOf(response);
    expect(error.code).toBe('validation_error');
    expect(error.details).toEqual([{ path: '', message: expect.any(String) }]);
  });

  it('PATCH /me works with an API key', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    const response = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: key.headers,
      payload: { name: 'Keyed' },
    });
    expect(response.json().data.user.name).toBe('Keyed');
  });
});

describe('password change', () => {
  it('ends every other session, refreshes this cookie, and the new password logs in', async () => {
    const caller = await signup(ctx.app);
    const other = await login(caller.email, caller.password, '192.0.2.50');
    const otherCookie = sessionCookieOf(other.headers['set-cookie']);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/me/password',
      headers: caller.headers,
      payload: { currentPassword: caller.password, newPassword: 'Brand-New-Pass-2' },
    });
    expect(response.statusCode).toBe(200);
    const fresh = sessionCookieOf(response.headers['set-cookie']);
    expect(fresh).not.toBe(caller.headers.cookie);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: { cookie: fresh } })).statusCode).toBe(200);
    for (const stale of [otherCookie, caller.headers.cookie]) {
      const response = await ctx.app.inject({ url: '/api/v1/me', headers: { cookie: stale } });
      expect(response.statusCode).toBe(401);
      expect(errorOf(response).code).toBe('session_expired');
    }
    expect((await login(caller.email, 'Brand-New-Pass-2', '192.0.2.51')).statusCode).toBe(200);
    expect((await login(caller.email, caller.password, '192.0.2.51')).statusCode).toBe(401);
  });

  it("lets one of concurrent changes win: the others get 401 session_expired, and the winner's password is the one", async () => {
    const caller = await signup(ctx.app);
    const attempts = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        ctx.app.inject({
          method: 'POST',
          url: '/api/v1/me/password',
          headers: caller.headers,
          payload: { currentPassword: caller.password, newPassword: `Concurrent-Pass-${i}x` },
        }),
      ),
    );
    const winners = attempts.flatMap((response, i) => (response.statusCode === 200 ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const response of attempts.filter((response) => response.statusCode !== 200)) {
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'session_expired' });
    }
    const winner = winners[0] as number;
    for (let i = 0; i < attempts.length; i++) {
      const response = await login(caller.email, `Concurrent-Pass-${i}x`, '192.0.2.52');
      expect(response.statusCode).toBe(i === winner ? 200 : 401);
    }
  });

  it('refuses a weak new password and a wrong current one', async () => {
    const caller = await signup(ctx.app);
    const weak = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/me/password',
      headers: caller.headers,
      payload: { currentPassword: caller.password, newPassword: 'weak' },
    });
    expect(errorOf(weak)).toMatchObject({ status: 400, code: 'weak_password' });
    const wrong = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/me/password',
      headers: caller.headers,
      payload: { currentPassword: 'Not-The-One-1', newPassword: 'Brand-New-Pass-2' },
    });
    expect(errorOf(wrong)).toMatchObject({ status: 401, code: 'invalid_credentials' });
  });

  it('limits guessing the current password per account: 10 attempts in 15 minutes, then 429 even for the right one', async () => {
    const caller = await signup(ctx.app);
    const other = await login(caller.email, caller.password, '192.0.2.60');
    const otherSession = { cookie: sessionCookieOf(other.headers['set-cookie']) };
    const change = (headers: Record<string, string>, currentPassword: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/api/v1/me/password',
        headers,
        payload: { currentPassword, newPassword: 'Brand-New-Pass-2' },
      });
    toWindowStart(ctx.clock, 15 * 60_000);
    // Concurrent guesses are counted before the slow hash, so none slips past the budget.
    const guesses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => change(caller.headers, `Wrong-Guess-${i}a`)),
    );
    const codes = guesses.map((response) => `${response.statusCode} ${errorOf(response).code}`).sort();
    expect(codes).toEqual([
      ...Array(10).fill('401 invalid_credentials'),
      '429 rate_limited',
      '429 rate_limited',
    ]);
    // Per account: another session of the same account is limited too, and the right password does not pass.
    for (const headers of [caller.headers, otherSession]) {
      const limited = await change(headers, caller.password);
      expect(errorOf(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect((await login(caller.email, caller.password, '192.0.2.61')).statusCode).toBe(200);
    const stranger = await signup(ctx.app);
    expect((await change(stranger.headers, stranger.password)).statusCode).toBe(200);
    ctx.clock.advance(15 * 60_000);
    expect((await change(caller.headers, caller.password)).statusCode).toBe(200);
  });

  it('is session-only', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/me/password',
      headers: key.headers,
      payload: { currentPassword: caller.password, newPassword: 'Brand-New-Pass-2' },
    });
    expect(errorOf(response)).toMatchObject({ status: 403, code: 'session_required' });
  });
});

describe('operator accounts command', () => {
  it('creates an account with a temporary password that must be changed, and disables it', async () => {
    const output = await runAccountsCommand(ctx.deps, 'create', { email: 'ops@example.com', name: 'Ops' });
    const password = /temporary password[^:]*: (\S+)/.exec(output)?.[1] ?? '';
    const response = await login('ops@example.com', password, '192.0.2.60');
    expect(response.statusCode).toBe(200);
    expect(response.json().data.user.mustChangePassword).toBe(true);
    const cookie = sessionCookieOf(response.headers['set-cookie']);
    const key = await apiKeyOf(ctx.app, { headers: { cookie }, userId: '', email: '', password });

    await runAccountsCommand(ctx.deps, 'disable', { email: 'ops@example.com' });
    for (const headers of [{ cookie }, key.headers]) {
      const denied = await ctx.app.inject({ url: '/api/v1/me', headers });
      expect(errorOf(denied)).toMatchObject({ status: 403, code: 'account_disabled' });
    }
    const loginDisabled = await login('ops@example.com', password, '192.0.2.61');
    expect(errorOf(loginDisabled)).toMatchObject({ status: 403, code: 'account_disabled' });

    await runAccountsCommand(ctx.deps, 'enable', { email: 'ops@example.com' });
    // Disabling ended every session: enabled again, the old cookie stays ended; the API key works again (by design).
    const oldSession = await ctx.app.inject({ url: '/api/v1/me', headers: { cookie } });
    expect(errorOf(oldSession)).toMatchObject({ status: 401, code: 'session_expired' });
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: key.headers })).statusCode).toBe(200);
    const again = await login('ops@example.com', password, '192.0.2.62');
    expect(again.statusCode).toBe(200);
    const fresh = sessionCookieOf(again.headers['set-cookie']);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: { cookie: fresh } })).statusCode).toBe(200);
  });

  it('ends the sessions a disable finds, even one the credential cache holds', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    // Both credentials used just now: resolved and kept in the embedded database's credential cache.
    for (const headers of [caller.headers, key.headers]) {
      expect((await ctx.app.inject({ url: '/api/v1/me', headers })).statusCode).toBe(200);
    }
    await runAccountsCommand(ctx.deps, 'disable', { email: caller.email });
    await runAccountsCommand(ctx.deps, 'enable', { email: caller.email });
    const session = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: caller.headers,
      payload: { name: 'Back' },
    });
    expect(errorOf(session)).toMatchObject({ status: 401, code: 'session_expired' });
    const keyed = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: key.headers,
      payload: { name: 'Back' },
    });
    expect(keyed.statusCode).toBe(200);
  });
});
