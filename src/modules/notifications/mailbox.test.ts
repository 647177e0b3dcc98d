/**
 * The local mailbox is local only (issue 25, item 1): anyone could ask for a password reset of any address and read
 * the link at `GET /sandbox/mailbox`, an account takeover. Without a session only a request straight from this
 * machine reads it; with a session, only the account's own messages, from anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
} from '../../../test/harness.ts';
import { deliverDueEmails } from './notifications.service.ts';

const MAILBOX = '/api/v1/sandbox/mailbox';
const STRANGER = '203.0.113.7';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let ctx: TestContext;
let victim: Caller;
let attacker: Caller;

async function forgot(email: string): Promise<void> {
  const response = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password/forgot',
    payload: { email },
    remoteAddress: STRANGER,
  });
  expect(response.statusCode).toBe(202);
}

function read(options: { query?: string; headers?: Record<string, string>; remoteAddress?: string } = {}) {
  return ctx.app.inject({
    url: `${MAILBOX}${options.query ?? ''}`,
    headers: options.headers ?? {},
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}

function recipients(response: { json: () => { data: { messages: Array<{ to: string }> } } }): Set<string> {
  return new Set(response.json().data.messages.map((message) => message.to));
}

beforeAll(async () => {
  // A proxy is trusted: the mailbox judges the TCP peer all the same, never request.ip.
  ctx = await createTestContext({ env: { TRUST_PROXY: 'on' } });
  victim = await signup(ctx.app);
  attacker = await signup(ctx.app);
  await forgot(victim.email);
  await forgot(attacker.email);
  await deliverDueEmails(ctx.deps, quiet);
});
afterAll(() => ctx.close());

describe('GET /sandbox/mailbox without a session', () => {
  it('is 404 not_found from another machine, as on a service with no local mailbox', async () => {
    const response = await read({
      query: `?to=${encodeURIComponent(victim.email)}`,
      remoteAddress: STRANGER,
    });
    expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    expect(response.body).not.toContain('reset-password');
    // Another machine on a private network, and an IPv6 peer: strangers too.
    for (const remoteAddress of ['10.0.0.5', '2001:db8::7', '::ffff:192.0.2.1']) {
      expect(errorOf(await read({ remoteAddress }))).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('is 404 from the loopback when a proxy relayed the request (X-Forwarded-For, Forwarded, X-Real-IP, Via)', async () => {
    const relayed: Array<Record<string, string>> = [
      { 'x-forwarded-for': '127.0.0.1' },
      { 'x-forwarded-for': STRANGER },
      { forwarded: 'for=203.0.113.7' },
      { 'x-real-ip': STRANGER },
      { via: '1.1 proxy' },
    ];
    for (const headers of relayed) {
      expect(errorOf(await read({ headers })), JSON.stringify(headers)).toMatchObject({
        status: 404,
        code: 'not_found',
      });
    }
  });

  it('answers a request straight from this machine (IPv4, IPv6, IPv4-mapped loopback): the whole mailbox', async () => {
    for (const remoteAddress of ['127.0.0.1', '127.0.0.53', '::1', '::ffff:127.0.0.1']) {
      const response = await read({ remoteAddress });
      expect(response.statusCode, remoteAddress).toBe(200);
      expect(recipients(response)).toEqual(new Set([victim.email, attacker.email]));
    }
  });

  it('does not count an API key: a key from another machine reads nothing', async () => {
    const key = await apiKeyOf(ctx.app, attacker);
    expect(errorOf(await read({ headers: key.headers, remoteAddress: STRANGER }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('treats an ended session as none', async () => {
    const headers = { cookie: 'svc_session=not-a-session-token' };
    expect(errorOf(await read({ headers, remoteAddress: STRANGER }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await read({ headers })).statusCode).toBe(200);
  });
});

describe('GET /sandbox/mailbox with a session', () => {
  it("lists only the signed-in account's messages, from another machine too", async () => {
    const own = await read({ headers: attacker.headers, remoteAddress: STRANGER });
    expect(own.statusCode).toBe(200);
    expect(recipients(own)).toEqual(new Set([attacker.email]));
    expect(own.json().data.messages.length).toBeGreaterThan(0);
    // Naming its own address (in any case) is the same list; from the loopback too: a session sees its own only.
    const named = await read({
      query: `?to=${encodeURIComponent(attacker.email.toUpperCase())}`,
      headers: attacker.headers,
    });
    expect(named.json().data.messages).toEqual(own.json().data.messages);
  });

  it("finds nothing when `to` names another account's address", async () => {
    const response = await read({
      query: `?to=${encodeURIComponent(victim.email)}`,
      headers: attacker.headers,
      remoteAddress: STRANGER,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.messages).toEqual([]);
  });
});
