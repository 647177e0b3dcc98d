import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  sessionCookieOf,
  signup,
  type TestContext,
  toWindowStart,
} from '../../../test/harness.ts';
import { cookieOf } from '../../../test/support/cookies.ts';
import {
  type AssertionJSON,
  type CeremonyOverrides,
  SoftwareAuthenticator,
} from '../../../test/support/webauthn.ts';
import { passkeys } from '../../db/schema/index.ts';
import { runAccountsCommand } from '../accounts/accounts.cli.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let origin: string;
beforeAll(async () => {
  ctx = await createTestContext();
  origin = ctx.deps.config.publicOrigin;
});
afterAll(() => ctx.close());

const CHALLENGE_COOKIE = 'svc_webauthn';
const FIVE_MINUTES = 5 * 60_000;
let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `198.18.${Math.floor(ipCounter / 250)}.${(ipCounter % 250) + 1}`;
}

function withCookies(...cookies: (string | undefined)[]): Record<string, string> {
  const present = cookies.filter((cookie): cookie is string => Boolean(cookie));
  return present.length ? { cookie: present.join('; ') } : {};
}

async function registrationOptions(caller: Caller) {
  const response = await api.post('/me/passkeys/options', { headers: caller.headers });
  expect(response.statusCode).toBe(200);
  const cookie = cookieOf(response.headers['set-cookie'], CHALLENGE_COOKIE);
  expect(cookie).toBeDefined();
  return { options: response.json().data.options, cookie: cookie as string, response };
}

async function register(
  caller: Caller,
  authenticator: SoftwareAuthenticator,
  options: { overrides?: CeremonyOverrides; deviceName?: string; cookie?: string | null } = {},
) {
  const issued = await registrationOptions(caller);
  const cookie = options.cookie === undefined ? issued.cookie : (options.cookie ?? undefined);
  const credential = authenticator.register(issued.options, options.overrides);
  return api.post('/me/passkeys/register', {
    body: { credential, ...(options.deviceName ? { deviceName: options.deviceName } : {}) },
    headers: { cookie: [caller.headers.cookie, cookie].filter(Boolean).join('; ') },
  });
}

async function enrolled(deviceName = 'Laptop') {
  const caller = await signup(ctx.app);
  const authenticator = new SoftwareAuthenticator(origin);
  const response = await register(caller, authenticator, { deviceName });
  expect(response.statusCode).toBe(201);
  return { caller, authenticator, passkey: response.json().data.passkey };
}

async function loginOptions(ip: string, email?: string) {
  const response = await api.post('/auth/passkey/options', {
    body: email === undefined ? {} : { email },
    remoteAddress: ip,
  });
  expect(response.statusCode).toBe(200);
  const cookie = cookieOf(response.headers['set-cookie'], CHALLENGE_COOKIE);
  expect(cookie).toBeDefined();
  return { options: response.json().data.options, cookie: cookie as string, response };
}

function passkeyLogin(credential: AssertionJSON, cookie: string | undefined, ip: string) {
  return api.post('/auth/passkey/login', {
    body: { credential },
    headers: withCookies(cookie),
    remoteAddress: ip,
  });
}

async function storedPasskey(id: string) {
  const [row] = await ctx.deps.database.db.select().from(passkeys).where(eq(passkeys.id, id));
  if (!row) throw new Error('no passkey');
  return row;
}

describe('passkey registration options', () => {
  it('answers WebAuthn creation options for the relying party and puts the challenge in a signed, httpOnly cookie', async () => {
    const caller = await signup(ctx.app);
    const { options, response } = await registrationOptions(caller);
    expect(options.rp).toEqual({ id: new URL(origin).hostname, name: 'sealpay' });
    expect(options.user.name).toBe(caller.email);
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toContain(-7);
    expect(options.authenticatorSelection.userVerification).toBe('required');
    expect(options.attestation).toBe('none');
    expect(options.excludeCredentials).toEqual([]);
    const setCookie = String(response.headers['set-cookie']);
    expect(setCookie).toMatch(/^svc_webauthn=/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/api\/v1/);
    expect(setCookie).toMatch(/Max-Age=300/);
    // Signed: the value carries an HMAC after the last dot, and the account it is bound to.
    const value = decodeURIComponent(/^svc_webauthn=([^;]+)/.exec(setCookie)?.[1] ?? '');
    expect(value).toContain(caller.userId);
    expect(value).toContain(options.challenge);
    expect(value.split('.').length).toBe(6);
  });

  it('excludes the passkeys already registered', async () => {
    const { caller, authenticator } = await enrolled();
    const { options } = await registrationOptions(caller);
    expect(options.excludeCredentials).toEqual([
      { id: authenticator.id, type: 'public-key', transports: ['internal', 'hybrid'] },
    ]);
  });
});

describe('passkey registration', () => {
  it('verifies a none attestation and stores the credential: 201 {passkey}; GET /me/passkeys lists it', async () => {
    const caller = await signup(ctx.app);
    const authenticator = new SoftwareAuthenticator(origin);
    const response = await register(caller, authenticator, { deviceName: 'Work laptop' });
    expect(response.statusCode).toBe(201);
    const passkey = response.json().data.passkey;
    expect(Object.keys(passkey).sort()).toEqual([
      'createdAt',
      'deviceName',
      'id',
      'lastUsedAt',
      'transports',
    ]);
    expect(passkey).toMatchObject({
      deviceName: 'Work laptop',
      transports: ['internal', 'hybrid'],
      lastUsedAt: null,
    });
    expect(passkey.id).not.toBe(authenticator.id);
    expect(passkey.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // The challenge cookie is cleared.
    expect(String(response.headers['set-cookie'])).toMatch(/svc_webauthn=;/);

    const row = await storedPasskey(passkey.id);
    expect(row).toMatchObject({ userId: caller.userId, credentialId: authenticator.id, counter: 0 });

    const list = await api.get('/me/passkeys', { headers: caller.headers });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ ok: true, data: { passkeys: [passkey] } });
    // Either credential may list.
    const { headers } = await apiKeyOf(ctx.app, caller);
    const byKey = await api.get('/me/passkeys', { headers });
    expect(byKey.json().data.passkeys).toEqual([passkey]);
  });

  it('takes deviceName as optional (null when absent), and lists only the caller’s passkeys', async () => {
    const caller = await signup(ctx.app);
    const response = await register(caller, new SoftwareAuthenticator(origin));
    expect(response.statusCode).toBe(201);
    expect(response.json().data.passkey.deviceName).toBeNull();
    const other = await enrolled();
    const list = await api.get('/me/passkeys', { headers: caller.headers });
    expect(list.json().data.passkeys.map((p: { id: string }) => p.id)).toEqual([
      response.json().data.passkey.id,
    ]);
    expect(list.json().data.passkeys.map((p: { id: string }) => p.id)).not.toContain(other.passkey.id);
  });

  it('answers 409 passkey_exists for a credential registered already, on this account or another', async () => {
    const { caller, authenticator } = await enrolled();
    const again = await register(caller, authenticator);
    expect(errorOf(again)).toMatchObject({ status: 409, code: 'passkey_exists' });
    const stranger = await signup(ctx.app);
    const elsewhere = await register(stranger, authenticator);
    expect(errorOf(elsewhere)).toMatchObject({ status: 409, code: 'passkey_exists' });
  });

  it('answers 400 invalid_challenge without the challenge cookie', async () => {
    const caller = await signup(ctx.app);
    const response = await register(caller, new SoftwareAuthenticator(origin), { cookie: null });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_challenge' });
  });

  it('answers 400 invalid_challenge for a malformed, unsigned or tampered cookie', async () => {
    const caller = await signup(ctx.app);
    const { options, cookie } = await registrationOptions(caller);
    const value = decodeURIComponent(cookie.slice(`${CHALLENGE_COOKIE}=`.length));
    const signature = value.slice(value.lastIndexOf('.') + 1);
    const unsigned = value.slice(0, value.lastIndexOf('.'));
    const forgedExpiry = unsigned.replace(/\.\d+$/, `.${Date.now() + 10 * FIVE_MINUTES}`);
    // The first character of the signature carries six bits of it, so another letter there is always another
    // signature (overwriting its end with fixed letters left it whole when it already ended so, 1 run in 1,024).
    const tamperedSignature = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    const variants = [
      'garbage',
      unsigned,
      `${forgedExpiry}.${signature}`,
      `${unsigned}.${tamperedSignature}`,
    ];
    for (const variant of variants) {
      const credential = new SoftwareAuthenticator(origin).register(options);
      const response = await api.post('/me/passkeys/register', {
        body: { credential },
        headers: { cookie: `${caller.headers.cookie}; ${CHALLENGE_COOKIE}=${encodeURIComponent(variant)}` },
      });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_challenge' });
    }
    // The genuine cookie still works afterwards.
    const credential = new SoftwareAuthenticator(origin).register(options);
    const genuine = await api.post('/me/passkeys/register', {
      body: { credential },
      headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
    });
    expect(genuine.statusCode).toBe(201);
  });

  it('a challenge is single use: a second register with the same cookie is 400 invalid_challenge', async () => {
    const caller = await signup(ctx.app);
    const { options, cookie } = await registrationOptions(caller);
    const headers = { cookie: `${caller.headers.cookie}; ${cookie}` };
    const first = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers,
    });
    expect(first.statusCode).toBe(201);
    const second = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers,
    });
    expect(errorOf(second)).toMatchObject({ status: 400, code: 'invalid_challenge' });
    const list = await api.get('/me/passkeys', { headers: caller.headers });
    expect(list.json().data.passkeys).toHaveLength(1);
  });

  it('a failed verification burns the challenge too', async () => {
    const caller = await signup(ctx.app);
    const { options, cookie } = await registrationOptions(caller);
    const headers = { cookie: `${caller.headers.cookie}; ${cookie}` };
    const bad = await api.post('/me/passkeys/register', {
      body: {
        credential: new SoftwareAuthenticator(origin).register(options, { challenge: 'A'.repeat(43) }),
      },
      headers,
    });
    expect(errorOf(bad)).toMatchObject({ status: 400, code: 'passkey_verification_failed' });
    const retry = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers,
    });
    expect(errorOf(retry)).toMatchObject({ status: 400, code: 'invalid_challenge' });
  });

  it('answers 400 invalid_challenge for another account’s challenge cookie', async () => {
    const alice = await signup(ctx.app);
    const mallory = await signup(ctx.app);
    const { options, cookie } = await registrationOptions(alice);
    const response = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers: { cookie: `${mallory.headers.cookie}; ${cookie}` },
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_challenge' });
    const list = await api.get('/me/passkeys', { headers: mallory.headers });
    expect(list.json().data.passkeys).toEqual([]);
  });

  it('answers 400 invalid_challenge for a login challenge cookie', async () => {
    const caller = await signup(ctx.app);
    const { options, cookie } = await loginOptions(freshIp());
    const response = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_challenge' });
  });

  it('answers 400 challenge_expired after 5 minutes', async () => {
    const caller = await signup(ctx.app);
    const { options, cookie } = await registrationOptions(caller);
    ctx.clock.advance(FIVE_MINUTES + 1000);
    const response = await api.post('/me/passkeys/register', {
      body: { credential: new SoftwareAuthenticator(origin).register(options) },
      headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'challenge_expired' });
  });

  it('answers 400 invalid_host when the attestation was made on another origin or for another RP ID', async () => {
    const caller = await signup(ctx.app);
    const onEvilOrigin = await register(caller, new SoftwareAuthenticator(origin), {
      overrides: { origin: 'https://evil.example' },
    });
    expect(errorOf(onEvilOrigin)).toMatchObject({ status: 400, code: 'invalid_host' });
    const forEvilRp = await register(caller, new SoftwareAuthenticator(origin), {
      overrides: { rpId: 'evil.example' },
    });
    expect(errorOf(forEvilRp)).toMatchObject({ status: 400, code: 'invalid_host' });
    const list = await api.get('/me/passkeys', { headers: caller.headers });
    expect(list.json().data.passkeys).toEqual([]);
  });

  it('answers 400 passkey_verification_failed for a wrong challenge or without user verification', async () => {
    const caller = await signup(ctx.app);
    const wrongChallenge = await register(caller, new SoftwareAuthenticator(origin), {
      overrides: { challenge: 'B'.repeat(43) },
    });
    expect(errorOf(wrongChallenge)).toMatchObject({ status: 400, code: 'passkey_verification_failed' });
    const withoutUv = await register(caller, new SoftwareAuthenticator(origin), {
      overrides: { flags: 0x41 },
    });
    expect(errorOf(withoutUv)).toMatchObject({ status: 400, code: 'passkey_verification_failed' });
    const garbled = await register(caller, new SoftwareAuthenticator(origin), { overrides: { flags: 0x05 } });
    expect(errorOf(garbled)).toMatchObject({ status: 400, code: 'passkey_verification_failed' });
  });

  it('validates the body with 400 validation_error', async () => {
    const caller = await signup(ctx.app);
    const { cookie } = await registrationOptions(caller);
    // Without the credential the document requires: sent as written.
    const response = await api.raw('POST', '/me/passkeys/register', {
      payload: { deviceName: 'x' },
      headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
  });
});

describe('session only', () => {
  it('options and register answer 403 session_required to an API key', async () => {
    const caller = await signup(ctx.app);
    const { headers } = await apiKeyOf(ctx.app, caller);
    const options = await api.post('/me/passkeys/options', { headers });
    expect(errorOf(options)).toMatchObject({ status: 403, code: 'session_required' });
    expect(cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE)).toBeUndefined();
    const { options: real, cookie } = await registrationOptions(caller);
    const credential = new SoftwareAuthenticator(origin).register(real);
    const registered = await api.post('/me/passkeys/register', {
      body: { credential },
      headers: { ...headers, cookie },
    });
    expect(errorOf(registered)).toMatchObject({ status: 403, code: 'session_required' });
  });

  it('answers 401 unauthenticated without a credential', async () => {
    const response = await api.get('/me/passkeys');
    expect(errorOf(response)).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('passkey login', () => {
  it('options reveal nothing about an email: the same shape for one with passkeys, one without, an unknown one, none', async () => {
    const { caller, authenticator } = await enrolled();
    const withoutPasskeys = await signup(ctx.app);
    const answers = await Promise.all(
      [caller.email, withoutPasskeys.email, 'nobody@example.com', undefined].map((email) =>
        loginOptions(freshIp(), email),
      ),
    );
    const challenges = new Set<string>();
    for (const { options, cookie, response } of answers) {
      expect(options.rpId).toBe(new URL(origin).hostname);
      expect(options.userVerification).toBe('required');
      expect(options.allowCredentials).toEqual([]);
      expect(Object.keys(options).sort()).toEqual(Object.keys(answers[0]?.options).sort());
      expect(String(response.headers['set-cookie'])).toMatch(/HttpOnly/);
      // The cookie's readable value carries no account: `v1.login.-.<challenge>.<expiry>`.
      expect(decodeURIComponent(cookie.split('=')[1] as string)).toMatch(/^v1\.login\.-\./);
      challenges.add(options.challenge);
    }
    expect(challenges.size).toBe(4);
    // Options asked for with an email still let that account's passkey log in.
    const ip = freshIp();
    const named = await loginOptions(ip, caller.email);
    const response = await passkeyLogin(authenticator.assert(named.options), named.cookie, ip);
    expect(response.json().data.user.id).toBe(caller.userId);
    const noBody = await api.post('/auth/passkey/options', { remoteAddress: freshIp() });
    expect(noBody.statusCode).toBe(200);
  });

  it('logs in with a valid assertion: {user} and a session cookie; counter and lastUsedAt are stored', async () => {
    const { caller, authenticator, passkey } = await enrolled();
    const ip = freshIp();
    const { options, cookie } = await loginOptions(ip, caller.email);
    const response = await passkeyLogin(authenticator.assert(options), cookie, ip);
    expect(response.statusCode).toBe(200);
    expect(response.json().data.user).toMatchObject({ id: caller.userId, email: caller.email });
    const session = sessionCookieOf(response.headers['set-cookie']);
    const who = await api.get('/auth/session', { headers: { cookie: session } });
    expect(who.json().data.user.id).toBe(caller.userId);
    const row = await storedPasskey(passkey.id);
    expect(row.counter).toBe(1);
    expect(row.lastUsedAt).not.toBeNull();
    const list = await api.get('/me/passkeys', { headers: caller.headers });
    expect(list.json().data.passkeys[0].lastUsedAt).toBe(row.lastUsedAt?.toISOString());

    // Discoverable flow: options without an email.
    const anonymous = await loginOptions(ip);
    const again = await passkeyLogin(authenticator.assert(anonymous.options), anonymous.cookie, ip);
    expect(again.statusCode).toBe(200);
    expect((await storedPasskey(passkey.id)).counter).toBe(2);
  });

  it('accepts authenticators without a counter (always 0)', async () => {
    const { authenticator } = await enrolled();
    const ip = freshIp();
    for (let i = 0; i < 2; i += 1) {
      const { options, cookie } = await loginOptions(ip);
      const response = await passkeyLogin(authenticator.assert(options, { counter: 0 }), cookie, ip);
      expect(response.statusCode).toBe(200);
    }
  });

  it('answers 401 unknown_passkey for a credential that is not registered', async () => {
    const ip = freshIp();
    const { options, cookie } = await loginOptions(ip);
    const response = await passkeyLogin(new SoftwareAuthenticator(origin).assert(options), cookie, ip);
    expect(errorOf(response)).toMatchObject({ status: 401, code: 'unknown_passkey' });
    expect(cookieOf(response.headers['set-cookie'], 'svc_session')).toBeUndefined();
  });

  it('answers 401 passkey_verification_failed for a bad signature, a wrong challenge, origin or RP ID', async () => {
    const { authenticator } = await enrolled();
    const ip = freshIp();
    const cases: CeremonyOverrides[] = [
      { corruptSignature: true },
      { challenge: 'C'.repeat(43) },
      { origin: 'https://evil.example' },
      { rpId: 'evil.example' },
      { flags: 0x01 },
    ];
    for (const overrides of cases) {
      const { options, cookie } = await loginOptions(ip);
      const response = await passkeyLogin(authenticator.assert(options, overrides), cookie, ip);
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
      expect(cookieOf(response.headers['set-cookie'], 'svc_session')).toBeUndefined();
    }
  });

  it('refuses a replayed assertion: same challenge cookie, or a fresh challenge', async () => {
    const { authenticator } = await enrolled();
    const ip = freshIp();
    const { options, cookie } = await loginOptions(ip);
    const assertion = authenticator.assert(options);
    expect((await passkeyLogin(assertion, cookie, ip)).statusCode).toBe(200);
    const sameCookie = await passkeyLogin(assertion, cookie, ip);
    expect(errorOf(sameCookie)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
    const fresh = await loginOptions(ip);
    const freshCookie = await passkeyLogin(assertion, fresh.cookie, ip);
    expect(errorOf(freshCookie)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
  });

  it('refuses a counter that does not increase (a cloned authenticator), and stores the counter', async () => {
    const { authenticator, passkey } = await enrolled();
    const ip = freshIp();
    let issued = await loginOptions(ip);
    expect(
      (await passkeyLogin(authenticator.assert(issued.options, { counter: 5 }), issued.cookie, ip))
        .statusCode,
    ).toBe(200);
    expect((await storedPasskey(passkey.id)).counter).toBe(5);
    for (const counter of [5, 4, 0]) {
      issued = await loginOptions(ip);
      const response = await passkeyLogin(
        authenticator.assert(issued.options, { counter }),
        issued.cookie,
        ip,
      );
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
    }
    expect((await storedPasskey(passkey.id)).counter).toBe(5);
    issued = await loginOptions(ip);
    expect(
      (await passkeyLogin(authenticator.assert(issued.options, { counter: 6 }), issued.cookie, ip))
        .statusCode,
    ).toBe(200);
    expect((await storedPasskey(passkey.id)).counter).toBe(6);
  });

  it('challenge problems are 401 passkey_verification_failed: missing, expired, registration cookie', async () => {
    const { caller, authenticator } = await enrolled();
    const ip = freshIp();
    const { options } = await loginOptions(ip);
    const missing = await passkeyLogin(authenticator.assert(options), undefined, ip);
    expect(errorOf(missing)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });

    const stale = await loginOptions(ip);
    ctx.clock.advance(FIVE_MINUTES + 1000);
    const expired = await passkeyLogin(authenticator.assert(stale.options), stale.cookie, ip);
    expect(errorOf(expired)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });

    const registration = await registrationOptions(caller);
    const wrongPurpose = await passkeyLogin(
      authenticator.assert(registration.options),
      registration.cookie,
      ip,
    );
    expect(errorOf(wrongPurpose)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
  });

  it('a disabled account gets 403 account_disabled', async () => {
    const { caller, authenticator } = await enrolled();
    await runAccountsCommand(ctx.deps, 'disable', { email: caller.email });
    const ip = freshIp();
    const { options, cookie } = await loginOptions(ip);
    const response = await passkeyLogin(authenticator.assert(options), cookie, ip);
    expect(errorOf(response)).toMatchObject({ status: 403, code: 'account_disabled' });
    expect(cookieOf(response.headers['set-cookie'], 'svc_session')).toBeUndefined();
  });

  it('brute force: after 10 failures per 15 minutes an IP gets 401 even with a valid assertion, and no session', async () => {
    const { caller, authenticator } = await enrolled();
    toWindowStart(ctx.clock, 15 * 60_000);
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) {
      const { options, cookie } = await loginOptions(freshIp());
      const response = await passkeyLogin(new SoftwareAuthenticator(origin).assert(options), cookie, ip);
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'unknown_passkey' });
    }
    const { options, cookie } = await loginOptions(freshIp());
    const locked = await passkeyLogin(authenticator.assert(options), cookie, ip);
    expect(errorOf(locked)).toMatchObject({ status: 401, code: 'passkey_verification_failed' });
    expect(cookieOf(locked.headers['set-cookie'], 'svc_session')).toBeUndefined();
    // The password login shares the limit.
    const password = await api.post('/auth/login', {
      body: { email: caller.email, password: caller.password },
      remoteAddress: ip,
    });
    expect(errorOf(password)).toMatchObject({ status: 401, code: 'invalid_credentials' });
    // Another IP is unaffected.
    const elsewhere = await loginOptions(freshIp());
    const other = freshIp();
    expect(
      (await passkeyLogin(authenticator.assert(elsewhere.options), elsewhere.cookie, other)).statusCode,
    ).toBe(200);
  });

  it('validates the body with 400 validation_error', async () => {
    const ip = freshIp();
    const { cookie } = await loginOptions(ip);
    // A credential without what the document requires of one: sent as written.
    const response = await api.raw('POST', '/auth/passkey/login', {
      payload: { credential: { id: 'x' } },
      headers: withCookies(cookie),
      remoteAddress: ip,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
  });
});

describe('OpenAPI', () => {
  it('documents every security route with its tag', async () => {
    const response = await api.raw('GET', '/openapi.json');
    const paths = response.json().paths as Record<
      string,
      Record<string, { tags?: string[]; requestBody?: unknown }>
    >;
    const expected: [string, string, string][] = [
      ['/me/totp/setup', 'post', 'Security'],
      ['/me/totp/enable', 'post', 'Security'],
      ['/me/totp/disable', 'post', 'Security'],
      ['/me/passkeys', 'get', 'Security'],
      ['/me/passkeys/options', 'post', 'Security'],
      ['/me/passkeys/register', 'post', 'Security'],
      ['/auth/login/totp', 'post', 'Accounts'],
      ['/auth/passkey/options', 'post', 'Accounts'],
      ['/auth/passkey/login', 'post', 'Accounts'],
    ];
    for (const [path, method, tag] of expected) {
      expect(paths[path]?.[method]?.tags, `${method} ${path}`).toEqual([tag]);
    }
    expect(paths['/me/passkeys/register']?.post?.requestBody).toBeDefined();
    expect(paths['/auth/login/totp']?.post?.requestBody).toBeDefined();
  });
});
