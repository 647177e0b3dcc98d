/**
 * The worker on a chain that acts like a public one (issue 27): a base fee held at 10×, a transaction that stays in
 * the pool, a pool that forgets, a block reorganized away before its confirmations. On the embedded chain (anvil)
 * through its development methods; the rows are real (fund, mint, transfer through the API and the worker loop).
 */
import { eq } from 'drizzle-orm';
import { type Address, type Hex, parseTransaction, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPIENT } from '../../test/hardening/fixture.ts';
import { createTestContext, postData, signup, type TestContext, waitForStatus } from '../../test/harness.ts';
import type { Network } from '../adapters/chain/types.ts';
import { chainSubmissionAttempts, chainSubmissions, transactions } from '../db/schema/index.ts';
import type { OperationContext } from '../deps.ts';
import { checkFinality } from './finality.ts';
import { listAttempts } from './submissions.repository.ts';
import { AwaitingChain, settle, submitOnce } from './submissions.ts';

let ctx: TestContext;
let network: Network;
let caller: Awaited<ReturnType<typeof signup>>;
let walletId: string;
let fundRowId: string;

const rpc = (method: string, params: unknown[] = []) => {
  if (!network.rpc) throw new Error('the embedded chain answers dev methods');
  return network.rpc({ method, params });
};
const counter = async (name: keyof TestContext['deps']['metrics']['chain']) =>
  (await ctx.deps.metrics.chain[name].get()).values[0]?.value ?? 0;
const latestBaseFee = async () => (await network.publicClient.getBlock()).baseFeePerGas ?? 0n;

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: { RATE_LIMIT_WRITES_PER_MINUTE: '100000', RATE_LIMIT_READS_PER_MINUTE: '100000' },
  });
  network = ctx.deps.network as Network;
  caller = await signup(ctx.app);
  walletId = (await postData(ctx.app, caller.headers, '/wallets', { type: 'CUSTODIAL' })).wallet.id;
  const funded = await postData(ctx.app, caller.headers, '/fund', { walletId, amount: '100' });
  fundRowId = funded.transaction.id;
  expect((await waitForStatus(ctx.app, caller.headers, fundRowId)).status).toBe('CONFIRMED');
  const minted = await postData(ctx.app, caller.headers, '/mint', { walletId, amount: '50' });
  expect((await waitForStatus(ctx.app, caller.headers, minted.transaction.id)).status).toBe('CONFIRMED');
}, 300_000);
afterAll(() => ctx?.close());

/** Runs `body` with blocks mined only on `evm_mine`: what is broadcast waits in the pool. */
async function withoutAutomine(body: () => Promise<void>): Promise<void> {
  await rpc('evm_setAutomine', [false]);
  try {
    await body();
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

/** Holds the next block's base fee at `fee` until stopped (anvil_setNextBlockBaseFeePerGas before every block). */
function holdBaseFee(fee: bigint): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(fee)]);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

describe('a base fee held at 10×', () => {
  it('fails no payment: a transfer and a fund queued in the spike are re-signed higher at their nonce and confirm', async () => {
    const base = await latestBaseFee();
    // The quote first signatures are priced from lags the spike (a provider without a pending block, a quote
    // cached from before it): what is signed first is refused for its price, as on the chain of the issue.
    const cache = ctx.deps.feeCache;
    const quote = cache.get.bind(cache);
    cache.get = async () => ({ baseFeePerGas: base, maxPriorityFeePerGas: 1_000_000_000n });
    const refusalsBefore = await counter('priceRefusals');
    const release = holdBaseFee(base * 10n);
    try {
      const other = (await postData(ctx.app, caller.headers, '/wallets', { type: 'CUSTODIAL' })).wallet;
      const transfer = await postData(ctx.app, caller.headers, '/transfer', {
        walletId,
        to: other.address,
        amount: '1',
      });
      const fund = await postData(ctx.app, caller.headers, '/fund', { walletId: other.id, amount: '5' });
      const done = await Promise.all(
        [transfer, fund].map((data) =>
          waitForStatus(ctx.app, caller.headers, data.transaction.id, ['CONFIRMED', 'FAILED'], 120_000),
        ),
      );
      expect(done.map((row) => [row.status, row.error ?? null])).toEqual([
        ['CONFIRMED', null],
        ['CONFIRMED', null],
      ]);
      // Each row's hash is a mined transaction that paid at least the held base fee.
      for (const row of done) {
        const receipt = await network.publicClient.getTransactionReceipt({ hash: row.txHash });
        expect(receipt.status).toBe('success');
        expect(receipt.effectiveGasPrice).toBeGreaterThanOrEqual(base * 5n);
      }
    } finally {
      cache.get = quote;
      await release();
    }
    expect(await counter('priceRefusals')).toBeGreaterThan(refusalsBefore);
    // Every intent has one nonce; its replacements share it and the submission carries the mined attempt.
    const submissions = await ctx.deps.database.db.select().from(chainSubmissions);
    const nonces = submissions.map((row) => `${row.fromAddress}:${row.nonce}`);
    expect(new Set(nonces).size).toBe(nonces.length);
    let replaced = 0;
    for (const submission of submissions) {
      const attempts = await listAttempts(ctx.deps.database.db, submission.id);
      expect(attempts.length).toBeGreaterThan(0);
      for (const attempt of attempts) expect(parseTransaction(attempt.rawTx).nonce).toBe(submission.nonce);
      if (attempts.length > 1) replaced += 1;
      expect(attempts.map((attempt) => attempt.txHash)).toContain(submission.txHash);
    }
    expect(replaced).toBeGreaterThan(0);
  }, 240_000);
});

/** The worker's context with `CONFIRMATIONS` set to `confirmations`. */
function contextWith(confirmations: number): OperationContext {
  const { config } = ctx.deps;
  const deps = { ...ctx.deps, config: { ...config, chainPolicy: { ...config.chainPolicy, confirmations } } };
  return { deps, network };
}

/** An operator transaction for the fund row, driven by hand through `submitOnce` and `settle`. */
function operatorStep(purpose: string, options: { confirmations?: number } = {}) {
  const step = contextWith(options.confirmations ?? 0);
  const submit = () =>
    submitOnce(step, { id: fundRowId }, purpose, network.operator.privateKey, async () => ({
      to: '0x000000000000000000000000000000000000dEaD' as Address,
      value: 1n,
    }));
  /** Runs the step as the worker does: again after every AwaitingChain, until it has its receipt. */
  const drive = async (between: () => Promise<unknown> = async () => {}) => {
    for (let round = 0; round < 200; round++) {
      const submission = await submit();
      try {
        return await settle(step, submission, { timeoutMs: 300 });
      } catch (error) {
        if (!(error instanceof AwaitingChain)) throw error;
        await between();
      }
    }
    throw new Error(`${purpose} never settled`);
  };
  return { submit, drive };
}

async function attemptsOf(purpose: string) {
  const { db } = ctx.deps.database;
  const [submission] = await db.select().from(chainSubmissions).where(eq(chainSubmissions.purpose, purpose));
  if (!submission) throw new Error(`no submission for ${purpose}`);
  return { submission, attempts: await listAttempts(db, submission.id) };
}

describe('a transaction left in the pool', () => {
  it('is replaced after STUCK_AFTER_BLOCKS blocks at the same nonce, +12.5 % on both fees; the mined one is the hash', async () => {
    const replacementsBefore = await counter('replacements');
    await withoutAutomine(async () => {
      const step = operatorStep('stuck-test');
      const first = await step.submit();
      // The row it carries shows its hash while PENDING (leased here, so that no worker drives it meanwhile).
      const { db } = ctx.deps.database;
      const [row] = await db.select().from(transactions).where(eq(transactions.id, fundRowId));
      const lease = { leaseOwner: 'test', leaseUntil: new Date(Date.now() + 3_600_000) };
      await db
        .update(transactions)
        .set({ status: 'PENDING', txHash: first.txHash, ...lease })
        .where(eq(transactions.id, fundRowId));
      // Blocks come, priced above what it offered: it stays in the pool.
      const fees = parseTransaction(first.rawTx);
      const above = (fees.maxFeePerGas ?? 0n) * 2n;
      const receipt = await step.drive(async () => {
        await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(above)]);
        await rpc('evm_mine');
      });
      // The PENDING row took the mined replacement's hash.
      const [pending] = await db.select().from(transactions).where(eq(transactions.id, fundRowId));
      expect(pending?.txHash).toBe(receipt.transactionHash);
      await db
        .update(transactions)
        .set({ status: 'CONFIRMED', txHash: row?.txHash, leaseOwner: null, leaseUntil: null })
        .where(eq(transactions.id, fundRowId));
      // Once replaced above the base fee it is mined by the next block; the receipt is a replacement's.
      const { submission, attempts } = await attemptsOf('stuck-test');
      expect(attempts.length).toBeGreaterThan(1);
      expect(receipt.transactionHash).not.toBe(first.txHash);
      expect(submission.txHash).toBe(receipt.transactionHash);
      expect(submission.status).toBe('MINED');
      const [a, b] = attempts.map((attempt) => parseTransaction(attempt.rawTx));
      expect(b?.nonce).toBe(a?.nonce);
      expect(b?.to).toBe(a?.to);
      expect(b?.value).toBe(a?.value);
      expect((b?.maxFeePerGas ?? 0n) * 1000n).toBeGreaterThanOrEqual((a?.maxFeePerGas ?? 0n) * 1125n);
      expect((b?.maxPriorityFeePerGas ?? 0n) * 1000n).toBeGreaterThanOrEqual(
        (a?.maxPriorityFeePerGas ?? 0n) * 1125n,
      );
      expect(await counter('replacements')).toBeGreaterThan(replacementsBefore);
    });
  }, 120_000);

  it('waits at MAX_FEE_PER_GAS_GWEI, PENDING, never FAILED, and the metric says so', async () => {
    const waitsBefore = await counter('feeCapWaits');
    await withoutAutomine(async () => {
      const step = operatorStep('cap-test');
      const first = await step.submit();
      const cap = ctx.deps.config.chainPolicy.maxFeePerGas;
      await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(cap * 2n)]);
      await rpc('evm_mine');
      // Driven for a while with the base fee above the cap: replaced up to the cap, then it waits.
      for (let round = 0; round < 30 && (await counter('feeCapWaits')) === waitsBefore; round++) {
        const submission = await step.submit();
        await settle({ deps: ctx.deps, network }, submission, { timeoutMs: 200 }).catch((error: unknown) => {
          if (!(error instanceof AwaitingChain)) throw error;
        });
        await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(cap * 2n)]);
        await rpc('evm_mine');
      }
      expect(await counter('feeCapWaits')).toBeGreaterThan(waitsBefore);
      const { attempts } = await attemptsOf('cap-test');
      for (const attempt of attempts) {
        expect(parseTransaction(attempt.rawTx).maxFeePerGas ?? 0n).toBeLessThanOrEqual(cap);
      }
      // The fees fall: the attempt at the cap is mined, and it is the submission's hash.
      await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(1_000_000_000n)]);
      const receipt = await step.drive(() => rpc('evm_mine'));
      expect(receipt.status).toBe('success');
      expect((await attemptsOf('cap-test')).submission.txHash).toBe(receipt.transactionHash);
      expect(first.nonce).toBe((await attemptsOf('cap-test')).submission.nonce);
    });
  }, 120_000);
});

describe('a pool that forgets', () => {
  it('sends a dropped transaction again at once (the same bytes), and it is mined', async () => {
    const before = await counter('rebroadcasts');
    await withoutAutomine(async () => {
      const step = operatorStep('dropped-test');
      const first = await step.submit();
      await rpc('anvil_dropAllTransactions');
      const known = () => network.publicClient.getTransaction({ hash: first.txHash }).catch(() => null);
      expect(await known()).toBeNull();
      // The wait for its receipt notices at once that the provider forgot it, and sends the same bytes again.
      await expect(settle(contextWith(0), first, { timeoutMs: 100 })).rejects.toBeInstanceOf(AwaitingChain);
      expect(await counter('rebroadcasts')).toBeGreaterThan(before);
      expect((await known())?.hash).toBe(first.txHash);
      const receipt = await step.drive(async () => {
        // Mined only once it is back in the pool.
        const pool = (await rpc('txpool_content')) as { pending: Record<string, unknown> };
        if (Object.keys(pool.pending).length > 0) await rpc('evm_mine');
      });
      expect(receipt.transactionHash).toBe(first.txHash);
    });
  }, 120_000);
});

describe('CONFIRMATIONS', () => {
  it('holds a mined transaction until it has the blocks, and notices a reorg that removes it before', async () => {
    const step = operatorStep('reorg-test', { confirmations: 3 });
    const first = await step.submit();
    // Mined at once (automine), but one block is not three: settle waits, the submission is MINED meanwhile.
    await expect(settle(contextWith(3), first, { timeoutMs: 200 })).rejects.toBeInstanceOf(AwaitingChain);
    const mined = (await attemptsOf('reorg-test')).submission;
    expect(mined.status).toBe('MINED');
    const reorgsBefore = await counter('reorgs');
    // The block holding it is taken away.
    await rpc('anvil_rollback', [1]);
    expect(
      await network.publicClient.getTransactionReceipt({ hash: first.txHash }).catch(() => null),
    ).toBeNull();
    const receipt = await step.drive(() => rpc('evm_mine'));
    expect(await counter('reorgs')).toBeGreaterThan(reorgsBefore);
    const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
    expect(head - receipt.blockNumber + 1n).toBeGreaterThanOrEqual(3n);
    expect(receipt.transactionHash).toBe(first.txHash);
    const settled = (await attemptsOf('reorg-test')).submission;
    expect(settled.blockHash).toBe(receipt.blockHash);
    expect(settled.blockHash).not.toBe(mined.blockHash);
  }, 120_000);
});

describe('the ledger', () => {
  it('gives every confirmed row the hash of a mined attempt of a submission', async () => {
    const { db } = ctx.deps.database;
    const rows = await db.select().from(transactions).where(eq(transactions.status, 'CONFIRMED'));
    const attempts = await db
      .select({ txHash: chainSubmissionAttempts.txHash })
      .from(chainSubmissionAttempts);
    const hashes = new Set(attempts.map((attempt) => attempt.txHash));
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) {
      expect(hashes.has(row.txHash as Hex)).toBe(true);
      const receipt = await network.publicClient.getTransactionReceipt({ hash: row.txHash as Hex });
      expect(receipt.status).toBe('success');
    }
  });
});

describe('a reorg deeper than CONFIRMATIONS', () => {
  it('is logged, counted, and marks the letter it undid needsReview', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/transfer/letter',
      headers: caller.headers,
      payload: {
        walletId,
        amount: '2',
        recipient: RECIPIENT,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const letter = created.json().data.letter;
    const escrow = await waitForStatus(ctx.app, caller.headers, letter.escrow.transactionId);
    expect(escrow.status).toBe('CONFIRMED');
    // Two more blocks: the escrow has its confirmations (0 here) and more.
    await rpc('evm_mine');
    await rpc('evm_mine');
    const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
    const before = await counter('deepReorgs');
    const errors: string[] = [];
    const logger = {
      info: () => {},
      warn: () => {},
      error: (_: object, message?: string) => errors.push(message ?? ''),
    };
    // Nothing moved: a look finds nothing.
    expect(await checkFinality({ deps: ctx.deps, network, logger })).toBe(0);
    // The chain is taken back past the escrow's block and grows again without it, higher than before.
    await rpc('anvil_rollback', [Number(head - BigInt(escrow.blockNumber)) + 1]);
    await rpc('anvil_dropAllTransactions');
    for (let block = 0; block < 4; block++) await rpc('evm_mine');
    expect(await checkFinality({ deps: ctx.deps, network, logger })).toBeGreaterThan(0);
    expect(await counter('deepReorgs')).toBeGreaterThan(before);
    expect(errors.some((message) => message.includes('deeper than CONFIRMATIONS'))).toBe(true);
    const after = await ctx.app.inject({
      url: `/api/v1/transfer/letter/${letter.id}`,
      headers: caller.headers,
    });
    expect(after.json().data.letter.needsReview).toBe(true);
    // Counted once: a second look (this process or another) finds it recorded already.
    const counted = await counter('deepReorgs');
    await checkFinality({ deps: ctx.deps, network, logger });
    expect(await counter('deepReorgs')).toBe(counted);
  }, 120_000);
});
