/**
 * A batch is signed by the operator, outside its wallets' own nonce order: a transfer queued right behind its
 * wallet's mint must not join a batch that overtakes the mint (it would move an encrypted zero and fail). It waits
 * until the mint is finished, then goes out.
 */
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../../test/harness.ts';
import { chainSubmissions, transactions } from '../../../db/schema/index.ts';
import { claimRows, processBatch, startWorker } from '../../../worker/worker.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
let ctx: TestContext;
let caller: Caller;

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

async function post(url: string, payload: object): Promise<string> {
  const response = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: caller.headers,
    payload,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.transaction.id;
}

describe('transfers behind earlier money of their wallet', () => {
  it('wait for the mint queued before them instead of joining a batch that would overtake it', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/wallets',
      headers: caller.headers,
      payload: { type: 'CUSTODIAL' },
    });
    const wallet = created.json().data.wallet as { id: string; address: string };
    const recipient = '0x00000000000000000000000000000000000000b0';
    const { db } = ctx.deps.database;
    const stopWorker = await startWorker(ctx.deps, quiet as never);
    const funded = await post('/fund', { walletId: wallet.id, amount: '40' });
    expect((await waitForStatus(ctx.app, caller.headers, funded)).status).toBe('CONFIRMED');
    await stopWorker();

    // The mint is queued first but backs off (as after a relayer fault); the transfers need its money.
    const mint = await post('/mint', { walletId: wallet.id, amount: '30' });
    await db
      .update(transactions)
      .set({ nextAttemptAt: new Date(ctx.clock.now().getTime() + 60_000) })
      .where(eq(transactions.id, mint));
    const transfers = [
      await post('/transfer', { walletId: wallet.id, to: recipient, amount: '10' }),
      await post('/transfer', { walletId: wallet.id, to: recipient, amount: '12' }),
    ];
    const claimed = await claimRows(ctx.deps, 'test-worker', 10);
    expect(claimed.map((row) => row.id).sort()).toEqual([...transfers].sort());
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
      expect(row.nextAttemptAt.getTime()).toBeGreaterThan(ctx.clock.now().getTime() - 1000);
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
});
