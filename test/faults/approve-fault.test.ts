/**
 * Stored signatures whose broadcast a crash cut off, sent again by their row even when the chain no longer seems to
 * need them.
 *
 * A mint signs its `approve` of the wrapper when the allowance is short. When the process dies between storing that
 * approval and broadcasting it, and another mint's approval of the same wallet lands meanwhile, the allowance is
 * enough when the row runs again: the row must still send its stored approval, whose bytes hold the wallet's next
 * nonce, or its wrap and every later transaction of the wallet wait behind the gap for good. The same holds for a
 * sponsored gas top-up, signed by the operator: left unsent, every later operator transaction would wait.
 */
import { and, eq } from 'drizzle-orm';
import { type Address, maxUint256 } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../src/adapters/chain/types.ts';
import { encodeApprove } from '../../src/adapters/confidential/helpers.ts';
import { chainSubmissions, transactions } from '../../src/db/schema/index.ts';
import { spendingWallet } from '../../src/modules/wallets/wallets.service.ts';
import { submitOnce } from '../../src/worker/submissions.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { createTestContext, postData, signup, type TestContext, waitForStatus } from '../harness.ts';
import { networkWithFault } from './faulty-network.ts';

let ctx: TestContext;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** The network with every broadcast lost before it reaches the node (the process died there). */
const losingBroadcasts = (base: Network) =>
  networkWithFault(base, ({ method }) => {
    if (method === 'eth_sendRawTransaction') throw new Error('injected fault: the process died here');
  });

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: { RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
  });
});
afterAll(async () => {
  await ctx?.close();
});

/** A new account with one custodial wallet, and a poster of its money movements (answers the transaction's id). */
async function accountWithWallet() {
  const caller = await signup(ctx.app);
  const post = async (path: string, payload: object) =>
    (await postData(ctx.app, caller.headers, path, payload)).transaction.id as string;
  const { wallet } = await postData(ctx.app, caller.headers, '/wallets', { type: 'CUSTODIAL' });
  return { caller, post, wallet: wallet as { id: string; address: Address } };
}

describe('a mint whose approval was signed but never sent', () => {
  it('sends it even though another approval made the allowance enough: the mint confirms, no nonce gap', async () => {
    const { caller, post, wallet } = await accountWithWallet();
    const network = ctx.deps.network as Network;
    const { db } = ctx.deps.database;

    // The first mint approves the wrapper without limit and wraps: the allowance is enough for every later mint.
    let stop = await startWorker(ctx.deps, quiet as never);
    for (const path of ['/fund', '/mint']) {
      const id = await post(path, { walletId: wallet.id, amount: path === '/fund' ? '50' : '10' });
      expect((await waitForStatus(ctx.app, caller.headers, id)).status).toBe('CONFIRMED');
    }
    await stop();

    // A second mint that found the allowance short a moment earlier (both mints were in flight): its approval is
    // signed and stored at the wallet's next nonce, and the process died before broadcasting it.
    const second = await post('/mint', { walletId: wallet.id, amount: '5' });
    const [row] = await db.select().from(transactions).where(eq(transactions.id, second));
    if (!row) throw new Error('no row');
    const { key } = await spendingWallet({ deps: ctx.deps, network }, row);
    await expect(
      submitOnce({ deps: ctx.deps, network: losingBroadcasts(network) }, row, 'approve', key, async () => ({
        to: network.contracts.stablecoin,
        data: encodeApprove(network.contracts.confidentialToken, maxUint256),
        gas: 100_000n,
      })),
    ).rejects.toThrow(/process died/);

    // Run again, it finds the allowance enough; its wrap takes the nonce after the stored approval's.
    stop = await startWorker(ctx.deps, quiet as never);
    try {
      const done = await waitForStatus(ctx.app, caller.headers, second, undefined, 90_000);
      expect(done.status).toBe('CONFIRMED');
    } finally {
      await stop();
    }
    const signed = await db
      .select()
      .from(chainSubmissions)
      .where(eq(chainSubmissions.fromAddress, wallet.address));
    expect(await network.publicClient.getTransactionCount({ address: wallet.address })).toBe(signed.length);
  }, 240_000);
});

describe('a gas top-up signed but never sent', () => {
  it('is sent even though the wallet has gas now: the operator signs on, no nonce gap', async () => {
    const { caller, post, wallet } = await accountWithWallet();
    const network = ctx.deps.network as Network;
    const { db } = ctx.deps.database;

    // Funded: the wallet has gas of its own.
    let stop = await startWorker(ctx.deps, quiet as never);
    const funded = await post('/fund', { walletId: wallet.id, amount: '50' });
    expect((await waitForStatus(ctx.app, caller.headers, funded)).status).toBe('CONFIRMED');
    await stop();

    // A mint whose top-up was signed by the operator (the wallet looked short a moment earlier) and stored, and the
    // process died before broadcasting it.
    const mint = await post('/mint', { walletId: wallet.id, amount: '5' });
    const [row] = await db.select().from(transactions).where(eq(transactions.id, mint));
    if (!row) throw new Error('no row');
    await expect(
      submitOnce(
        { deps: ctx.deps, network: losingBroadcasts(network) },
        row,
        'gas',
        network.operator.privateKey,
        async () => ({
          to: wallet.address,
          value: 1n,
        }),
      ),
    ).rejects.toThrow(/process died/);

    stop = await startWorker(ctx.deps, quiet as never);
    try {
      expect((await waitForStatus(ctx.app, caller.headers, mint, undefined, 90_000)).status).toBe(
        'CONFIRMED',
      );
      // An operator transaction after it goes through.
      const again = await post('/fund', { walletId: wallet.id, amount: '1' });
      expect((await waitForStatus(ctx.app, caller.headers, again, undefined, 90_000)).status).toBe(
        'CONFIRMED',
      );
    } finally {
      await stop();
    }
    // The lost top-up itself went out (it held the operator's nonce).
    const [topUp] = await db
      .select()
      .from(chainSubmissions)
      .where(and(eq(chainSubmissions.transactionId, mint), eq(chainSubmissions.purpose, 'gas')));
    const receipt = await network.publicClient.getTransactionReceipt({
      hash: topUp?.txHash as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
  }, 240_000);
});
