/**
 * A worker's lease on a row can lapse while it still holds an old copy of the row (it drove other rows first, or
 * stalled), and another worker then takes the row. These tests play both workers by hand, on the embedded chain,
 * with the service's clock moved past the lease: the first worker's old copy must never move the money a second
 * time, and the rows a batch hands back to go alone keep their leases while the ones before them run.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, dataOf } from '../../test/api.ts';
import {
  type Caller,
  confidentialBalanceOnChain,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../test/harness.ts';
import { chainSubmissions, type TransactionRow, transactions } from '../db/schema/index.ts';
import type { Deps, Operation } from '../deps.ts';
import { claimGoingAlone, findTransactionById } from './outbox.repository.ts';
import { claimRow, claimRows, processBatch, processRow, startWorker } from './worker.ts';

const LEASE_MS = 3000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let ctx: TestContext;
let caller: Caller;
let sender: { id: string; address: string };
let recipient: { id: string; address: string };
const api = apiOf(() => ctx.app);

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: {
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      WORKER_LEASE_MS: String(LEASE_MS),
    },
  });
  caller = await signup(ctx.app);
  const { headers } = caller;
  sender = dataOf(await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers })).wallet;
  recipient = dataOf(await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers })).wallet;
  // The sender's money arrives through a worker loop, stopped before the tests queue their transfers by hand.
  const stop = await startWorker(ctx.deps, quiet);
  try {
    for (const path of ['/fund', '/mint'] as const) {
      const queued = dataOf(await api.post(path, { body: { walletId: sender.id, amount: '50' }, headers }));
      const done = await waitForStatus(ctx.app, caller.headers, queued.transaction.id, undefined, 60_000);
      expect(done.status).toBe('CONFIRMED');
    }
  } finally {
    await stop();
  }
});
afterAll(async () => {
  await ctx.close();
});

async function queueTransfers(amounts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const amount of amounts) {
    ids.push(
      dataOf(
        await api.post('/transfer', {
          body: { walletId: sender.id, to: recipient.address, amount },
          headers: caller.headers,
        }),
      ).transaction.id,
    );
  }
  return ids;
}

async function lease(ids: string[], owner: string): Promise<TransactionRow[]> {
  const leased = await Promise.all(ids.map((id) => claimRow(ctx.deps, id, owner)));
  return leased.map((row, index) => {
    if (!row) throw new Error(`${owner} could not lease ${ids[index]}`);
    return row;
  });
}

function recipientOnChain(): Promise<bigint> {
  return confidentialBalanceOnChain(ctx.deps, recipient.id);
}

describe('a lease that lapsed', () => {
  it('its old copy of a transfer that another worker batched meanwhile is not sent again alone', async () => {
    const before = await recipientOnChain();
    const ids = await queueTransfers(['1', '2']);
    const [firstCopy] = await lease(ids, 'worker-first');
    if (!firstCopy) throw new Error('no row');
    expect(firstCopy.batchId).toBeNull();

    // The first worker is held up past its lease; the second takes both rows and sends them as one batch.
    ctx.clock.advance(LEASE_MS + 1);
    await processBatch(ctx.deps, await lease(ids, 'worker-second'), quiet);
    const batched = await Promise.all(ids.map((id) => findTransactionById(ctx.deps.database.db, id)));
    expect(batched.map((row) => row?.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
    const batchId = batched[0]?.batchId;
    expect(batchId).toBe(ids[0]);
    expect(batched[1]?.batchId).toBe(batchId);
    expect(await recipientOnChain()).toBe(before + 3_000_000n);

    // The first worker comes back to its copy (no batch on it) and runs it.
    await processRow(ctx.deps, firstCopy, quiet);

    const { db } = ctx.deps.database;
    const alone = await db
      .select()
      .from(chainSubmissions)
      .where(and(eq(chainSubmissions.transactionId, firstCopy.id), eq(chainSubmissions.purpose, 'transfer')));
    expect(alone).toEqual([]);
    expect(await recipientOnChain()).toBe(before + 3_000_000n);
    const after = await findTransactionById(db, firstCopy.id);
    expect(after?.status).toBe('CONFIRMED');
    expect(after?.txHash).toBe(batched[0]?.txHash);
  }, 120_000);

  it('a transfer that has started alone is not taken into a batch by a worker holding an old copy', async () => {
    const before = await recipientOnChain();
    const ids = await queueTransfers(['4', '8']);
    const { db } = ctx.deps.database;
    const [firstCopy] = await lease(ids, 'worker-first');
    if (!firstCopy) throw new Error('no row');
    // The first worker's run of the first transfer has decided to send it alone (its next step signs it)...
    expect(await claimGoingAlone(db, firstCopy.id)).toBe(true);
    // ...and is held up past its lease: a second worker takes both rows, still at step start in its copies.
    ctx.clock.advance(LEASE_MS + 1);
    await processBatch(ctx.deps, await lease(ids, 'worker-second'), quiet);
    const batches = await db
      .select()
      .from(chainSubmissions)
      .where(and(eq(chainSubmissions.transactionId, firstCopy.id), eq(chainSubmissions.purpose, 'batch')));
    expect(batches).toEqual([]);
    const untouched = await Promise.all(ids.map((id) => findTransactionById(db, id)));
    expect(untouched.map((row) => [row?.status, row?.batchId])).toEqual([
      ['QUEUED', null],
      ['QUEUED', null],
    ]);

    // The first worker carries on and sends its transfer; the other goes on its next run. Each moved once.
    await processRow(ctx.deps, firstCopy, quiet);
    expect(await processRowsUntilDone(ids)).toEqual(['CONFIRMED', 'CONFIRMED']);
    expect(await recipientOnChain()).toBe(before + 12_000_000n);
  }, 120_000);
});

/** Leases and runs the rows, as a worker's loop would, until each is finished. */
async function processRowsUntilDone(ids: string[]): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await Promise.all(ids.map((id) => findTransactionById(ctx.deps.database.db, id)));
    if (rows.every((row) => row && ['CONFIRMED', 'FAILED'].includes(row.status)) || Date.now() > deadline) {
      return rows.map((row) => row?.status ?? 'missing');
    }
    ctx.clock.advance(60_000);
    for (const id of ids) {
      const leased = await claimRow(ctx.deps, id, 'worker-third');
      if (leased) await processRow(ctx.deps, leased, quiet);
    }
  }
}

describe('rows a batch run hands back to go alone', () => {
  it('keep their leases while the rows before them run', async () => {
    const ids = await queueTransfers(['16', '32']);
    const [first, second] = ids as [string, string];
    const { db } = ctx.deps.database;
    let takenMeanwhile: TransactionRow[] = [];
    // The real transfer, except that its batch hands every row back and the first row's run is slow: the service's
    // clock moves past the lease while it runs, with a second of real time for the renewals.
    const real = ctx.deps.operations.TRANSFER;
    const slow: Operation = {
      ...real,
      batch: { canJoin: () => true, run: async (_ctx, rows) => rows },
      run: async (_ctx, row) => {
        if (row.id !== first) return;
        ctx.clock.advance(LEASE_MS - 1000);
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 3 + 300));
        ctx.clock.advance(LEASE_MS - 1000);
        takenMeanwhile = (await claimRows(ctx.deps, 'worker-other', 10)).filter((row) => row.id === second);
      },
    };
    const deps: Deps = { ...ctx.deps, operations: { ...ctx.deps.operations, TRANSFER: slow } };
    await processBatch(deps, await lease(ids, 'worker-first'), quiet);
    expect(takenMeanwhile.map((row) => row.id)).toEqual([]);
    // Both ran and were released, nothing sent (the slow run sends nothing): they are QUEUED and free again.
    const rows = await db.select().from(transactions).where(eq(transactions.id, second));
    expect(rows[0]?.leaseOwner).toBeNull();
    expect(rows[0]?.status).toBe('QUEUED');
  }, 60_000);
});
