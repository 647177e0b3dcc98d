import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../test/harness.ts';
import { chainSubmissions, transactions } from '../db/schema/index.ts';
import { startWorker } from './worker.ts';

let ctx: TestContext;
let caller: Caller;
let secondWorker: () => Promise<void>;

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  // The harness runs one worker loop; a second one competes for the same rows, as a second process would.
  ctx = await createTestContext({
    worker: true,
    env: { RATE_LIMIT_WRITES_PER_MINUTE: '100000', RATE_LIMIT_READS_PER_MINUTE: '100000' },
  });
  secondWorker = await startWorker(ctx.deps, quiet);
  caller = await signup(ctx.app);
});
afterAll(async () => {
  await secondWorker();
  await ctx.close();
});

async function post(url: string, payload: object) {
  const response = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: caller.headers,
    payload,
  });
  return response.json().data;
}

describe('several workers', () => {
  it('never take the same row: every operation is signed and sent exactly once', async () => {
    const wallet = (await post('/wallets', { type: 'CUSTODIAL' })).wallet;
    const other = (await post('/wallets', { type: 'CUSTODIAL' })).wallet;
    await waitForStatus(
      ctx.app,
      caller.headers,
      (await post('/fund', { walletId: wallet.id, amount: '100' })).transaction.id,
    );
    await waitForStatus(
      ctx.app,
      caller.headers,
      (await post('/mint', { walletId: wallet.id, amount: '50' })).transaction.id,
    );
    const queued = await Promise.all(
      Array.from({ length: 12 }, () =>
        post('/transfer', { walletId: wallet.id, to: other.address, amount: '1' }),
      ),
    );
    const done = await Promise.all(
      queued.map((data) => waitForStatus(ctx.app, caller.headers, data.transaction.id)),
    );
    expect(done.map((transaction) => transaction.status)).toEqual(Array(12).fill('CONFIRMED'));
    // Each transfer went out exactly once: in a transaction of its own, or as a leg of one batch (the two workers'
    // batches never share a row), and its hash is that transaction's.
    const { db } = ctx.deps.database;
    const rows = await db
      .select()
      .from(transactions)
      .where(and(eq(transactions.type, 'TRANSFER'), eq(transactions.walletId, wallet.id)));
    const signed = await db
      .select()
      .from(chainSubmissions)
      .where(inArray(chainSubmissions.purpose, ['transfer', 'batch']));
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      const carriers = signed.filter(
        (submission) =>
          (submission.purpose === 'transfer' && submission.transactionId === row.id) ||
          (submission.purpose === 'batch' && submission.transactionId === row.batchId),
      );
      expect(carriers).toHaveLength(1);
      expect(row.txHash).toBe(carriers[0]?.txHash);
    }
    const balances = await ctx.app.inject({
      url: `/api/v1/balances?walletId=${other.id}`,
      headers: caller.headers,
    });
    expect(balances.json().data.balances[0].confidential.amount).toBe('12.00');
  });
});
