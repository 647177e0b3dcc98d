/**
 * A long RPC outage seen by the worker: transient faults are retried without surfacing for the retry horizon
 * (TRANSIENT_RETRY_HOURS, 24 by default, from the row's creation); past it a row that moved nothing is FAILED, one
 * that signed a value-moving transaction never is. The test drives rows itself (no worker loop) and moves the
 * service clock instead of waiting out backoffs.
 */
import { and, eq } from 'drizzle-orm';
import { createPublicClient, custom, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../src/adapters/chain/types.ts';
import { chainSubmissions, type TransactionRow } from '../../src/db/schema/index.ts';
import type { Deps } from '../../src/deps.ts';
import { findTransactionById } from '../../src/worker/outbox.repository.ts';
import { claimRow, driveInline, processRow } from '../../src/worker/worker.ts';
import { createTestContext, signup, type TestContext } from '../harness.ts';

const HOUR_MS = 3_600_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** Which JSON-RPC calls the outage answers with a connection error; none by default. */
const outage: { failing: (method: string) => boolean } = { failing: () => false };

function networkWithOutage(base: Network): Network {
  const publicClient = createPublicClient({
    chain: base.chain,
    pollingInterval: 50,
    transport: custom(
      {
        async request({ method, params }: { method: string; params?: unknown }) {
          if (outage.failing(method)) throw new Error(`injected outage: ${method} connection refused`);
          return base.publicClient.request({ method, params } as never);
        },
      },
      { retryCount: 0 },
    ),
  }) as PublicClient;
  return { ...base, publicClient };
}

let ctx: TestContext;
let workerDeps: Deps;

beforeAll(async () => {
  ctx = await createTestContext({ network: true });
  workerDeps = { ...ctx.deps, network: networkWithOutage(ctx.deps.network as Network) };
});
afterAll(() => ctx.close());

/** Signs up, creates a custodial wallet and queues a faucet transaction for it; returns the QUEUED row's id. */
async function queuedFund(amount = '5'): Promise<string> {
  const caller = await signup(ctx.app);
  const wallet = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/wallets',
    headers: caller.headers,
    payload: { type: 'CUSTODIAL' },
  });
  const fund = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/fund',
    headers: caller.headers,
    payload: { walletId: wallet.json().data.wallet.id, amount },
  });
  expect(fund.statusCode).toBe(201);
  return fund.json().data.transaction.id;
}

async function rowOf(id: string): Promise<TransactionRow> {
  return (await findTransactionById(ctx.deps.database.db, id)) as TransactionRow;
}

/** One worker pass over the row, as the loop would make it once its backoff is due. */
async function drive(id: string, owner = 'test-worker'): Promise<TransactionRow> {
  const leased = await claimRow(ctx.deps, id, owner);
  if (!leased) throw new Error(`row ${id} could not be leased`);
  await processRow(workerDeps, leased, quiet);
  return rowOf(id);
}

async function valueSubmissions(id: string) {
  return ctx.deps.database.db
    .select()
    .from(chainSubmissions)
    .where(and(eq(chainSubmissions.transactionId, id), eq(chainSubmissions.purpose, 'fund')));
}

describe('transient faults within the retry horizon', () => {
  it('15 faulted pre-flights over 5 hours leave the row QUEUED, unsurfaced; it completes once the fault clears', async () => {
    const id = await queuedFund();
    outage.failing = () => true;
    for (let attempt = 1; attempt <= 15; attempt++) {
      const row = await drive(id);
      expect(row).toMatchObject({ status: 'QUEUED', attempts: attempt, error: null, errorCode: null });
      expect(row.leaseOwner).toBeNull();
      ctx.clock.advance(20 * 60_000);
    }
    outage.failing = () => false;
    const done = await drive(id);
    expect(done).toMatchObject({ status: 'CONFIRMED', error: null, errorCode: null });
    expect(await valueSubmissions(id)).toHaveLength(1);
  });

  it('a worker whose lease was taken over does not clobber the new owner when it meets a fault', async () => {
    const id = await queuedFund();
    outage.failing = () => true;
    const stale = await claimRow(ctx.deps, id, 'stalled-worker');
    if (!stale) throw new Error('no lease');
    // The first worker stalls past its lease; a second one takes the row over.
    ctx.clock.advance(3 * 60_000);
    expect(await claimRow(ctx.deps, id, 'new-owner')).toBeDefined();
    await processRow(workerDeps, stale, quiet);
    expect(await rowOf(id)).toMatchObject({ status: 'QUEUED', leaseOwner: 'new-owner', attempts: 0 });
    outage.failing = () => false;
  });
});

describe('a request driving its own leg inline', () => {
  it('waits out the backoff between attempts instead of retrying a failing RPC as fast as it answers', async () => {
    const id = await queuedFund();
    outage.failing = () => true;
    const row = await driveInline(workerDeps, id, quiet, 3000);
    outage.failing = () => false;
    expect(row.status).toBe('QUEUED');
    // Backoffs of 0.25-0.5 s, 0.5-1 s, 1-2 s, 2-4 s: at most four attempts fit in three seconds.
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(row.attempts).toBeLessThanOrEqual(4);
  });
});

describe('past the retry horizon', () => {
  it('a row that moved nothing is FAILED with a clear message, and nothing was signed for it', async () => {
    const id = await queuedFund();
    outage.failing = () => true;
    expect((await drive(id)).status).toBe('QUEUED');
    ctx.clock.advance(23 * HOUR_MS);
    expect((await drive(id)).status).toBe('QUEUED');
    ctx.clock.advance(HOUR_MS);
    const failed = await drive(id);
    outage.failing = () => false;
    expect(failed).toMatchObject({ status: 'FAILED', errorCode: 'faucet_failed', txHash: null });
    expect(failed.error).toMatch(/within 24 hours.*nothing moved/);
    expect(await valueSubmissions(id)).toHaveLength(0);
  });

  it('a row that signed its value-moving transaction is never failed; the same bytes land once the fault clears', async () => {
    const id = await queuedFund();
    // The gas top-up goes out; the faucet's own broadcast (signed and stored first) meets the outage.
    let broadcasts = 0;
    outage.failing = (method) => method === 'eth_sendRawTransaction' && ++broadcasts > 1;
    expect((await drive(id)).status).toBe('QUEUED');
    const [signed] = await valueSubmissions(id);
    expect(signed?.status).toBe('SIGNED');
    ctx.clock.advance(25 * HOUR_MS);
    const stillQueued = await drive(id);
    expect(stillQueued).toMatchObject({ status: 'QUEUED', error: null, attempts: 2 });
    outage.failing = () => false;
    const done = await drive(id);
    expect(done).toMatchObject({ status: 'CONFIRMED', txHash: signed?.txHash });
    expect(await valueSubmissions(id)).toHaveLength(1);
  });
});
