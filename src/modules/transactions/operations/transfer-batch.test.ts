import { and, eq, inArray } from 'drizzle-orm';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, dataOf } from '../../../../test/api.ts';
import {
  type Caller,
  confidentialBalanceOnChain,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../../test/harness.ts';
import { metricValue } from '../../../../test/metrics-text.ts';
import { sendTransactionOrThrow } from '../../../adapters/chain/tx.ts';
import type { Network } from '../../../adapters/chain/types.ts';
import { encodeSetOperator } from '../../../adapters/confidential/helpers.ts';
import { chainSubmissions, transactions, wallets } from '../../../db/schema/index.ts';
import { openWalletKey } from '../../wallets/custody.ts';

let ctx: TestContext;
let caller: Caller;
const api = apiOf(() => ctx.app);

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      // Wide enough that every transfer of a test is queued before its first batch leaves, on a loaded machine.
      WORKER_BATCH_WINDOW_MS: '1500',
    },
  });
  caller = await signup(ctx.app);
});
afterAll(async () => {
  await ctx.close();
});

async function custodialWallet(): Promise<{ id: string; address: string }> {
  return (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: caller.headers }).then(dataOf))
    .wallet;
}

async function fundConfidential(walletId: string, amount: string) {
  await waitForStatus(
    ctx.app,
    caller.headers,
    (await api.post('/fund', { body: { walletId, amount }, headers: caller.headers }).then(dataOf))
      .transaction.id,
  );
  await waitForStatus(
    ctx.app,
    caller.headers,
    (await api.post('/mint', { body: { walletId, amount }, headers: caller.headers }).then(dataOf))
      .transaction.id,
  );
}

async function metric(name: string): Promise<number> {
  return metricValue((await ctx.app.inject({ url: '/metrics' })).body, name);
}

/** The transaction rows of transfers as the API answered them, in the database. */
function rowsOf(queued: { transaction: { id: string } }[]) {
  return ctx.deps.database.db
    .select()
    .from(transactions)
    .where(
      inArray(
        transactions.id,
        queued.map((data) => data.transaction.id),
      ),
    );
}

function chainBalance(walletId: string): Promise<bigint> {
  return confidentialBalanceOnChain(ctx.deps, walletId);
}

describe('confidential transfers in batches', () => {
  it('64 transfers from 8 wallets settle with at most 8 input proofs, and the balances agree with the chain', async () => {
    const senders = await Promise.all(Array.from({ length: 8 }, () => custodialWallet()));
    const recipient = await custodialWallet();
    for (const sender of senders) await fundConfidential(sender.id, '100');
    const proofsBefore = await metric('sealpay_input_proofs_total');
    const amountsBefore = await metric('sealpay_encrypted_amounts_total');

    const queued = await Promise.all(
      senders.flatMap((sender) =>
        Array.from({ length: 8 }, (_, i) =>
          api
            .post('/transfer', {
              body: { walletId: sender.id, to: recipient.address, amount: `${i + 1}` },
              headers: caller.headers,
            })
            .then(dataOf),
        ),
      ),
    );
    const done = await Promise.all(
      queued.map((data) => waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000)),
    );
    expect(done.map((t) => t.status)).toEqual(Array(64).fill('CONFIRMED'));

    const proofs = (await metric('sealpay_input_proofs_total')) - proofsBefore;
    expect(proofs).toBeGreaterThan(0);
    expect(proofs).toBeLessThanOrEqual(64 / 8);
    expect((await metric('sealpay_encrypted_amounts_total')) - amountsBefore).toBe(64);

    // Every leg is its own row, with the hash of the batch that carried it; a batch's transaction is signed once.
    // A transfer that waited behind its wallet's earlier batch may go alone (a proof of its own) when nothing else
    // is due with it: every proof is a batch or such a transfer.
    const { db } = ctx.deps.database;
    const legs = await rowsOf(queued);
    const alone = legs.filter((leg) => leg.batchId === null);
    const batches = new Set(legs.map((leg) => leg.batchId).filter((id): id is string => id !== null));
    expect(batches.size + alone.length).toBe(proofs);
    expect(await metric('sealpay_transfer_batch_size_count')).toBe(batches.size);
    const signed = await db
      .select()
      .from(chainSubmissions)
      .where(
        and(eq(chainSubmissions.purpose, 'batch'), inArray(chainSubmissions.transactionId, [...batches])),
      );
    expect(signed).toHaveLength(batches.size);
    expect(new Set(legs.filter((leg) => leg.batchId !== null).map((leg) => leg.txHash))).toEqual(
      new Set(signed.map((s) => s.txHash)),
    );

    // 8 × (1 + … + 8) = 288 moved to the recipient; each sender keeps 100 − 36.
    expect(await chainBalance(recipient.id)).toBe(288_000_000n);
    for (const sender of senders) expect(await chainBalance(sender.id)).toBe(64_000_000n);
  }, 300_000);

  it('a batch with an underfunded leg confirms the others and fails that one, nothing moved for it', async () => {
    caller = await signup(ctx.app);
    const rich = await custodialWallet();
    const poor = await custodialWallet();
    const recipient = await custodialWallet();
    await fundConfidential(rich.id, '50');
    await fundConfidential(poor.id, '1');
    const queued = await Promise.all([
      api
        .post('/transfer', {
          body: { walletId: rich.id, to: recipient.address, amount: '5' },
          headers: caller.headers,
        })
        .then(dataOf),
      api
        .post('/transfer', {
          body: { walletId: poor.id, to: recipient.address, amount: '7' },
          headers: caller.headers,
        })
        .then(dataOf),
      api
        .post('/transfer', {
          body: { walletId: rich.id, to: recipient.address, amount: '6' },
          headers: caller.headers,
        })
        .then(dataOf),
    ]);
    const done = await Promise.all(
      queued.map((data) => waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000)),
    );
    expect(done.map((t) => t.status)).toEqual(['CONFIRMED', 'FAILED', 'CONFIRMED']);
    expect(done[1]?.errorCode).toBe('transfer_failed');
    const rows = await rowsOf(queued);
    // All three went out in one batch: the failed leg shared the others' transaction.
    expect(new Set(rows.map((row) => row.batchId)).size).toBe(1);
    expect(rows[0]?.batchId).not.toBeNull();
    expect(await chainBalance(poor.id)).toBe(1_000_000n);
    expect(await chainBalance(rich.id)).toBe(39_000_000n);
    expect(await chainBalance(recipient.id)).toBe(11_000_000n);
  }, 300_000);

  it('a batch that reverts moves nothing: its legs go alone and confirm, each once', async () => {
    caller = await signup(ctx.app);
    const first = await custodialWallet();
    const second = await custodialWallet();
    const recipient = await custodialWallet();
    await fundConfidential(first.id, '50');
    await fundConfidential(second.id, '50');
    // A first round grants the batcher both wallets.
    const granted = await Promise.all([
      api
        .post('/transfer', {
          body: { walletId: first.id, to: recipient.address, amount: '1' },
          headers: caller.headers,
        })
        .then(dataOf),
      api
        .post('/transfer', {
          body: { walletId: second.id, to: recipient.address, amount: '1' },
          headers: caller.headers,
        })
        .then(dataOf),
    ]);
    for (const data of granted) {
      expect(
        (await waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000)).status,
      ).toBe('CONFIRMED');
    }
    // The first wallet takes its grant back on the chain, behind the service's back: the batch's leg for it reverts,
    // and with it the whole batch (the limit is set, not estimated, so nothing refuses it before it is sent).
    const network = ctx.deps.network as Network;
    const batcher = network.transferBatcher as Address;
    const [row] = await ctx.deps.database.db.select().from(wallets).where(eq(wallets.id, first.id));
    if (!row) throw new Error('no wallet');
    await sendTransactionOrThrow(network, {
      privateKey: openWalletKey(ctx.deps.keyring, row),
      to: network.contracts.confidentialToken,
      data: encodeSetOperator(batcher, 1),
    });
    const queued = await Promise.all([
      api
        .post('/transfer', {
          body: { walletId: first.id, to: recipient.address, amount: '2' },
          headers: caller.headers,
        })
        .then(dataOf),
      api
        .post('/transfer', {
          body: { walletId: second.id, to: recipient.address, amount: '3' },
          headers: caller.headers,
        })
        .then(dataOf),
    ]);
    const done = await Promise.all(
      queued.map((data) => waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000)),
    );
    expect(done.map((t) => t.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
    const rows = await rowsOf(queued);
    // Each went alone after the batch, under a transfer of its own.
    expect(rows.map((r) => r.batchId)).toEqual([null, null]);
    const signed = await ctx.deps.database.db
      .select()
      .from(chainSubmissions)
      .where(
        inArray(
          chainSubmissions.transactionId,
          rows.map((r) => r.id),
        ),
      );
    expect(signed.filter((s) => s.purpose === 'batch').map((s) => s.status)).toEqual(['REVERTED']);
    expect(signed.filter((s) => s.purpose === 'transfer').map((s) => s.status)).toEqual(['MINED', 'MINED']);
    // The revert made both wallets grant the batcher again: their next transfers go out in a batch once more.
    const again = await Promise.all([
      api
        .post('/transfer', {
          body: { walletId: first.id, to: recipient.address, amount: '4' },
          headers: caller.headers,
        })
        .then(dataOf),
      api
        .post('/transfer', {
          body: { walletId: second.id, to: recipient.address, amount: '5' },
          headers: caller.headers,
        })
        .then(dataOf),
    ]);
    for (const data of again) {
      expect(
        (await waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000)).status,
      ).toBe('CONFIRMED');
    }
    const batched = await rowsOf(again);
    expect(batched[0]?.batchId).not.toBeNull();
    expect(batched[1]?.batchId).toBe(batched[0]?.batchId);
    expect(await chainBalance(first.id)).toBe(43_000_000n);
    expect(await chainBalance(second.id)).toBe(41_000_000n);
    expect(await chainBalance(recipient.id)).toBe(16_000_000n);
  }, 300_000);
});
