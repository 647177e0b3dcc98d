import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
} from '../../../test/harness.ts';
import { cookieOf } from '../../../test/support/cookies.ts';
import { SoftwareAuthenticator } from '../../../test/support/webauthn.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const CHALLENGE_COOKIE = 'svc_webauthn';
let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `198.19.0.${ipCounter}`;
}

/** An account with one passkey on a software authenticator. */
async function withPasskey(deviceName = 'Laptop') {
  const caller = await signup(ctx.app);
  const authenticator = new SoftwareAuthenticator(ctx.deps.config.publicOrigin);
  const options = await api.post('/me/passkeys/options', { headers: caller.headers });
  const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
  const credential = authenticator.register(options.json().data.options);
  const registered = await api.post('/me/passkeys/register', {
    body: { credential, deviceName },
    headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
  });
  expect(registered.statusCode).toBe(201);
  return { caller, authenticator, passkey: registered.json().data.passkey };
}

async function passkeyLogin(authenticator: SoftwareAuthenticator) {
  const ip = freshIp();
  const options = await api.post('/auth/passkey/options', { body: {}, remoteAddress: ip });
  const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
  const credential = authenticator.assert(options.json().data.options);
  return api.post('/auth/passkey/login', { body: { credential }, headers: { cookie }, remoteAddress: ip });
}

async function listed(caller: Caller) {
  return (await api.get('/me/passkeys', { headers: caller.headers })).json().data.passkeys as Array<{
    id: string;
    deviceName: string;
  }>;
}

describe('PATCH /me/passkeys/{id}', () => {
  it('renames a passkey and answers {passkey}; the list shows the new name', async () => {
    const { caller, passkey } = await withPasskey();
    const response = await api.patch('/me/passkeys/{id}', {
      params: { id: passkey.id },
      body: {
        deviceName: '  Work laptop ',
      },
      headers: caller.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.passkey).toMatchObject({ id: passkey.id, deviceName: 'Work laptop' });
    expect((await listed(caller)).map((p) => p.deviceName)).toEqual(['Work laptop']);
  });

  it("answers 404 not_found for another account's passkey and leaves it alone", async () => {
    const mine = await withPasskey();
    const theirs = await withPasskey('Theirs');
    const response = await api.patch('/me/passkeys/{id}', {
      params: { id: theirs.passkey.id },
      body: {
        deviceName: 'Mine now',
      },
      headers: mine.caller.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await listed(theirs.caller))[0]?.deviceName).toBe('Theirs');
  });

  it('validates the name (400 validation_error), and is session only', async () => {
    const { caller, passkey } = await withPasskey();
    for (const body of [{}, { deviceName: '' }, { deviceName: '   ' }, { deviceName: 'x'.repeat(101) }]) {
      expect(
        errorOf(
          // Names the document refuses (none at all among them): sent as written.
          await api.raw('PATCH', `/me/passkeys/${passkey.id}`, { payload: body, headers: caller.headers }),
        ),
      ).toMatchObject({
        status: 400,
        code: 'validation_error',
      });
    }
    const key = await apiKeyOf(ctx.app, caller);
    expect(
      errorOf(
        await api.patch('/me/passkeys/{id}', {
          params: { id: passkey.id },
          body: { deviceName: 'Key' },
          headers: key.headers,
        }),
      ),
    ).toMatchObject({
      status: 403,
      code: 'session_required',
    });
    expect(
      errorOf(
        await api.patch('/me/passkeys/{id}', { params: { id: passkey.id }, body: { deviceName: 'Key' } }),
      ),
    ).toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
  });
});

describe('DELETE /me/passkeys/{id}', () => {
  it('removes a passkey: it logs in no more, is no longer listed, and cannot be renamed', async () => {
    const { caller, authenticator, passkey } = await withPasskey();
    expect((await passkeyLogin(authenticator)).statusCode).toBe(200);
    const removed = await api.delete('/me/passkeys/{id}', {
      params: { id: passkey.id },
      headers: caller.headers,
    });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data.passkey).toMatchObject({ id: passkey.id, deviceName: 'Laptop' });
    expect(errorOf(await passkeyLogin(authenticator))).toMatchObject({
      status: 401,
      code: 'unknown_passkey',
    });
    expect(await listed(caller)).toEqual([]);
    expect(
      errorOf(
        await api.patch('/me/passkeys/{id}', {
          params: { id: passkey.id },
          body: { deviceName: 'Back' },
          headers: caller.headers,
        }),
      ),
    ).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('is idempotent: a repeat answers the same record', async () => {
    const { caller, passkey } = await withPasskey();
    const first = await api.delete('/me/passkeys/{id}', {
      params: { id: passkey.id },
      headers: caller.headers,
    });
    const second = await api.delete('/me/passkeys/{id}', {
      params: { id: passkey.id },
      headers: caller.headers,
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
  });

  it("answers 404 not_found for another account's passkey (which keeps working) and for an unknown id", async () => {
    const mine = await withPasskey();
    const theirs = await withPasskey();
    expect(
      errorOf(
        await api.delete('/me/passkeys/{id}', {
          params: { id: theirs.passkey.id },
          headers: mine.caller.headers,
        }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await passkeyLogin(theirs.authenticator)).statusCode).toBe(200);
    expect(
      errorOf(
        await api.delete('/me/passkeys/{id}', {
          params: { id: 'zzzzzzzzzzzzzzzzzzzzzzzz' },
          headers: mine.caller.headers,
        }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it("is session only: an API key (a stolen one) cannot remove the owner's passkeys", async () => {
    const { caller, authenticator, passkey } = await withPasskey();
    const key = await apiKeyOf(ctx.app, caller);
    expect(
      errorOf(await api.delete('/me/passkeys/{id}', { params: { id: passkey.id }, headers: key.headers })),
    ).toMatchObject({
      status: 403,
      code: 'session_required',
    });
    expect((await passkeyLogin(authenticator)).statusCode).toBe(200);
  });

  it('the other passkeys of the account keep working', async () => {
    const { caller, passkey } = await withPasskey('First');
    const second = new SoftwareAuthenticator(ctx.deps.config.publicOrigin);
    const options = await api.post('/me/passkeys/options', { headers: caller.headers });
    const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
    const registered = await api.post('/me/passkeys/register', {
      body: { credential: second.register(options.json().data.options), deviceName: 'Second' },
      headers: { cookie: `${caller.headers.cookie}; ${cookie}` },
    });
    expect(registered.statusCode).toBe(201);
    await api.delete('/me/passkeys/{id}', { params: { id: passkey.id }, headers: caller.headers });
    expect((await listed(caller)).map((p) => p.deviceName)).toEqual(['Second']);
    expect((await passkeyLogin(second)).statusCode).toBe(200);
  });
});
