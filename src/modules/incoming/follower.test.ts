import { and, eq } from 'drizzle-orm';
import { type Address, createWalletClient, custom, erc20Abi, getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, apiOf } from '../../../test/api.ts';
import {
  type Caller,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import {
  chainSubmissionAttempts,
  chainSubmissions,
  transactions,
  type WalletRow,
  wallets,
} from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { insertTransaction } from '../transactions/transactions.repository.ts';
import { openWalletKey } from '../wallets/custody.ts';
import { followOnce, startFollower } from './follower.service.ts';
import { readCursor } from './incoming.repository.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
let carol: Caller;
let aliceWallet: { id: string; address: Address };
let bobWallet: { id: string; address: Address };
let carolExternal: { id: string; address: Address };
let stopFollower: () => Promise<void>;
const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** The transaction a money movement queued (its 201 asserted), once finished. */
async function settled(caller: Caller, response: ApiResponse) {
  expect(response.statusCode).toBe(201);
  return waitForStatus(ctx.app, caller.headers, response.json().data.transaction.id);
}

async function list(caller: Caller, query: { direction?: 'in' | 'out' } = {}) {
  const response = await api.get('/transactions', {
    query: { pageSize: 100, ...query },
    headers: caller.headers,
  });
  expect(response.statusCode).toBe(200);
  return response.json().data.items as Array<Record<string, unknown>>;
}

/** Waits until the follower has read the chain up to its head. */
async function caughtUp() {
  const network = ctx.deps.network;
  if (!network) throw new Error('no chain');
  const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
  for (let i = 0; i < 400; i++) {
    const cursor = await readCursor(ctx.deps.database.db, network.chainId);
    if (cursor !== null && cursor >= head) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the follower did not catch up');
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      FOLLOWER_POLL_MS: '20',
    },
  });
  stopFollower = startFollower(ctx.deps, silent);
  [alice, bob, carol] = [await signup(ctx.app), await signup(ctx.app), await signup(ctx.app)];
  aliceWallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers })).json()
    .data.wallet;
  bobWallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob.headers })).json().data
    .wallet;
  const external = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
  carolExternal = (
    await api.post('/wallets', { body: { type: 'EXTERNAL', address: external }, headers: carol.headers })
  ).json().data.wallet;
  await settled(
    alice,
    await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '300' }, headers: alice.headers }),
  );
  await settled(
    alice,
    await api.post('/mint', { body: { walletId: aliceWallet.id, amount: '200' }, headers: alice.headers }),
  );
});
afterAll(async () => {
  await stopFollower?.();
  await ctx?.close();
});

describe('money received', () => {
  it('shows a transfer as out for the sender and in for the recipient, once each', async () => {
    const sent = await settled(
      alice,
      await api.post('/transfer', {
        body: {
          walletId: aliceWallet.id,
          to: bobWallet.address,
          amount: '25',
        },
        headers: alice.headers,
      }),
    );
    expect(sent).toMatchObject({ type: 'TRANSFER', direction: 'out', status: 'CONFIRMED' });
    await caughtUp();
    const bobs = await list(bob);
    expect(bobs).toHaveLength(1);
    expect(bobs[0]).toMatchObject({
      type: 'TRANSFER',
      direction: 'in',
      status: 'CONFIRMED',
      amount: '25.00',
      token: 'cSTABLE',
      walletId: bobWallet.id,
      counterparty: getAddress(aliceWallet.address),
      fromAddress: getAddress(aliceWallet.address),
      toAddress: getAddress(bobWallet.address),
      txHash: sent.txHash,
    });
    expect(bobs[0]?.blockNumber).toEqual(expect.any(Number));
    expect(bobs[0]?.logIndex).toEqual(expect.any(Number));
    // The sender's own operations (fund, mint, transfer) are each one row, none duplicated as received.
    const alices = await list(alice);
    expect(alices.map((row) => `${row.type}:${row.direction}`).sort()).toEqual([
      'FUND:out',
      'MINT:out',
      'TRANSFER:out',
    ]);
    expect((await list(bob, { direction: 'out' })).length).toBe(0);
    expect((await list(bob, { direction: 'in' })).length).toBe(1);
  });

  it('records money received by an external wallet with the amount unknown (null)', async () => {
    const sent = await settled(
      alice,
      await api.post('/transfer', {
        body: {
          walletId: aliceWallet.id,
          to: carolExternal.address,
          amount: '7',
        },
        headers: alice.headers,
      }),
    );
    await caughtUp();
    const carols = await list(carol);
    expect(carols).toHaveLength(1);
    expect(carols[0]).toMatchObject({
      type: 'TRANSFER',
      direction: 'in',
      amount: null,
      walletId: carolExternal.id,
      txHash: sent.txHash,
      counterparty: getAddress(aliceWallet.address),
    });
  });

  it('records nothing for a transfer that moved an encrypted zero (the sender could not cover it)', async () => {
    const failed = await settled(
      alice,
      await api.post('/transfer', {
        body: {
          walletId: aliceWallet.id,
          to: bobWallet.address,
          amount: '9999',
        },
        headers: alice.headers,
      }),
    );
    expect(failed.status).toBe('FAILED');
    await caughtUp();
    expect(await list(bob)).toHaveLength(1);
  });

  it('reads the same blocks again after a stop without recording anything twice', async () => {
    await stopFollower();
    const network = ctx.deps.network;
    if (!network) throw new Error('no chain');
    const sent = await settled(
      alice,
      await api.post('/transfer', {
        body: {
          walletId: aliceWallet.id,
          to: bobWallet.address,
          amount: '1.5',
        },
        headers: alice.headers,
      }),
    );
    // A round cut short before its commit leaves the cursor behind: the next rounds read the blocks again.
    const cursor = await readCursor(ctx.deps.database.db, network.chainId);
    await Promise.all([followOnce(ctx.deps, network), followOnce(ctx.deps, network)]);
    stopFollower = startFollower(ctx.deps, silent);
    await caughtUp();
    expect(await readCursor(ctx.deps.database.db, network.chainId)).toBeGreaterThan(cursor ?? 0n);
    const received = (await list(bob)).filter((row) => row.txHash === sent.txHash);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ direction: 'in', amount: '1.50' });
  });

  it('records a letter claim once, as money received by the claimant', async () => {
    const created = await api.post('/transfer/letter', {
      body: {
        walletId: aliceWallet.id,
        amount: '3',
        recipient: {
          name: 'Bob',
          address: { line1: '1 Main St', city: 'Springfield', region: 'IL', country: 'US' },
        },
      },
      headers: alice.headers,
    });
    expect(created.statusCode).toBe(201);
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: created.json().data.letter.claimCode,
        walletId: bobWallet.id,
      },
      headers: bob.headers,
    });
    expect(claim.statusCode).toBe(200);
    await caughtUp();
    const claims = (await list(bob)).filter((row) => row.type === 'LETTER_CLAIM');
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ direction: 'in', amount: '3.00' });
    expect((await list(bob)).filter((row) => row.txHash === claims[0]?.txHash)).toHaveLength(1);
  });

  it('records a public STABLE transfer into a wallet, amount in clear, for any sender', async () => {
    // Sent with Alice's key straight to the chain (a wallet app would), not through the service. Last in the file:
    // the service's own nonce counter for Alice does not know of it.
    const network = ctx.deps.network;
    if (!network) throw new Error('no chain');
    const [row] = await ctx.deps.database.db.select().from(wallets).where(eq(wallets.id, aliceWallet.id));
    const account = privateKeyToAccount(openWalletKey(ctx.deps.keyring, row as WalletRow));
    const signer = createWalletClient({
      account,
      chain: network.chain,
      transport: custom({ request: (args) => (network.rpc as NonNullable<typeof network.rpc>)(args) }),
    });
    const hash = await signer.writeContract({
      address: network.contracts.stablecoin,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [carolExternal.address, 4_250_000n],
    });
    await network.publicClient.waitForTransactionReceipt({ hash });
    await caughtUp();
    const received = (await list(carol)).filter((item) => item.txHash === hash);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      type: 'TRANSFER',
      direction: 'in',
      token: 'STABLE',
      amount: '4.25',
      counterparty: getAddress(aliceWallet.address),
    });
    // The service did not send it: Alice's side is money sent outside sealpay, recorded once.
    const sentOutside = (await list(alice)).filter((item) => item.txHash === hash);
    expect(sentOutside).toHaveLength(1);
    expect(sentOutside[0]).toMatchObject({
      type: 'TRANSFER',
      direction: 'out',
      status: 'CONFIRMED',
      token: 'STABLE',
      amount: '4.25',
      toAddress: getAddress(carolExternal.address),
      counterparty: getAddress(carolExternal.address),
      metadata: { sentOutside: true },
    });
    // However often its block is read, the database keeps one row per log and sending wallet.
    const [recorded] = await ctx.deps.database.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.txHash, hash), eq(transactions.direction, 'out')));
    if (!recorded) throw new Error('no outflow row');
    await expect(insertTransaction(ctx.deps.database.db, { ...recorded, id: newId() })).rejects.toThrow();
  });

  it('records nothing as sent outside for a transaction mined under an earlier attempt of a service submission', async () => {
    // A fee replacement leaves the submission's hash at the latest attempt until one is mined: the chain may mine
    // an earlier one. Here the "earlier attempt" is a transfer signed with Alice's key, stored as the service's.
    await stopFollower();
    const network = ctx.deps.network;
    if (!network) throw new Error('no chain');
    const { db } = ctx.deps.database;
    const [row] = await db.select().from(wallets).where(eq(wallets.id, aliceWallet.id));
    const account = privateKeyToAccount(openWalletKey(ctx.deps.keyring, row as WalletRow));
    const signer = createWalletClient({
      account,
      chain: network.chain,
      transport: custom({ request: (args) => (network.rpc as NonNullable<typeof network.rpc>)(args) }),
    });
    const nonce = await network.publicClient.getTransactionCount({
      address: account.address,
      blockTag: 'pending',
    });
    const hash = await signer.writeContract({
      address: network.contracts.stablecoin,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [carolExternal.address, 1_000_000n],
      nonce,
    });
    const tx = await insertTransaction(db, {
      id: newId(),
      userId: alice.userId,
      walletId: aliceWallet.id,
      type: 'TRANSFER',
      direction: 'out',
      // Not for the worker to drive: the row only stands for the service's intent.
      status: 'CONFIRMED',
      chainId: network.chainId,
      amount: '1000000',
      token: 'STABLE',
    });
    const submissionId = newId();
    const latest = `0x${'ab'.repeat(32)}` as const;
    await db.insert(chainSubmissions).values({
      id: submissionId,
      transactionId: tx.id,
      purpose: 'transfer',
      fromAddress: account.address,
      nonce: 1_000_000 + nonce,
      rawTx: '0x00',
      txHash: latest,
      status: 'SIGNED',
    });
    await db.insert(chainSubmissionAttempts).values([
      { id: newId(), submissionId, rawTx: '0x00', txHash: hash },
      { id: newId(), submissionId, rawTx: '0x00', txHash: latest },
    ]);
    await network.publicClient.waitForTransactionReceipt({ hash });
    stopFollower = startFollower(ctx.deps, silent);
    await caughtUp();
    const outside = (await list(alice)).filter((item) => item.txHash === hash);
    expect(outside).toEqual([]);
  });
});
