import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { type Address, erc20Abi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, apiOf, type RequestBodyOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  rpcClient,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
let aliceWallet: { id: string; address: Address };
let bobWallet: { id: string; address: Address };

async function createWallet(caller: Caller, body: RequestBodyOf<'post', '/wallets'> = { type: 'CUSTODIAL' }) {
  const response = await api.post('/wallets', { body, headers: caller.headers });
  expect(response.statusCode).toBe(201);
  return response.json().data.wallet;
}

async function settled(caller: Caller, response: ApiResponse) {
  expect(response.statusCode).toBe(201);
  return waitForStatus(ctx.app, caller.headers, response.json().data.transaction.id);
}

async function balances(caller: Caller, walletId: string) {
  const response = await api.get('/balances', { query: { walletId }, headers: caller.headers });
  return response.json().data.balances[0];
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: { RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
  });
  alice = await signup(ctx.app);
  bob = await signup(ctx.app);
  aliceWallet = await createWallet(alice);
  bobWallet = await createWallet(bob);
});
afterAll(() => ctx.close());

describe('fund, mint, transfer, redeem', () => {
  it('funds: 201 QUEUED with txHash null, then CONFIRMED with the gas top-up hash', async () => {
    const response = await api.post('/fund', {
      body: { walletId: aliceWallet.id, amount: '500' },
      headers: alice.headers,
    });
    expect(response.statusCode).toBe(201);
    const queued = response.json().data.transaction;
    expect(queued).toMatchObject({
      type: 'FUND',
      status: 'QUEUED',
      txHash: null,
      errorCode: null,
      error: null,
      amount: '500.00',
      token: 'STABLE',
      walletId: aliceWallet.id,
    });
    const done = await waitForStatus(ctx.app, alice.headers, queued.id);
    expect(done.status).toBe('CONFIRMED');
    expect(done.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.metadata.gasTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    const balance = await balances(alice, aliceWallet.id);
    expect(balance.normal).toEqual({ token: 'STABLE', amount: '500.00' });
    expect(Number.parseFloat(balance.eth.amount)).toBeGreaterThan(0);
    const onChain = await rpcClient(ctx.app).readContract({
      address: (await api.get('/network')).json().data.contracts.stablecoin,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [aliceWallet.address],
    });
    expect(onChain).toBe(500_000_000n);
  });

  it('mints cSTABLE from STABLE and the decrypted balance shows it', async () => {
    const done = await settled(
      alice,
      await api.post('/mint', { body: { walletId: aliceWallet.id, amount: '200' }, headers: alice.headers }),
    );
    expect(done).toMatchObject({ type: 'MINT', status: 'CONFIRMED', token: 'cSTABLE' });
    const balance = await balances(alice, aliceWallet.id);
    expect(balance.normal.amount).toBe('300.00');
    expect(balance.confidential).toMatchObject({ token: 'cSTABLE', amount: '200.00', encrypted: false });
    expect(balance.total).toEqual({ amount: '500.00', currency: 'USD' });
  });

  it('refuses a mint the public balance cannot cover: 400 insufficient_balance, nothing queued', async () => {
    const before = (await api.get('/transactions', { headers: alice.headers })).json().data.total;
    const response = await api.post('/mint', {
      body: { walletId: aliceWallet.id, amount: '100000' },
      headers: alice.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'insufficient_balance' });
    expect((await api.get('/transactions', { headers: alice.headers })).json().data.total).toBe(before);
  });

  it('transfers confidentially to another account; the recipient decrypts exactly the amount', async () => {
    const done = await settled(
      alice,
      await api.post('/transfer', {
        body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '50.5' },
        headers: alice.headers,
      }),
    );
    expect(done).toMatchObject({
      type: 'TRANSFER',
      status: 'CONFIRMED',
      fromAddress: aliceWallet.address,
      toAddress: bobWallet.address,
    });
    expect((await balances(alice, aliceWallet.id)).confidential.amount).toBe('149.50');
    expect((await balances(bob, bobWallet.id)).confidential.amount).toBe('50.50');
  });

  it('reports a transfer the balance cannot cover (an encrypted zero moved) as FAILED, never a success', async () => {
    const done = await settled(
      alice,
      await api.post('/transfer', {
        body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '5000' },
        headers: alice.headers,
      }),
    );
    expect(done.status).toBe('FAILED');
    expect(done.errorCode).toBe('transfer_failed');
    expect(done.error).toMatch(/moved nothing/);
    expect((await balances(alice, aliceWallet.id)).confidential.amount).toBe('149.50');
    expect((await balances(bob, bobWallet.id)).confidential.amount).toBe('50.50');
  });

  it('redeems through SETTLING to SETTLED with the settlement hash (the recipient has no gas of its own)', async () => {
    const done = await settled(
      bob,
      await api.post('/redeem', { body: { walletId: bobWallet.id, amount: '20' }, headers: bob.headers }),
    );
    expect(done).toMatchObject({ type: 'REDEEM', status: 'SETTLED' });
    expect(done.settlementTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    const balance = await balances(bob, bobWallet.id);
    expect(balance.normal.amount).toBe('20.00');
    expect(balance.confidential.amount).toBe('30.50');
  });

  it('a redeem larger than the balance moves nothing and ends FAILED redeem_failed', async () => {
    const done = await settled(
      bob,
      await api.post('/redeem', { body: { walletId: bobWallet.id, amount: '999' }, headers: bob.headers }),
    );
    expect(done).toMatchObject({ status: 'FAILED', errorCode: 'redeem_failed' });
    expect((await balances(bob, bobWallet.id)).confidential.amount).toBe('30.50');
  });

  it('caps the faucet at 1000 per account over 24 hours: FAILED faucet_cap_exceeded', async () => {
    const ok = await settled(
      alice,
      await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '500' }, headers: alice.headers }),
    );
    expect(ok.status).toBe('CONFIRMED');
    const over = await settled(
      alice,
      await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '0.01' }, headers: alice.headers }),
    );
    expect(over).toMatchObject({ status: 'FAILED', errorCode: 'faucet_cap_exceeded', txHash: null });
    expect(over.error).toMatch(/1000/);
  });
  it('runs several mints of one wallet at once, each judged by its own wrap', async () => {
    const before = await balances(alice, aliceWallet.id);
    const responses = await Promise.all(
      ['1.5', '2.25', '3'].map((amount) =>
        api.post('/mint', { body: { walletId: aliceWallet.id, amount }, headers: alice.headers }),
      ),
    );
    const done = await Promise.all(responses.map((response) => settled(alice, response)));
    expect(done.map((transaction) => transaction.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
    const after = await balances(alice, aliceWallet.id);
    expect(Number(after.confidential.amount) - Number(before.confidential.amount)).toBeCloseTo(6.75, 6);
    expect(Number(before.normal.amount) - Number(after.normal.amount)).toBeCloseTo(6.75, 6);
  });
});

describe('validation and ownership', () => {
  it.each([
    ['/mint', { amount: 12.5 }],
    ['/mint', { amount: '-1' }],
    ['/mint', { amount: '0' }],
    ['/mint', { amount: '1.0000001' }],
    ['/mint', {}],
    ['/transfer', { to: '0x000000000000000000000000000000000000dEaD', amount: 'ten' }],
    ['/redeem', { amount: '1e3' }],
    ['/fund', { amount: 'abc' }],
  ])('%s with %j is 400 invalid_amount', async (url, body) => {
    // A table of routes and wrong amounts: each sent as written.
    const response = await api.raw('POST', url, {
      payload: { walletId: aliceWallet.id, ...body },
      headers: alice.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_amount' });
  });

  it.each(['0x123', 'not-an-address', '0x0000000000000000000000000000000000000000'])(
    'transfer to %s is 400 invalid_recipient',
    async (to) => {
      const response = await api.post('/transfer', {
        body: { walletId: aliceWallet.id, to, amount: '1' },
        headers: alice.headers,
      });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'invalid_recipient' });
    },
  );

  it("another account's wallet is 404 not_found on every operation", async () => {
    for (const [url, body] of [
      ['/fund', {}],
      ['/mint', { amount: '1' }],
      ['/transfer', { to: aliceWallet.address, amount: '1' }],
      ['/redeem', { amount: '1' }],
    ] as const) {
      const response = await api.post(url, {
        body: { walletId: aliceWallet.id, ...body },
        headers: bob.headers,
      });
      expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('an external wallet can receive but cannot send', async () => {
    const external = await createWallet(alice, {
      type: 'EXTERNAL',
      address: `0x${randomBytes(20).toString('hex')}`,
    });
    const response = await api.post('/transfer', {
      body: {
        walletId: external.id,
        to: bobWallet.address,
        amount: '1',
      },
      headers: alice.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'wallet_not_custodial' });
    // Minting and redeeming send from the wallet too; the faucet pays into any wallet.
    for (const url of ['/mint', '/redeem'] as const) {
      const refused = await api.post(url, {
        body: { walletId: external.id, amount: '1' },
        headers: alice.headers,
      });
      expect(errorOf(refused), url).toMatchObject({ status: 400, code: 'wallet_not_custodial' });
    }
    const received = await settled(
      alice,
      await api.post('/transfer', {
        body: { walletId: aliceWallet.id, to: external.address, amount: '1' },
        headers: alice.headers,
      }),
    );
    expect(received.status).toBe('CONFIRMED');
    const balance = await balances(alice, external.id);
    expect(balance.confidential).toMatchObject({ amount: null, encrypted: true });
    expect(balance.confidential.handle).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('works with an API key, and requires credentials', async () => {
    const key = await apiKeyOf(ctx.app, alice);
    const response = await api.post('/mint', {
      body: { walletId: aliceWallet.id, amount: '1' },
      headers: key.headers,
    });
    expect(response.statusCode).toBe(201);
    const anonymous = await api.post('/mint', { body: { walletId: aliceWallet.id, amount: '1' } });
    expect(errorOf(anonymous)).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('idempotency', () => {
  it('a repeat with the same key and body returns the original 201 and transaction', async () => {
    const key = `idem-${randomBytes(4).toString('hex')}`;
    const first = await api.post('/transfer', {
      body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '1' },
      headers: alice.headers,
      idempotencyKey: key,
    });
    const second = await api.post('/transfer', {
      body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '1' },
      headers: alice.headers,
      idempotencyKey: key,
    });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json().data.transaction.id).toBe(first.json().data.transaction.id);
    const conflict = await api.post('/transfer', {
      body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '2' },
      headers: alice.headers,
      idempotencyKey: key,
    });
    expect(errorOf(conflict)).toMatchObject({ status: 409, code: 'idempotency_conflict' });
  });

  it('every queued operation refuses a key reused with another body: 409 idempotency_conflict', async () => {
    const dave = await signup(ctx.app);
    const wallet = await createWallet(dave);
    const funded = await settled(
      dave,
      await api.post('/fund', { body: { walletId: wallet.id, amount: '10' }, headers: dave.headers }),
    );
    expect(funded.status).toBe('CONFIRMED');
    for (const url of ['/fund', '/mint', '/redeem'] as const) {
      const key = `conflict-${randomBytes(4).toString('hex')}`;
      const first = await api.post(url, {
        body: { walletId: wallet.id, amount: '1' },
        headers: dave.headers,
        idempotencyKey: key,
      });
      expect(first.statusCode, url).toBe(201);
      const conflict = await api.post(url, {
        body: { walletId: wallet.id, amount: '2' },
        headers: dave.headers,
        idempotencyKey: key,
      });
      expect(errorOf(conflict), url).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    }
  });

  it('concurrent duplicates create one transaction', async () => {
    const key = `race-${randomBytes(4).toString('hex')}`;
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post('/mint', {
          body: { walletId: aliceWallet.id, amount: '1' },
          headers: alice.headers,
          idempotencyKey: key,
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(responses.map((r) => r.json().data.transaction.id)).size).toBe(1);
  });

  it('a new key gets every request-time check; a replay of a spent key still returns the original 201', async () => {
    const carol = await signup(ctx.app);
    const wallet = await createWallet(carol);
    const funded = await settled(
      carol,
      await api.post('/fund', { body: { walletId: wallet.id, amount: '10' }, headers: carol.headers }),
    );
    expect(funded.status).toBe('CONFIRMED');
    const count = async () => (await api.get('/transactions', { headers: carol.headers })).json().data.total;
    const before = await count();
    const keyed: Record<string, string> = { 'idempotency-key': `over-${randomBytes(4).toString('hex')}` };
    for (const headers of [{}, keyed]) {
      const over = await api.post('/mint', {
        body: { walletId: wallet.id, amount: '5000' },
        headers: { ...carol.headers, ...headers },
      });
      expect(errorOf(over)).toMatchObject({ status: 400, code: 'insufficient_balance' });
    }
    expect(await count()).toBe(before);

    const key = `spend-${randomBytes(4).toString('hex')}`;
    const first = await api.post('/mint', {
      body: { walletId: wallet.id, amount: '10' },
      headers: carol.headers,
      idempotencyKey: key,
    });
    expect((await settled(carol, first)).status).toBe('CONFIRMED');
    expect((await balances(carol, wallet.id)).normal.amount).toBe('0.00');
    const replayed = await api.post('/mint', {
      body: { walletId: wallet.id, amount: '10' },
      headers: carol.headers,
      idempotencyKey: key,
    });
    expect(replayed.statusCode).toBe(201);
    expect(replayed.json().data.transaction.id).toBe(first.json().data.transaction.id);
    expect(await count()).toBe(before + 1);
  });

  it('two Idempotency-Key values on one request, in two header lines or joined in one: 400 validation_error naming the header, nothing queued', async () => {
    // Over a real socket: Node joins repeated headers into one value ("a, b"), which became a key neither named.
    // HTTP reads one line of comma-joined values as those values on lines of their own (a proxy may join them).
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const count = async () => (await api.get('/transactions', { headers: alice.headers })).json().data.total;
    const before = await count();
    const refused = {
      code: 'validation_error',
      details: [{ path: 'headers.idempotency-key', message: 'must be sent once' }],
    };
    for (const keys of [
      ['twice-a', 'twice-a'],
      ['twice-a', 'twice-b'],
      'joined-a, joined-b',
      'joined-a,joined-a',
      'joined-a,',
    ]) {
      const body = JSON.stringify({ walletId: aliceWallet.id, amount: '1' });
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const sent = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/fund',
            headers: { ...alice.headers, 'content-type': 'application/json', 'idempotency-key': keys },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => {
              text += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
          },
        );
        sent.on('error', reject);
        sent.end(body);
      });
      expect(answer.status, String(keys)).toBe(400);
      expect(JSON.parse(answer.body).error).toMatchObject(refused);
    }
    // The same through app.inject, which hands Fastify the joined line as it is.
    const joined = await api.post('/fund', {
      body: { walletId: aliceWallet.id, amount: '1' },
      headers: alice.headers,
      idempotencyKey: 'joined-a, joined-b',
    });
    expect(errorOf(joined)).toMatchObject({ status: 400, ...refused });
    expect(await count()).toBe(before);
    // One header is a key as before.
    const once = await api.post('/fund', {
      body: { walletId: aliceWallet.id, amount: '1' },
      headers: alice.headers,
      idempotencyKey: 'twice-a',
    });
    expect(once.statusCode).toBe(201);
  });

  it('the same key from another account is independent', async () => {
    const key = `shared-${randomBytes(4).toString('hex')}`;
    const a = await api.post('/transfer', {
      body: { walletId: aliceWallet.id, to: bobWallet.address, amount: '1' },
      headers: alice.headers,
      idempotencyKey: key,
    });
    const b = await api.post('/transfer', {
      body: { walletId: bobWallet.id, to: aliceWallet.address, amount: '1' },
      headers: bob.headers,
      idempotencyKey: key,
    });
    expect(a.json().data.transaction.id).not.toBe(b.json().data.transaction.id);
  });
});

describe('transaction reads', () => {
  it('lists newest first with page, pageSize, total and filters', async () => {
    const all = (await api.get('/transactions', { query: { pageSize: 100 }, headers: alice.headers })).json()
      .data;
    expect(all.total).toBeGreaterThan(5);
    const times = all.items.map((t: { createdAt: string }) => t.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const page = (
      await api.get('/transactions', { query: { page: 2, pageSize: 2 }, headers: alice.headers })
    ).json().data;
    expect(page).toMatchObject({ page: 2, pageSize: 2, total: all.total });
    expect(page.items.map((t: { id: string }) => t.id)).toEqual(
      all.items.slice(2, 4).map((t: { id: string }) => t.id),
    );
    const funds = (
      await api.get('/transactions', { query: { type: 'FUND', status: 'CONFIRMED' }, headers: alice.headers })
    ).json().data;
    expect(
      funds.items.every(
        (t: { type: string; status: string }) => t.type === 'FUND' && t.status === 'CONFIRMED',
      ),
    ).toBe(true);
    expect(funds.total).toBe(2);
  });

  it.each(['pageSize=101', 'pageSize=0', 'page=0', 'type=NOPE', 'status=DONE'])(
    'rejects %s with validation_error',
    async (query) => {
      // Queries the document refuses: sent as written.
      const response = await api.raw('GET', `/transactions?${query}`, { headers: alice.headers });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
    },
  );

  it("another account's transaction is 404 not_found", async () => {
    const mine = (await api.get('/transactions', { headers: alice.headers })).json().data.items[0];
    const response = await api.get('/transactions/{id}', { params: { id: mine.id }, headers: bob.headers });
    expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    const foreignFilter = await api.get('/transactions', {
      query: { walletId: aliceWallet.id },
      headers: bob.headers,
    });
    expect(errorOf(foreignFilter)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('every transaction carries every field of the interface, and its direction, block and log index', async () => {
    const item = (await api.get('/transactions', { headers: alice.headers })).json().data.items[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        'amount',
        'blockNumber',
        'chainId',
        'counterparty',
        'direction',
        'createdAt',
        'error',
        'errorCode',
        'explorerUrl',
        'fromAddress',
        'id',
        'logIndex',
        'metadata',
        'settlementTxHash',
        'status',
        'toAddress',
        'token',
        'txHash',
        'type',
        'updatedAt',
        'walletId',
      ].sort(),
    );
    expect(item.chainId).toBe(31337);
    expect(item.direction).toBe('out');
  });
});
