import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../test/api.ts';
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
const api = apiOf(() => ctx.app);
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

describe('several workers', () => {
  it('never take the same row: every operation is signed and sent exactly once', async () => {
    const { headers } = caller;
    const wallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers })).json().data.wallet;
    const other = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers })).json().data.wallet;
    const funded = await api.post('/fund', { body: { walletId: wallet.id, amount: '100' }, headers });
    await waitForStatus(ctx.app, headers, funded.json().data.transaction.id);
    const minted = await api.post('/mint', { body: { walletId: wallet.id, amount: '50' }, headers });
    await waitForStatus(ctx.app, headers, minted.json().data.transaction.id);
    const queued = await Promise.all(
      Array.from({ length: 12 }, () =>
        api.post('/transfer', { body: { walletId: wallet.id, to: other.address, amount: '1' }, headers }),
      ),
    );
    const done = await Promise.all(
      queued.map((response) => waitForStatus(ctx.app, headers, response.json().data.transaction.id)),
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
    const balances = await api.get('/balances', { query: { walletId: other.id }, headers });
    expect(balances.json().data.balances[0].confidential.amount).toBe('12.00');
  });
});
