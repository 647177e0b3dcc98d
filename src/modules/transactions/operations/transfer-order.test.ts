/**
 * A batch is signed by the operator, outside its wallets' own nonce order: a transfer queued right behind its
 * wallet's mint must not join a batch that overtakes the mint (it would move an encrypted zero and fail). It waits
 * until the mint is finished, then goes out. And a transfer whose own signature was stored before a crash never
 * joins a batch: its money would move twice.
 */
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, apiOf } from '../../../../test/api.ts';
import {
  type Caller,
  confidentialBalanceOnChain,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../../test/harness.ts';
import type { Network } from '../../../adapters/chain/types.ts';
import { encodeConfidentialTransfer } from '../../../adapters/confidential/helpers.ts';
import { chainSubmissions, transactions } from '../../../db/schema/index.ts';
import { deferLeased } from '../../../worker/outbox.repository.ts';
import { submitOnce } from '../../../worker/submissions.ts';
import { claimRows, processBatch, startWorker } from '../../../worker/worker.ts';
import { spendingWallet } from '../../wallets/wallets.service.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
let ctx: TestContext;
let caller: Caller;
const api = apiOf(() => ctx.app);

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: { RATE_LIMIT_WRITES_PER_MINUTE: '100000', RATE_LIMIT_READS_PER_MINUTE: '100000' },
  });
  caller = await signup(ctx.app);
});
afterAll(async () => {
  await ctx.close();
});

/** The id of the transaction a money movement queued, its 201 asserted. */
function queuedId(response: ApiResponse): string {
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.transaction.id;
}

async function custodialWallet(): Promise<{ id: string; address: string }> {
  const created = await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: caller.headers });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data.wallet;
}

describe('transfers behind earlier money of their wallet', () => {
  it('wait for the mint queued before them instead of joining a batch that would overtake it', async () => {
    const wallet = await custodialWallet();
    const recipient = '0x00000000000000000000000000000000000000b0';
    const { db } = ctx.deps.database;
    const stopWorker = await startWorker(ctx.deps, quiet as never);
    const funded = queuedId(
      await api.post('/fund', { body: { walletId: wallet.id, amount: '40' }, headers: caller.headers }),
    );
    expect((await waitForStatus(ctx.app, caller.headers, funded)).status).toBe('CONFIRMED');
    await stopWorker();

    // The mint is queued first but backs off (as after a relayer fault); the transfers need its money.
    const mint = queuedId(
      await api.post('/mint', { body: { walletId: wallet.id, amount: '30' }, headers: caller.headers }),
    );
    await db
      .update(transactions)
      .set({ nextAttemptAt: new Date(ctx.clock.now().getTime() + 60_000) })
      .where(eq(transactions.id, mint));
    const transfers = [
      queuedId(
        await api.post('/transfer', {
          body: { walletId: wallet.id, to: recipient, amount: '10' },
          headers: caller.headers,
        }),
      ),
      queuedId(
        await api.post('/transfer', {
          body: { walletId: wallet.id, to: recipient, amount: '12' },
          headers: caller.headers,
        }),
      ),
    ];
    const claimed = await claimRows(ctx.deps, 'test-worker', 10);
    expect(claimed.map((row) => row.id).sort()).toEqual([...transfers].sort());
    // Told to wait, a row stays leased to the run that deferred it until that run ends: claimed again meanwhile (by
    // the same worker), the run's release at its end would free the new claim and the row would be driven twice.
    await deferLeased(db, claimed, ctx.clock.now());
    expect(await claimRows(ctx.deps, 'test-worker', 10)).toEqual([]);
    const runStartedAt = ctx.clock.now().getTime();
    await processBatch(ctx.deps, claimed, quiet as never);

    const waiting = await db.select().from(transactions).where(inArray(transactions.id, transfers));
    for (const row of waiting) {
      expect(row).toMatchObject({
        status: 'QUEUED',
        step: 'start',
        batchId: null,
        attempts: 0,
        leaseOwner: null,
      });
      // Put off again by the run itself, past the moment it began (the deferral above was to an earlier moment).
      expect(row.nextAttemptAt.getTime()).toBeGreaterThan(runStartedAt);
    }
    const signed = await db
      .select()
      .from(chainSubmissions)
      .where(inArray(chainSubmissions.transactionId, transfers));
    expect(signed).toEqual([]);

    // Once the mint is due, the worker finishes it first and the transfers then confirm.
    await db.update(transactions).set({ nextAttemptAt: ctx.clock.now() }).where(eq(transactions.id, mint));
    const restarted = await startWorker(ctx.deps, quiet as never);
    try {
      expect((await waitForStatus(ctx.app, caller.headers, mint, undefined, 60_000)).status).toBe(
        'CONFIRMED',
      );
      for (const id of transfers) {
        expect((await waitForStatus(ctx.app, caller.headers, id, undefined, 60_000)).status).toBe(
          'CONFIRMED',
        );
      }
    } finally {
      await restarted();
    }
  }, 180_000);

  it('a transfer signed alone before a crash carries its own signature through, never a batch: its money moves once', async () => {
    const wallet = await custodialWallet();
    const recipient = '0x00000000000000000000000000000000000000b1';
    const { db } = ctx.deps.database;
    const network = ctx.deps.network as Network;
    let stop = await startWorker(ctx.deps, quiet as never);
    for (const path of ['/fund', '/mint'] as const) {
      const id = queuedId(
        await api.post(path, { body: { walletId: wallet.id, amount: '20' }, headers: caller.headers }),
      );
      expect((await waitForStatus(ctx.app, caller.headers, id)).status).toBe('CONFIRMED');
    }
    await stop();

    // The state a kill -9 leaves between a transfer's broadcast and its PENDING: the row QUEUED, never started as
    // far as the database says, its signed transfer stored and on the chain.
    const first = queuedId(
      await api.post('/transfer', {
        body: { walletId: wallet.id, to: recipient, amount: '5' },
        headers: caller.headers,
      }),
    );
    const [queued] = await db.select().from(transactions).where(eq(transactions.id, first));
    if (!queued) throw new Error('no row');
    const { wallet: spending, key } = await spendingWallet({ deps: ctx.deps, network }, queued);
    const token = network.contracts.confidentialToken;
    const stored = await submitOnce({ deps: ctx.deps, network }, queued, 'transfer', key, async () => ({
      to: token,
      data: encodeConfidentialTransfer(
        recipient,
        await network.rail.encryptAmount({ contract: token, caller: spending.address, amount: 5_000_000n }),
      ),
      gas: 800_000n,
    }));
    const [still] = await db.select().from(transactions).where(eq(transactions.id, first));
    expect(still).toMatchObject({ status: 'QUEUED', step: 'start', batchId: null });

    // Due again together with a second transfer of the wallet: the two are claimed at once.
    await db.update(transactions).set({ nextAttemptAt: ctx.clock.now() }).where(eq(transactions.id, first));
    const second = queuedId(
      await api.post('/transfer', {
        body: { walletId: wallet.id, to: recipient, amount: '6' },
        headers: caller.headers,
      }),
    );
    stop = await startWorker(ctx.deps, quiet as never);
    try {
      const done = [
        await waitForStatus(ctx.app, caller.headers, first, undefined, 60_000),
        await waitForStatus(ctx.app, caller.headers, second, undefined, 60_000),
      ];
      expect(done.map((t) => t.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
      expect(done[0]?.txHash).toBe(stored.txHash);
    } finally {
      await stop();
    }
    expect(await confidentialBalanceOnChain(ctx.deps, wallet.id)).toBe(9_000_000n);
  }, 180_000);
});
