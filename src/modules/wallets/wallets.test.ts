import { randomBytes } from 'node:crypto';
import { erc20Abi, getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  rpcClient,
  signup,
  type TestContext,
} from '../../../test/harness.ts';
import { findWalletById } from './wallets.repository.ts';

let ctx: TestContext;
let owner: Caller;

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

async function create(caller: Caller, body: Record<string, unknown>) {
  return ctx.app.inject({ method: 'POST', url: '/api/v1/wallets', headers: caller.headers, payload: body });
}

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: { RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
  });
  owner = await signup(ctx.app);
});
afterAll(() => ctx.close());

describe('wallets', () => {
  it('creates a custodial wallet (the first is primary) whose key is sealed at rest', async () => {
    const response = await create(owner, { type: 'CUSTODIAL', label: 'Main' });
    expect(response.statusCode).toBe(201);
    const wallet = response.json().data.wallet;
    expect(wallet).toMatchObject({ type: 'CUSTODIAL', label: 'Main', isPrimary: true });
    expect(wallet.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(Object.keys(wallet).sort()).toEqual(['address', 'createdAt', 'id', 'isPrimary', 'label', 'type']);
    const row = await findWalletById(ctx.deps.database.db, wallet.id);
    expect(row?.sealedPrivateKey).toMatch(/^v1\./);
    expect(response.body).not.toContain(row?.sealedPrivateKey ?? 'x');
  });

  it('registers an external watch-only address; a second registration anywhere is 409 wallet_exists', async () => {
    const address = randomAddress();
    const response = await create(owner, { type: 'EXTERNAL', address: address.toLowerCase() });
    expect(response.statusCode).toBe(201);
    expect(response.json().data.wallet).toMatchObject({ type: 'EXTERNAL', address, isPrimary: false });
    const other = await signup(ctx.app);
    for (const caller of [owner, other]) {
      expect(errorOf(await create(caller, { type: 'EXTERNAL', address }))).toMatchObject({
        status: 409,
        code: 'wallet_exists',
      });
    }
  });

  it.each([
    { type: 'EXTERNAL' },
    { type: 'EXTERNAL', address: '0x1234' },
    { type: 'SOMETHING' },
    {},
    { type: 'CUSTODIAL', label: '' },
  ])('validates %j', async (body) => {
    expect(errorOf(await create(owner, body))).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('holds at most 10 wallets per account: 400 wallet_limit_reached', async () => {
    const caller = await signup(ctx.app);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => create(caller, { type: 'EXTERNAL', address: randomAddress() })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((code) => code === 201)).toHaveLength(10);
    for (const response of results.filter((r) => r.statusCode !== 201)) {
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'wallet_limit_reached' });
    }
    const list = (await ctx.app.inject({ url: '/api/v1/wallets', headers: caller.headers })).json().data
      .wallets;
    expect(list).toHaveLength(10);
    expect(list.filter((w: { isPrimary: boolean }) => w.isPrimary)).toHaveLength(1);
  });

  it('makes another wallet primary, keeping exactly one', async () => {
    const caller = await signup(ctx.app);
    const first = (await create(caller, { type: 'CUSTODIAL' })).json().data.wallet;
    const second = (await create(caller, { type: 'CUSTODIAL' })).json().data.wallet;
    const response = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/wallets/${second.id}/primary`,
      headers: caller.headers,
    });
    expect(response.json().data.wallet.isPrimary).toBe(true);
    const list = (await ctx.app.inject({ url: '/api/v1/wallets', headers: caller.headers })).json().data
      .wallets;
    expect(list.find((w: { id: string }) => w.id === first.id).isPrimary).toBe(false);
    expect(list.filter((w: { isPrimary: boolean }) => w.isPrimary)).toHaveLength(1);
  });

  it("reads another account's wallet as 404 not_found everywhere", async () => {
    const wallet = (await create(owner, { type: 'CUSTODIAL' })).json().data.wallet;
    const intruder = await signup(ctx.app);
    for (const [method, url] of [
      ['GET', `/api/v1/wallets/${wallet.id}`],
      ['POST', `/api/v1/wallets/${wallet.id}/primary`],
      ['GET', `/api/v1/balances?walletId=${wallet.id}`],
      ['GET', `/api/v1/gas?walletId=${wallet.id}`],
    ] as const) {
      expect(errorOf(await ctx.app.inject({ method, url, headers: intruder.headers }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
    }
  });
});

describe('balances, gas, network and /rpc', () => {
  it('reports the three balances; custodial decrypted, external encrypted with its handle', async () => {
    const caller = await signup(ctx.app);
    const custodial = (await create(caller, { type: 'CUSTODIAL' })).json().data.wallet;
    const external = (await create(caller, { type: 'EXTERNAL', address: randomAddress() })).json().data
      .wallet;
    const key = await apiKeyOf(ctx.app, caller);
    const response = await ctx.app.inject({ url: '/api/v1/balances', headers: key.headers });
    const [mine, watched] = response.json().data.balances;
    expect(mine).toEqual({
      wallet: expect.objectContaining({ id: custodial.id }),
      eth: { amount: '0.00' },
      normal: { token: 'STABLE', amount: '0.00' },
      confidential: {
        token: 'cSTABLE',
        amount: '0.00',
        encrypted: false,
        handle: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      total: { amount: '0.00', currency: 'USD' },
    });
    expect(watched.confidential).toMatchObject({ amount: null, encrypted: true });
    expect(watched.wallet.id).toBe(external.id);
    const one = await ctx.app.inject({ url: `/api/v1/wallets/${custodial.id}`, headers: caller.headers });
    expect(one.json().data).toMatchObject({
      wallet: { id: custodial.id },
      balances: { normal: { amount: '0.00' } },
    });
  });

  it('GET /gas reports gas and public balances in decimals and base units, agreeing with /rpc', async () => {
    const caller = await signup(ctx.app);
    const wallet = (await create(caller, { type: 'CUSTODIAL' })).json().data.wallet;
    const network = ctx.deps.network;
    if (!network) throw new Error('no network');
    // Give the wallet some of each, straight on the chain, then read it back through the API and /rpc.
    const { sendTransactionOrThrow } = await import('../../adapters/chain/tx.ts');
    const { encodeMint } = await import('../../adapters/confidential/helpers.ts');
    await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: wallet.address,
      value: 1234n * 10n ** 14n,
    });
    await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: network.contracts.stablecoin,
      data: encodeMint(wallet.address, 42_500_000n),
    });
    const gas = (
      await ctx.app.inject({ url: `/api/v1/gas?walletId=${wallet.id}`, headers: caller.headers })
    ).json().data.wallets[0];
    expect(gas).toEqual({
      walletId: wallet.id,
      address: wallet.address,
      eth: { amount: '0.1234', baseUnits: '123400000000000000' },
      normal: { token: 'STABLE', amount: '42.50', baseUnits: '42500000' },
    });
    const info = (await ctx.app.inject({ url: '/api/v1/network' })).json().data;
    expect(info).toMatchObject({
      network: 'local',
      environment: 'sandbox',
      chainId: 31337,
      rpcUrl: 'http://localhost:8080/rpc',
      explorerBaseUrl: null,
      confidentiality: 'mock',
    });
    const client = rpcClient(ctx.app);
    expect(await client.getChainId()).toBe(31337);
    expect(await client.getBalance({ address: wallet.address })).toBe(123_400_000_000_000_000n);
    expect(
      await client.readContract({
        address: info.contracts.stablecoin,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [wallet.address],
      }),
    ).toBe(42_500_000n);
    for (const address of Object.values(info.contracts) as `0x${string}`[]) {
      expect((await client.getCode({ address }))?.length ?? 0).toBeGreaterThan(2);
    }
  });

  it('/rpc refuses node-side signing and answers malformed JSON with a JSON-RPC parse error', async () => {
    const signing = await ctx.app.inject({
      method: 'POST',
      url: '/rpc',
      payload: { jsonrpc: '2.0', id: 7, method: 'eth_sendTransaction', params: [{}] },
    });
    expect(signing.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
    const garbage = await ctx.app.inject({
      method: 'POST',
      url: '/rpc',
      headers: { 'content-type': 'application/json' },
      payload: '{nope',
    });
    expect(garbage.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("/rpc refuses every development method the devnet answers (the chain's history is the service's)", async () => {
    const devMethods = [
      'evm_setAutomine',
      'anvil_setAutomine',
      'evm_setIntervalMining',
      'evm_mine',
      'hardhat_mine',
      'anvil_mine',
      'evm_increaseTime',
      'evm_setNextBlockTimestamp',
      'evm_snapshot',
      'evm_revert',
      'anvil_setNextBlockBaseFeePerGas',
      'hardhat_setNextBlockBaseFeePerGas',
      'anvil_dropTransaction',
      'anvil_dropAllTransactions',
      'anvil_reorg',
      'anvil_rollback',
      'anvil_setBalance',
      'hardhat_setBalance',
      'txpool_content',
    ];
    const before = await ctx.app.inject({
      method: 'POST',
      url: '/rpc',
      payload: { jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] },
    });
    const responses = await ctx.app.inject({
      method: 'POST',
      url: '/rpc',
      payload: devMethods.map((method, id) => ({ jsonrpc: '2.0', id, method, params: [] })),
    });
    expect(responses.json()).toEqual(
      devMethods.map((method, id) => ({
        jsonrpc: '2.0',
        id,
        error: { code: -32601, message: `Method ${method} is not available on this endpoint` },
      })),
    );
    const after = await ctx.app.inject({
      method: 'POST',
      url: '/rpc',
      payload: { jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] },
    });
    expect(after.json().result).toBe(before.json().result);
  });
});
