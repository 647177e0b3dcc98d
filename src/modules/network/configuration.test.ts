import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, errorOf, signup, type TestContext } from '../../../test/harness.ts';

/**
 * The money routes check the platform's settings before anything is queued (`assertMoneyConfigured`): on a public
 * testnet (a sandbox, so the faucet exists) with no relayer key each answers `503 fhe_credentials_missing`; with the
 * key but no RPC_URL and no contract addresses each answers `503 configuration_missing` naming the first setting.
 */
const LETTER_ADDRESS = {
  line1: '1 Main St',
  city: 'Springfield',
  region: 'IL',
  postal: '62701',
  country: 'US',
};

function moneyRequests(walletId: string) {
  return [
    { operation: 'fundWallet', url: '/api/v1/fund', payload: { walletId, amount: '1' } },
    { operation: 'mintConfidential', url: '/api/v1/mint', payload: { walletId, amount: '1' } },
    { operation: 'redeemConfidential', url: '/api/v1/redeem', payload: { walletId, amount: '1' } },
    {
      operation: 'createTransfer',
      url: '/api/v1/transfer',
      payload: { walletId, to: '0x000000000000000000000000000000000000dEaD', amount: '1' },
    },
    {
      operation: 'createLetter',
      url: '/api/v1/transfer/letter',
      payload: { walletId, amount: '1', recipient: { name: 'Ada', address: LETTER_ADDRESS } },
    },
    {
      operation: 'claimLetter',
      url: '/api/v1/transfer/letter/claim',
      payload: { walletId, claimCode: 'ABCD-EFGH-JKLM' },
    },
  ];
}

async function custodialWallet(ctx: TestContext, caller: Caller): Promise<string> {
  const wallet = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/wallets',
    headers: caller.headers,
    payload: { type: 'CUSTODIAL' },
  });
  expect(wallet.statusCode).toBe(201);
  return wallet.json().data.wallet.id;
}

describe.each<{ settings: string; env: Record<string, string>; code: string }>([
  { settings: 'no ZAMA_API_KEY', env: {}, code: 'fhe_credentials_missing' },
  {
    settings: 'ZAMA_API_KEY but no RPC_URL',
    env: { ZAMA_API_KEY: 'test-key' },
    code: 'configuration_missing',
  },
])('a sepolia sandbox with $settings', ({ env, code }) => {
  let ctx: TestContext;
  let caller: Caller;
  let walletId: string;

  beforeAll(async () => {
    ctx = await createTestContext({
      network: true,
      env: { NETWORK: 'sepolia', MASTER_KEY: randomBytes(32).toString('hex'), ...env },
    });
    caller = await signup(ctx.app);
    walletId = await custodialWallet(ctx, caller);
  });
  afterAll(() => ctx?.close());

  it(`answers every money route 503 ${code} before queueing anything`, async () => {
    for (const request of moneyRequests(walletId)) {
      const response = await ctx.app.inject({ method: 'POST', headers: caller.headers, ...request });
      expect(errorOf(response), request.operation).toMatchObject({ status: 503, code });
    }
    const list = await ctx.app.inject({ url: '/api/v1/transactions', headers: caller.headers });
    expect(list.json().data.total).toBe(0);
    const letters = await ctx.app.inject({ url: '/api/v1/transfer/letter', headers: caller.headers });
    expect(letters.json().data.total).toBe(0);
  });
});
