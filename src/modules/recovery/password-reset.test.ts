import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  toWindowStart,
} from '../../../test/harness.ts';
import { totpCode } from '../../../test/support/totp.ts';
import { emailOutbox, passwordResets } from '../../db/schema/index.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { runAccountsCommand } from '../accounts/accounts.cli.ts';
import { deliverDueEmails } from '../notifications/notifications.service.ts';
import { FORGOT_ANSWER_FLOOR_MS, RESETS_PER_ADDRESS_PER_HOUR } from './password-reset.service.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const NEW_PASSWORD = 'Brand-New-Password-7';
let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `192.0.2.${ipCounter}`;
}

interface MailboxMessage {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
}

/** Sends what the outbox holds (the worker's job), then reads the local mailbox for `to`. */
async function inbox(to: string): Promise<MailboxMessage[]> {
  await deliverDueEmails(ctx.deps, quiet);
  const response = await api.get('/sandbox/mailbox', { query: { to } });
  expect(response.statusCode).toBe(200);
  return response.json().data.messages;
}

function tokenOf(message: MailboxMessage): string {
  const match = /#\/reset-password\?token=([A-Za-z0-9_%-]+)/.exec(message.text);
  if (!match) throw new Error(`no reset link in ${message.text}`);
  return decodeURIComponent(match[1] as string);
}

async function resetToken(caller: Caller): Promise<string> {
  expect(
    (await api.post('/auth/password/forgot', { body: { email: caller.email }, remoteAddress: freshIp() }))
      .statusCode,
  ).toBe(202);
  const [message] = (await inbox(caller.email)).filter((m) => m.subject === 'Reset your sealpay password');
  if (!message) throw new Error('no reset email');
  return tokenOf(message);
}

describe('POST /auth/password/forgot', () => {
  it('answers 202 {accepted: true} alike for an account, an unknown address and a disabled account', async () => {
    const caller = await signup(ctx.app);
    const disabled = await signup(ctx.app);
    await runAccountsCommand(ctx.deps, 'disable', { email: disabled.email });
    const answers = [];
    for (const email of [
      caller.email,
      'nobody-here@example.com',
      disabled.email,
      caller.email.toUpperCase(),
    ]) {
      const started = performance.now();
      const response = await api.post('/auth/password/forgot', { body: { email }, remoteAddress: freshIp() });
      answers.push({ status: response.statusCode, body: response.body, ms: performance.now() - started });
    }
    expect(new Set(answers.map((a) => `${a.status} ${a.body}`))).toEqual(
      new Set(['202 {"ok":true,"data":{"accepted":true}}']),
    );
    for (const answer of answers) expect(answer.ms).toBeGreaterThanOrEqual(FORGOT_ANSWER_FLOOR_MS - 5);
    expect(await inbox('nobody-here@example.com')).toEqual([]);
    expect(await inbox(disabled.email)).toEqual([]);
    // Two links for the account (the address is matched without regard to case).
    expect(await inbox(caller.email)).toHaveLength(2);
  });

  it('emails a link to the web app with a 43-character token kept only as its SHA-256', async () => {
    const caller = await signup(ctx.app);
    const token = await resetToken(caller);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [message] = await inbox(caller.email);
    expect(message?.text).toContain(`${ctx.deps.config.publicOrigin}/#/reset-password?token=`);
    expect(message?.html).toContain('Choose a new password');
    const rows = await ctx.deps.database.db
      .select()
      .from(passwordResets)
      .where(eq(passwordResets.userId, caller.userId));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).toBe(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    // The queued message was sealed, and blanked once sent.
    const outbox = await ctx.deps.database.db
      .select()
      .from(emailOutbox)
      .where(eq(emailOutbox.userId, caller.userId));
    expect(outbox.every((row) => row.sentAt !== null && row.messageSealed === null)).toBe(true);
    expect(JSON.stringify(outbox)).not.toContain(token);
  });

  it('holds the link in the outbox sealed until the worker sends it', async () => {
    const caller = await signup(ctx.app);
    await api.post('/auth/password/forgot', { body: { email: caller.email }, remoteAddress: freshIp() });
    const [row] = await ctx.deps.database.db
      .select()
      .from(emailOutbox)
      .where(eq(emailOutbox.userId, caller.userId));
    expect(row?.kind).toBe('password_reset');
    expect(row?.sentAt).toBeNull();
    expect(row?.messageSealed).toMatch(/^v1\./);
    expect(row?.messageSealed).not.toContain('reset-password');
  });

  it('limits each IP (429 rate_limited) and each address (past 3 an hour: the same answer, no email)', async () => {
    toWindowStart(ctx.clock, 60 * 60_000);
    const ip = freshIp();
    let last = await api.post('/auth/password/forgot', {
      body: { email: 'a@example.com' },
      remoteAddress: ip,
    });
    for (let i = 1; i < ctx.deps.config.rateLimits.passwordResetRequestsPerHour; i++) {
      last = await api.post('/auth/password/forgot', {
        body: { email: `a${i}@example.com` },
        remoteAddress: ip,
      });
    }
    expect(last.statusCode).toBe(202);
    const refused = await api.post('/auth/password/forgot', {
      body: { email: 'b@example.com' },
      remoteAddress: ip,
    });
    expect(errorOf(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused.headers['retry-after']).toBeDefined();

    const caller = await signup(ctx.app);
    for (let i = 0; i < RESETS_PER_ADDRESS_PER_HOUR + 2; i++) {
      expect(
        (await api.post('/auth/password/forgot', { body: { email: caller.email }, remoteAddress: freshIp() }))
          .statusCode,
      ).toBe(202);
    }
    expect(await inbox(caller.email)).toHaveLength(RESETS_PER_ADDRESS_PER_HOUR);
  });

  it('validates the body (400 validation_error)', async () => {
    for (const body of [{}, { email: '' }, { email: 42 }, { email: 'x'.repeat(300) }]) {
      // Bodies the document refuses: sent as written.
      const refused = await api.raw('POST', '/auth/password/forgot', {
        payload: body,
        remoteAddress: freshIp(),
      });
      expect(errorOf(refused)).toMatchObject({
        status: 400,
        code: 'validation_error',
      });
    }
  });
});

describe('POST /auth/password/reset', () => {
  it('sets the new password, ends every session, works once, and tells the account', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    const token = await resetToken(caller);
    const response = await api.post('/auth/password/reset', {
      body: { token, newPassword: NEW_PASSWORD },
      remoteAddress: freshIp(),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, data: { passwordReset: true } });
    expect(response.headers['set-cookie']).toBeUndefined();

    const session = await api.get('/me', { headers: caller.headers });
    expect(errorOf(session)).toMatchObject({ status: 401, code: 'session_expired' });
    // API keys are a separate credential: they stay (the notice tells the owner to review them).
    expect((await api.get('/me', { headers: key.headers })).statusCode).toBe(200);
    const oldPassword = await api.post('/auth/login', {
      body: { email: caller.email, password: caller.password },
      remoteAddress: freshIp(),
    });
    expect(errorOf(oldPassword)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const newPassword = await api.post('/auth/login', {
      body: { email: caller.email, password: NEW_PASSWORD },
      remoteAddress: freshIp(),
    });
    expect(newPassword.statusCode).toBe(200);

    const again = await api.post('/auth/password/reset', {
      body: { token, newPassword: 'Another-Password-8' },
      remoteAddress: freshIp(),
    });
    expect(errorOf(again)).toMatchObject({ status: 400, code: 'invalid_reset_token' });
    const subjects = (await inbox(caller.email)).map((m) => m.subject);
    expect(subjects).toContain('Your sealpay password was changed');
  });

  it('one reset spends every other open link of the account', async () => {
    const caller = await signup(ctx.app);
    const first = await resetToken(caller);
    const second = await resetToken(caller);
    expect(
      (
        await api.post('/auth/password/reset', {
          body: { token: second, newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
    expect(
      errorOf(
        await api.post('/auth/password/reset', {
          body: { token: first, newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        }),
      ),
    ).toMatchObject({
      code: 'invalid_reset_token',
    });
  });

  it('works once under concurrency: of eight resets racing with one token, one succeeds', async () => {
    const caller = await signup(ctx.app);
    const token = await resetToken(caller);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.post('/auth/password/reset', {
          body: { token, newPassword: `Racing-Password-${i}x` },
          remoteAddress: freshIp(),
        }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const answer of answers.filter((a) => a.statusCode !== 200)) {
      expect(errorOf(answer)).toMatchObject({ status: 400, code: 'invalid_reset_token' });
    }
  });

  it('expires after 30 minutes', async () => {
    const caller = await signup(ctx.app);
    const token = await resetToken(caller);
    ctx.clock.advance(30 * 60_000 + 1);
    expect(
      errorOf(
        await api.post('/auth/password/reset', {
          body: { token, newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        }),
      ),
    ).toMatchObject({
      status: 400,
      code: 'invalid_reset_token',
    });
    expect(
      (
        await api.post('/auth/login', {
          body: { email: caller.email, password: caller.password },
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
  });

  it('applies the password policy (400 weak_password) without spending the token', async () => {
    const caller = await signup(ctx.app);
    const token = await resetToken(caller);
    expect(
      errorOf(
        await api.post('/auth/password/reset', {
          body: { token, newPassword: 'short' },
          remoteAddress: freshIp(),
        }),
      ),
    ).toMatchObject({
      status: 400,
      code: 'weak_password',
    });
    expect(
      (
        await api.post('/auth/password/reset', {
          body: { token, newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
  });

  it('refuses unknown tokens and bad bodies', async () => {
    expect(
      errorOf(
        await api.post('/auth/password/reset', {
          body: { token: 'x'.repeat(43), newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        }),
      ),
    ).toMatchObject({
      status: 400,
      code: 'invalid_reset_token',
    });
    for (const body of [
      {},
      { token: 'x' },
      { token: '', newPassword: NEW_PASSWORD },
      { token: 7, newPassword: NEW_PASSWORD },
    ]) {
      // Bodies the document refuses: sent as written.
      const refused = await api.raw('POST', '/auth/password/reset', {
        payload: body,
        remoteAddress: freshIp(),
      });
      expect(errorOf(refused)).toMatchObject({
        status: 400,
        code: 'validation_error',
      });
    }
  });

  it('does not bypass TOTP: the next login still asks for the code', async () => {
    const caller = await signup(ctx.app);
    const setup = await api.post('/me/totp/setup', { headers: caller.headers, remoteAddress: freshIp() });
    const secret = setup.json().data.secret as string;
    expect(
      (
        await api.post('/me/totp/enable', {
          body: { code: totpCode(secret, ctx.clock.now()) },
          headers: caller.headers,
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
    const token = await resetToken(caller);
    expect(
      (
        await api.post('/auth/password/reset', {
          body: { token, newPassword: NEW_PASSWORD },
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
    const login = await api.post('/auth/login', {
      body: { email: caller.email, password: NEW_PASSWORD },
      remoteAddress: freshIp(),
    });
    expect(login.statusCode).toBe(200);
    expect(login.json().data).toMatchObject({ totpRequired: true });
    expect(login.headers['set-cookie']).toBeUndefined();
  });

  it('is not blocked by the login lock-out, and lifts it at that IP for the account it reset alone', async () => {
    const owner = await signup(ctx.app);
    const victim = await signup(ctx.app);
    const bystander = await signup(ctx.app);
    const perWindow = ctx.deps.config.rateLimits.loginFailuresPer15Min;
    toWindowStart(ctx.clock, 15 * 60_000);
    const ip = freshIp();
    const login = (caller: Caller, password: string) =>
      api.post('/auth/login', { body: { email: caller.email, password }, remoteAddress: ip });
    for (let i = 0; i < perWindow; i++) {
      expect(errorOf(await login(victim, `Wrong-Password-${i}`))).toMatchObject({ status: 401 });
    }
    // Locked out: the right password is refused as a wrong one.
    const locked = await login(owner, owner.password);
    expect(errorOf(locked)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    expect(locked.headers['ratelimit-remaining']).toBe('0');
    for (let round = 0; round < 2; round++) {
      const password = `${NEW_PASSWORD}-${round}`;
      const token = await resetToken(owner);
      expect(
        (
          await api.post('/auth/password/reset', {
            body: { token, newPassword: password },
            remoteAddress: ip,
          })
        ).statusCode,
      ).toBe(200);
      // The reset proved the owner's email: the owner logs in again from that IP...
      expect((await login(owner, password)).statusCode).toBe(200);
      // ...and a guess at any other account from it is still refused, even a right one.
      expect(errorOf(await login(victim, victim.password))).toMatchObject({
        status: 401,
        code: 'invalid_credentials',
      });
      expect(errorOf(await login(bystander, bystander.password))).toMatchObject({
        status: 401,
        code: 'invalid_credentials',
      });
    }
    // Guesses at the owner's new password from that IP have a budget of their own, no larger.
    for (let i = 0; i < perWindow; i++) await login(owner, `Wrong-Password-${i}`);
    expect(errorOf(await login(owner, `${NEW_PASSWORD}-1`))).toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
    // Another IP is not locked out; the next window opens this one again.
    expect(
      (
        await api.post('/auth/login', {
          body: { email: victim.email, password: victim.password },
          remoteAddress: freshIp(),
        })
      ).statusCode,
    ).toBe(200);
    ctx.clock.advance(15 * 60_000);
    expect((await login(victim, victim.password)).statusCode).toBe(200);
  });

  it('lets that account through its second step too, while the IP stays locked out', async () => {
    const owner = await signup(ctx.app);
    const setup = await api.post('/me/totp/setup', { headers: owner.headers, remoteAddress: freshIp() });
    const secret = setup.json().data.secret as string;
    const enable = await api.post('/me/totp/enable', {
      body: { code: totpCode(secret, ctx.clock.now()) },
      headers: owner.headers,
      remoteAddress: freshIp(),
    });
    expect(enable.statusCode).toBe(200);
    // A later window: the next step's code is not the one enabling spent.
    toWindowStart(ctx.clock, 15 * 60_000);
    const ip = freshIp();
    for (let i = 0; i < ctx.deps.config.rateLimits.loginFailuresPer15Min; i++) {
      await api.post('/auth/login', {
        body: { email: 'nobody-here@example.com', password: `Wrong-Password-${i}` },
        remoteAddress: ip,
      });
    }
    const token = await resetToken(owner);
    expect(
      (
        await api.post('/auth/password/reset', {
          body: { token, newPassword: NEW_PASSWORD },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(200);
    const first = await api.post('/auth/login', {
      body: { email: owner.email, password: NEW_PASSWORD },
      remoteAddress: ip,
    });
    expect(first.json().data).toMatchObject({ totpRequired: true });
    const second = await api.post('/auth/login/totp', {
      body: { pendingToken: first.json().data.pendingToken, code: totpCode(secret, ctx.clock.now()) },
      remoteAddress: ip,
    });
    expect(second.statusCode).toBe(200);
    expect(second.headers['set-cookie']).toBeDefined();
  });
});

describe('security notices by email', () => {
  it('a password change, a new API key, TOTP turned off and a new passkey each email the account', async () => {
    const caller = await signup(ctx.app);
    await apiKeyOf(ctx.app, caller, { name: 'billing server' });
    const setup = await api.post('/me/totp/setup', { headers: caller.headers, remoteAddress: freshIp() });
    const secret = setup.json().data.secret as string;
    const enable = await api.post('/me/totp/enable', {
      body: { code: totpCode(secret, ctx.clock.now()) },
      headers: caller.headers,
      remoteAddress: freshIp(),
    });
    const codes = enable.json().data.recoveryCodes as string[];
    await api.post('/me/totp/disable', {
      body: { password: caller.password, code: codes[0] as string },
      headers: caller.headers,
      remoteAddress: freshIp(),
    });
    const change = await api.post('/me/password', {
      body: { currentPassword: caller.password, newPassword: NEW_PASSWORD },
      headers: caller.headers,
      remoteAddress: freshIp(),
    });
    expect(change.statusCode).toBe(200);
    const messages = await inbox(caller.email);
    const subjects = messages.map((m) => m.subject).sort();
    expect(subjects).toEqual([
      'A new API key was created',
      'Two-factor authentication was turned off',
      'Your sealpay password was changed',
    ]);
    const keyNotice = messages.find((m) => m.subject === 'A new API key was created');
    expect(keyNotice?.text).toContain('“billing server”');
    expect(keyNotice?.text).toContain('reset your password');
  });

  it('a refused change sends nothing (the email is queued in its transaction)', async () => {
    const caller = await signup(ctx.app);
    const wrong = await api.post('/me/password', {
      body: { currentPassword: 'Wrong-Password-1', newPassword: NEW_PASSWORD },
      headers: caller.headers,
      remoteAddress: freshIp(),
    });
    expect(wrong.statusCode).toBe(401);
    const weak = await api.post('/me/password', {
      body: { currentPassword: caller.password, newPassword: 'weak' },
      headers: caller.headers,
      remoteAddress: freshIp(),
    });
    expect(weak.statusCode).toBe(400);
    expect(await inbox(caller.email)).toEqual([]);
  });
});
