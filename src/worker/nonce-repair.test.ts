import { eq } from 'drizzle-orm';
import { getAddress, type Hex, keccak256 } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, signup, type TestContext } from '../../test/harness.ts';
import { signTransaction, waitForReceipt } from '../adapters/chain/tx.ts';
import type { Network } from '../adapters/chain/types.ts';
import { addressNonces, chainSubmissions } from '../db/schema/index.ts';
import { newId } from '../lib/ids.ts';
import { custodialKeyOf } from '../modules/wallets/wallets.service.ts';
import { describeNonceRepair, repairNonces } from './nonce-repair.ts';
import { claimRow, processRow } from './worker.ts';

let ctx: TestContext;
let network: Network;
let caller: Caller;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  // No worker loop: the test decides when rows are driven.
  ctx = await createTestContext({ network: true });
  network = ctx.deps.network as Network;
  caller = await signup(ctx.app);
});
afterAll(async () => {
  await ctx.close();
});

const operator = () => getAddress(network.operator.address);
const count = (tag: 'latest' | 'pending') =>
  network.publicClient.getTransactionCount({ address: operator(), blockTag: tag });

/** What another process would leave behind: the counter already past a nonce the chain never got. */
async function setCounter(next: number): Promise<void> {
  await ctx.deps.database.db
    .insert(addressNonces)
    .values({ address: operator(), nextNonce: next })
    .onConflictDoUpdate({ target: addressNonces.address, set: { nextNonce: next } });
}

describe('sealpay repair nonces', () => {
  it('fills a gap nothing was stored for, and the transaction waiting behind it is mined', async () => {
    const missing = await count('latest');
    await setCounter(missing + 2);
    const waiting = await signTransaction(network, {
      privateKey: network.operator.privateKey,
      to: '0x00000000000000000000000000000000000000c1',
      value: 1n,
      gas: 21_000n,
      nonce: missing + 1,
    });
    await network.publicClient.sendRawTransaction({ serializedTransaction: waiting.serialized });
    expect(await count('pending')).toBe(missing); // stuck behind the gap

    const report = await repairNonces(ctx.deps, network, custodialKeyOf);
    expect(report.repairs).toEqual([
      expect.objectContaining({ address: operator(), nonce: missing, action: 'filled' }),
    ]);
    expect(describeNonceRepair(report)).toContain(
      `nonce ${missing}: gap (nothing was stored for it); filled`,
    );
    const fill = await network.publicClient.getTransaction({ hash: report.repairs[0]?.txHash as Hex });
    expect(fill).toMatchObject({ from: operator().toLowerCase(), to: operator().toLowerCase(), value: 0n });
    expect((await waitForReceipt(network, waiting.hash, { timeoutMs: 5000 })).status).toBe('success');
    expect(await count('latest')).toBe(missing + 2);

    const again = await repairNonces(ctx.deps, network, custodialKeyOf);
    expect(again.repairs).toEqual([]);
    expect(describeNonceRepair(again)).toMatch(/checked, no gap$/);
  });

  it('fills the nonce of a stored signature the chain refuses, and the row signs its intent again, once', async () => {
    const queued = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/wallets',
      headers: caller.headers,
      payload: { type: 'CUSTODIAL' },
    });
    const walletId = queued.json().data.wallet.id as string;
    const fund = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/fund',
      headers: caller.headers,
      payload: { walletId, amount: '10' },
    });
    const transactionId = fund.json().data.transaction.id as string;

    // A signature stored for the row's fund step that the chain refuses (more value than the operator has), at
    // the next nonce, and a later nonce already taken by another process.
    const nonce = await count('latest');
    await setCounter(nonce + 1);
    const refused = await signTransaction(network, {
      privateKey: network.operator.privateKey,
      to: '0x00000000000000000000000000000000000000c2',
      value: 10n ** 40n,
      gas: 21_000n,
      nonce,
    });
    await ctx.deps.database.db.insert(chainSubmissions).values({
      id: newId(),
      transactionId,
      purpose: 'fund',
      fromAddress: operator(),
      nonce,
      rawTx: refused.serialized,
      txHash: keccak256(refused.serialized),
      status: 'SIGNED',
    });

    const report = await repairNonces(ctx.deps, network, custodialKeyOf);
    expect(report.repairs).toEqual([
      expect.objectContaining({
        nonce,
        action: 'filled',
        reason: expect.stringMatching(/^its stored transaction was refused/),
      }),
    ]);

    const row = await claimRow(ctx.deps, transactionId, 'test-worker');
    if (!row) throw new Error('row not claimable');
    await processRow(ctx.deps, row, quiet);
    const submissions = await ctx.deps.database.db
      .select()
      .from(chainSubmissions)
      .where(eq(chainSubmissions.transactionId, transactionId));
    const fundStep = submissions.find((s) => s.purpose === 'fund');
    expect(fundStep?.txHash).not.toBe(keccak256(refused.serialized));
    expect(fundStep?.nonce).toBeGreaterThan(nonce);
    const check = await ctx.app.inject({
      method: 'GET',
      url: `/api/v1/transactions/${transactionId}`,
      headers: caller.headers,
    });
    expect(check.json().data.transaction).toMatchObject({ status: 'CONFIRMED', txHash: fundStep?.txHash });
    expect(await count('pending')).toBe(await count('latest'));
  });
});
