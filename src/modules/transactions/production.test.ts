import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, errorOf, signup, type TestContext } from '../../../test/harness.ts';

let ctx: TestContext;
let caller: Caller;
let walletId: string;

beforeAll(async () => {
  // Production on mainnet with no relayer credentials and no RPC: the service starts and answers with 503s.
  ctx = await createTestContext({
    network: true,
    env: { NETWORK: 'mainnet', MASTER_KEY: randomBytes(32).toString('hex') },
  });
  caller = await signup(ctx.app);
  const wallet = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/wallets',
    headers: caller.headers,
    payload: { type: 'CUSTODIAL' },
  });
  walletId = wallet.json().data.wallet.id;
});
afterAll(() => ctx.close());

describe('production environment', () => {
  it('answers the faucet 404 not_found before authentication', async () => {
    for (const headers of [{}, caller.headers]) {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/fund',
        headers,
        payload: { walletId },
      });
      expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('answers the faucet 404 not_found before anything else: body, content type, credential', async () => {
    const requests = [
      { payload: '{"walletId": ', headers: { 'content-type': 'application/json' } },
      {
        payload: JSON.stringify({ walletId, pad: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
      },
      { payload: 'walletId=w', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { payload: '<fund/>', headers: { 'content-type': 'text/xml' } },
      {
        payload: JSON.stringify({ walletId }),
        headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
      },
      {
        payload: JSON.stringify({ walletId }),
        headers: { 'content-type': 'application/json', cookie: 'svc_session=ended' },
      },
      {
        payload: JSON.stringify({ walletId: 42 }),
        headers: { 'content-type': 'application/json', ...caller.headers },
      },
    ];
    for (const request of requests) {
      const response = await ctx.app.inject({ method: 'POST', url: '/api/v1/fund?x=1', ...request });
      expect(errorOf(response), JSON.stringify(request.headers)).toMatchObject({
        status: 404,
        code: 'not_found',
      });
    }
  });

  it('checks configuration before queueing: 503 fhe_credentials_missing, and no transaction row', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/transfer',
      headers: caller.headers,
      payload: { walletId, to: '0x000000000000000000000000000000000000dEaD', amount: '1' },
    });
    expect(errorOf(response)).toMatchObject({ status: 503, code: 'fhe_credentials_missing' });
    const list = await ctx.app.inject({ url: '/api/v1/transactions', headers: caller.headers });
    expect(list.json().data.total).toBe(0);
  });

  it('reports the environment in the sandbox probe', async () => {
    const response = await ctx.app.inject({ url: '/api/v1/sandbox' });
    expect(response.json()).toMatchObject({ environment: 'production', network: 'mainnet' });
  });

  it('lists no sandbox-only route in its OpenAPI document, and answers the mailbox 404 not_found', async () => {
    const document = (await ctx.app.inject({ url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { summary?: string; description?: string }>>;
    };
    for (const path of ['/sandbox/mailbox', '/sandbox/clock', '/fund']) {
      expect(document.paths[path], path).toBeUndefined();
    }
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(`${operation.summary ?? ''} ${operation.description ?? ''}`, `${method} ${path}`).not.toMatch(
          /sandbox[- ]only/i,
        );
      }
    }
    const mailbox = await ctx.app.inject({ url: '/api/v1/sandbox/mailbox', remoteAddress: '127.0.0.1' });
    expect(errorOf(mailbox)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
