import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

function call(
  method: 'POST' | 'PATCH' | 'DELETE' | 'GET',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
  ip?: string,
) {
  return ctx.app.inject({
    method,
    url: `/api/v1${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    ...(ip ? { remoteAddress: ip } : {}),
  });
}

/** An account with one passkey on a software authenticator. */
async function withPasskey(deviceName = 'Laptop') {
  const caller = await signup(ctx.app);
  const authenticator = new SoftwareAuthenticator(ctx.deps.config.publicOrigin);
  const options = await call('POST', '/me/passkeys/options', caller.headers);
  const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
  const credential = authenticator.register(options.json().data.options);
  const registered = await call(
    'POST',
    '/me/passkeys/register',
    { cookie: `${caller.headers.cookie}; ${cookie}` },
    { credential, deviceName },
  );
  expect(registered.statusCode).toBe(201);
  return { caller, authenticator, passkey: registered.json().data.passkey };
}

async function passkeyLogin(authenticator: SoftwareAuthenticator) {
  const ip = freshIp();
  const options = await call('POST', '/auth/passkey/options', {}, {}, ip);
  const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
  const credential = authenticator.assert(options.json().data.options);
  return call('POST', '/auth/passkey/login', { cookie }, { credential }, ip);
}

async function listed(caller: Caller) {
  return (await call('GET', '/me/passkeys', caller.headers)).json().data.passkeys as Array<{
    id: string;
    deviceName: string;
  }>;
}

describe('PATCH /me/passkeys/{id}', () => {
  it('renames a passkey and answers {passkey}; the list shows the new name', async () => {
    const { caller, passkey } = await withPasskey();
    const response = await call('PATCH', `/me/passkeys/${passkey.id}`, caller.headers, {
      deviceName: '  Work laptop ',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.passkey).toMatchObject({ id: passkey.id, deviceName: 'Work laptop' });
    expect((await listed(caller)).map((p) => p.deviceName)).toEqual(['Work laptop']);
  });

  it("answers 404 not_found for another account's passkey and leaves it alone", async () => {
    const mine = await withPasskey();
    const theirs = await withPasskey('Theirs');
    const response = await call('PATCH', `/me/passkeys/${theirs.passkey.id}`, mine.caller.headers, {
      deviceName: 'Mine now',
    });
    expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await listed(theirs.caller))[0]?.deviceName).toBe('Theirs');
  });

  it('validates the name (400 validation_error), and is session only', async () => {
    const { caller, passkey } = await withPasskey();
    for (const body of [{}, { deviceName: '' }, { deviceName: '   ' }, { deviceName: 'x'.repeat(101) }]) {
      expect(errorOf(await call('PATCH', `/me/passkeys/${passkey.id}`, caller.headers, body))).toMatchObject({
        status: 400,
        code: 'validation_error',
      });
    }
    const key = await apiKeyOf(ctx.app, caller);
    expect(
      errorOf(await call('PATCH', `/me/passkeys/${passkey.id}`, key.headers, { deviceName: 'Key' })),
    ).toMatchObject({
      status: 403,
      code: 'session_required',
    });
    expect(
      errorOf(await call('PATCH', `/me/passkeys/${passkey.id}`, {}, { deviceName: 'Key' })),
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
    const removed = await call('DELETE', `/me/passkeys/${passkey.id}`, caller.headers);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data.passkey).toMatchObject({ id: passkey.id, deviceName: 'Laptop' });
    expect(errorOf(await passkeyLogin(authenticator))).toMatchObject({
      status: 401,
      code: 'unknown_passkey',
    });
    expect(await listed(caller)).toEqual([]);
    expect(
      errorOf(await call('PATCH', `/me/passkeys/${passkey.id}`, caller.headers, { deviceName: 'Back' })),
    ).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('is idempotent: a repeat answers the same record', async () => {
    const { caller, passkey } = await withPasskey();
    const first = await call('DELETE', `/me/passkeys/${passkey.id}`, caller.headers);
    const second = await call('DELETE', `/me/passkeys/${passkey.id}`, caller.headers);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
  });

  it("answers 404 not_found for another account's passkey (which keeps working) and for an unknown id", async () => {
    const mine = await withPasskey();
    const theirs = await withPasskey();
    expect(
      errorOf(await call('DELETE', `/me/passkeys/${theirs.passkey.id}`, mine.caller.headers)),
    ).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await passkeyLogin(theirs.authenticator)).statusCode).toBe(200);
    expect(
      errorOf(await call('DELETE', '/me/passkeys/zzzzzzzzzzzzzzzzzzzzzzzz', mine.caller.headers)),
    ).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it("is session only: an API key (a stolen one) cannot remove the owner's passkeys", async () => {
    const { caller, authenticator, passkey } = await withPasskey();
    const key = await apiKeyOf(ctx.app, caller);
    expect(errorOf(await call('DELETE', `/me/passkeys/${passkey.id}`, key.headers))).toMatchObject({
      status: 403,
      code: 'session_required',
    });
    expect((await passkeyLogin(authenticator)).statusCode).toBe(200);
  });

  it('the other passkeys of the account keep working', async () => {
    const { caller, passkey } = await withPasskey('First');
    const second = new SoftwareAuthenticator(ctx.deps.config.publicOrigin);
    const options = await call('POST', '/me/passkeys/options', caller.headers);
    const cookie = cookieOf(options.headers['set-cookie'], CHALLENGE_COOKIE) as string;
    const registered = await call(
      'POST',
      '/me/passkeys/register',
      { cookie: `${caller.headers.cookie}; ${cookie}` },
      { credential: second.register(options.json().data.options), deviceName: 'Second' },
    );
    expect(registered.statusCode).toBe(201);
    await call('DELETE', `/me/passkeys/${passkey.id}`, caller.headers);
    expect((await listed(caller)).map((p) => p.deviceName)).toEqual(['Second']);
    expect((await passkeyLogin(second)).statusCode).toBe(200);
  });
});
