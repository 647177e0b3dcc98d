/**
 * The worker's guarded moves against a real database (PGlite, or PostgreSQL with DATABASE_URL): each move is one
 * locking statement, so what the old select-then-update gave must still hold — one winner per move, the event
 * committed with it exactly when the account has an endpoint, a batch numbered without gaps.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signup, type TestContext } from '../../test/harness.ts';
import type { Db } from '../db/client.ts';
import { hasEnabledEndpoint, snapshotOf } from '../db/events.ts';
import { listTotal } from '../db/lists.ts';
import {
  type NewTransaction,
  type TransactionRow,
  transactions,
  webhookDeliveries,
  webhookEvents,
} from '../db/schema/index.ts';
import { typesWhere } from '../deps.ts';
import { newId } from '../lib/ids.ts';
import { insertTransaction } from '../modules/transactions/transactions.repository.ts';
import { insertWallet } from '../modules/wallets/wallets.repository.ts';
import { insertEndpoint } from '../modules/webhooks/webhooks.repository.ts';
import {
  assignBatch,
  confirmBatchLegs,
  dissolveBatch,
  findBatchLegs,
  findRowsAwaitingEarlierCredits,
  findTransactionById,
  markBatchPending,
  transition,
  updateLeased,
} from './outbox.repository.ts';

let ctx: TestContext;
let db: Db;
/** An account with an enabled endpoint subscribed to everything, and one with none. */
let subscribed: { userId: string; walletId: string };
let unsubscribed: { userId: string; walletId: string };

async function account(): Promise<{ userId: string; walletId: string }> {
  const { userId } = await signup(ctx.app);
  const wallet = await insertWallet(db, {
    id: newId(),
    userId,
    address: privateKeyToAddress(generatePrivateKey()),
    type: 'EXTERNAL',
    label: 'test',
  });
  return { userId, walletId: wallet.id };
}

beforeAll(async () => {
  ctx = await createTestContext();
  db = ctx.deps.database.db;
  subscribed = await account();
  unsubscribed = await account();
  await insertEndpoint(db, {
    id: newId(),
    userId: subscribed.userId,
    url: 'https://example.com/hook',
    secretSealed: 'sealed',
  });
});
afterAll(async () => {
  await ctx.close();
});

/** A QUEUED transfer with a value in every kind of column (numeric, jsonb, bigint, timestamps). */
function queuedTransfer(
  owner: { userId: string; walletId: string },
  values: Partial<NewTransaction> = {},
): Promise<TransactionRow> {
  return insertTransaction(db, {
    id: newId(),
    userId: owner.userId,
    walletId: owner.walletId,
    type: 'TRANSFER',
    direction: 'out',
    status: 'QUEUED',
    chainId: 31337,
    amount: '1500000',
    token: '0x0000000000000000000000000000000000000001',
    toAddress: '0x0000000000000000000000000000000000000002',
    metadata: { letterId: 'letter-1', verified: true },
    blockNumber: 12_345_678_901_234n,
    nextAttemptAt: new Date('2030-01-02T03:04:05.678Z'),
    leaseOwner: 'worker-a',
    leaseUntil: new Date('2030-01-02T03:05:05.678Z'),
    ...values,
  });
}

/** The `transaction.updated` events written for a row, oldest first, with their deliveries. */
async function updatedEvents(id: string) {
  const events = await db
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.type, 'transaction.updated'), sql`${webhookEvents.resource}->>'id' = ${id}`))
    .orderBy(webhookEvents.seq);
  const deliveries = events.length
    ? await db
        .select()
        .from(webhookDeliveries)
        .where(
          inArray(
            webhookDeliveries.eventId,
            events.map((event) => event.id),
          ),
        )
    : [];
  return { events, deliveries };
}

describe('transition', () => {
  it('returns the row as drizzle reads it (bigint, Date, numeric and jsonb columns alike)', async () => {
    const row = await queuedTransfer(subscribed);
    expect(row).toStrictEqual(await findTransactionById(db, row.id));
    const moved = await transition(db, row.id, 'QUEUED', { status: 'PENDING', txHash: '0xabc', logIndex: 7 });
    const read = await findTransactionById(db, row.id);
    expect(moved).toStrictEqual(read);
    expect(typeof moved?.blockNumber).toBe('bigint');
    expect(moved?.blockNumber).toBe(12_345_678_901_234n);
    expect(moved?.updatedAt).toBeInstanceOf(Date);
    expect(moved?.nextAttemptAt).toEqual(new Date('2030-01-02T03:04:05.678Z'));
    expect(moved?.metadata).toEqual({ letterId: 'letter-1', verified: true });
    expect(moved?.amount).toBe('1500000');
    expect(Object.keys(moved ?? {})).toEqual(Object.keys(read ?? {}));
  });

  it('moves nothing from another status, and returns undefined', async () => {
    const row = await queuedTransfer(subscribed);
    expect(await transition(db, row.id, 'PENDING', { status: 'CONFIRMED' })).toBeUndefined();
    expect((await findTransactionById(db, row.id))?.status).toBe('QUEUED');
    expect((await updatedEvents(row.id)).events).toHaveLength(0);
  });

  it('writes the event with the move when the account has an endpoint: its snapshot is the moved row', async () => {
    const row = await queuedTransfer(subscribed);
    const moved = await transition(db, row.id, ['QUEUED', 'PENDING'], { status: 'PENDING', txHash: '0xdef' });
    const { events, deliveries } = await updatedEvents(row.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.resource).toEqual(JSON.parse(JSON.stringify(snapshotOf(moved ?? {}))));
    expect(deliveries).toHaveLength(1);
    // A move that keeps the status (a step, a hash) is no event.
    await transition(db, row.id, 'PENDING', { step: 'settling' });
    expect((await updatedEvents(row.id)).events).toHaveLength(1);
  });

  it('commits the event with the move or not at all', async () => {
    const row = await queuedTransfer(subscribed);
    await expect(
      db.transaction(async (tx) => {
        await transition(tx, row.id, 'QUEUED', { status: 'PENDING' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await findTransactionById(db, row.id))?.status).toBe('QUEUED');
    expect((await updatedEvents(row.id)).events).toHaveLength(0);
  });

  it('of two concurrent moves from the same status, exactly one wins and writes exactly one event', async () => {
    for (let round = 0; round < 5; round += 1) {
      const row = await queuedTransfer(subscribed);
      const outcomes = await Promise.all([
        transition(db, row.id, 'QUEUED', { status: 'PENDING', txHash: '0x01' }),
        transition(db, row.id, 'QUEUED', { status: 'FAILED', error: 'raced' }),
      ]);
      const winners = outcomes.filter((outcome) => outcome !== undefined);
      expect(winners).toHaveLength(1);
      expect((await findTransactionById(db, row.id))?.status).toBe(winners[0]?.status);
      const { events, deliveries } = await updatedEvents(row.id);
      expect(events.map((event) => event.resource.status)).toEqual([winners[0]?.status]);
      expect(deliveries).toHaveLength(1);
    }
  });

  it('of two concurrent moves of an account without endpoints, exactly one wins and no event is written', async () => {
    for (let round = 0; round < 5; round += 1) {
      const row = await queuedTransfer(unsubscribed);
      const outcomes = await Promise.all([
        transition(db, row.id, 'QUEUED', { status: 'PENDING' }),
        transition(db, row.id, 'QUEUED', { status: 'PENDING' }),
      ]);
      expect(outcomes.filter((outcome) => outcome !== undefined)).toHaveLength(1);
      expect((await updatedEvents(row.id)).events).toHaveLength(0);
    }
  });

  it('sees only the row’s own account’s enabled endpoints', async () => {
    const disabled = await account();
    await insertEndpoint(db, {
      id: newId(),
      userId: disabled.userId,
      url: 'https://example.com/off',
      secretSealed: 'sealed',
      enabled: false,
    });
    const hasEndpoints = async (id: string) => {
      const [row] = await db
        .select({ has: hasEnabledEndpoint('transactions') })
        .from(transactions)
        .where(eq(transactions.id, id));
      return row?.has;
    };
    const rows = await Promise.all(
      [subscribed, unsubscribed, disabled].map((owner) => queuedTransfer(owner)),
    );
    expect(await Promise.all(rows.map((row) => hasEndpoints(row.id)))).toEqual([true, false, false]);
    for (const row of rows) await transition(db, row.id, 'QUEUED', { status: 'PENDING' });
    expect(await Promise.all(rows.map(async (row) => (await updatedEvents(row.id)).events.length))).toEqual([
      1, 0, 0,
    ]);
  });
});

describe('insertTransaction', () => {
  it('writes transaction.created only for an account with an endpoint', async () => {
    const created = async (id: string) =>
      db
        .select()
        .from(webhookEvents)
        .where(
          and(eq(webhookEvents.type, 'transaction.created'), sql`${webhookEvents.resource}->>'id' = ${id}`),
        );
    const withEndpoint = await queuedTransfer(subscribed);
    const withoutEndpoint = await queuedTransfer(unsubscribed);
    const [event] = await created(withEndpoint.id);
    expect(event?.resource).toEqual(JSON.parse(JSON.stringify(snapshotOf(withEndpoint))));
    expect(await created(withoutEndpoint.id)).toHaveLength(0);
    expect(withoutEndpoint).toStrictEqual(await findTransactionById(db, withoutEndpoint.id));
  });
});

describe('findRowsAwaitingEarlierCredits', () => {
  it('holds a row back behind its wallet’s unfinished earlier rows of the credit types the registry names', async () => {
    const owner = await account();
    const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second));
    const credits = typesWhere(ctx.deps.operations, (operation) => operation.creditsWallet);
    expect(credits).toEqual(['MINT', 'LETTER_CLAIM']);
    const mint = await queuedTransfer(owner, { type: 'MINT', createdAt: at(0) });
    await queuedTransfer(owner, { type: 'REDEEM', createdAt: at(1) });
    const transfer = await queuedTransfer(owner, { createdAt: at(2) });
    const others = await queuedTransfer(await account(), { createdAt: at(3) });
    expect(await findRowsAwaitingEarlierCredits(db, [transfer.id, others.id], credits)).toEqual([
      transfer.id,
    ]);
    // A credit among the rows asked about goes with them; a debit (the redeem) holds nothing back.
    expect(await findRowsAwaitingEarlierCredits(db, [mint.id, transfer.id], credits)).toEqual([]);
    expect(await findRowsAwaitingEarlierCredits(db, [transfer.id], ['TRANSFER'])).toEqual([]);
    expect(await findRowsAwaitingEarlierCredits(db, [transfer.id], ['REDEEM'])).toEqual([transfer.id]);
    expect(await findRowsAwaitingEarlierCredits(db, [transfer.id], [])).toEqual([]);
    // Once the mint ended, nothing waits.
    await transition(db, mint.id, 'QUEUED', { status: 'CONFIRMED' });
    expect(await findRowsAwaitingEarlierCredits(db, [transfer.id], credits)).toEqual([]);
  });
});

describe('assignBatch', () => {
  it('numbers the rows that join from 0 in the order given, leaving out one that moved meanwhile', async () => {
    const rows = await Promise.all(Array.from({ length: 5 }, () => queuedTransfer(unsubscribed)));
    const [first, second, moved, inOtherBatch, last] = rows.map((row) => row.id) as [
      string,
      string,
      string,
      string,
      string,
    ];
    await transition(db, moved, 'QUEUED', { status: 'PENDING' });
    await db.update(transactions).set({ batchId: 'another' }).where(eq(transactions.id, inOtherBatch));
    // Given out of id order: the order given is the legs' order.
    const order = [first, last, moved, inOtherBatch, second];
    expect(await assignBatch(db, order)).toEqual([first, last, second]);
    const legs = await findBatchLegs(db, first);
    expect(legs.map((leg) => [leg.id, leg.batchLeg, leg.step])).toEqual([
      [first, 0, 'batched'],
      [last, 1, 'batched'],
      [second, 2, 'batched'],
    ]);
    const untouched = await findTransactionById(db, moved);
    expect([untouched?.batchId, untouched?.batchLeg, untouched?.step]).toEqual([null, null, 'start']);
    expect((await findTransactionById(db, inOtherBatch))?.batchId).toBe('another');
  });

  it('makes no batch when the first row did not join', async () => {
    const rows = await Promise.all(Array.from({ length: 3 }, () => queuedTransfer(unsubscribed)));
    const ids = rows.map((row) => row.id);
    await transition(db, ids[0] as string, 'QUEUED', { status: 'FAILED' });
    expect(await assignBatch(db, ids)).toEqual([]);
    const after = await db.select().from(transactions).where(inArray(transactions.id, ids));
    expect(after.map((row) => [row.batchId, row.batchLeg, row.step])).toEqual(
      Array(3).fill([null, null, 'start']),
    );
  });
});

describe('a batch’s moves', () => {
  async function batchOf(owner: { userId: string; walletId: string }, size: number) {
    const rows = await Promise.all(Array.from({ length: size }, () => queuedTransfer(owner)));
    const ids = await assignBatch(
      db,
      rows.map((row) => row.id),
    );
    expect(ids).toHaveLength(size);
    return ids;
  }

  it('marks every QUEUED leg PENDING with the hash at once, one event per leg that moved', async () => {
    const ids = await batchOf(subscribed, 4);
    // One leg failed meanwhile: it stays as it is.
    await transition(db, ids[2] as string, 'QUEUED', { status: 'FAILED' });
    const moved = await markBatchPending(ctx.deps.database, ids[0] as string, '0xba7c4');
    expect(moved.map((row) => row.id)).toEqual([ids[0], ids[1], ids[3]]);
    const legs = await findBatchLegs(db, ids[0] as string);
    expect(legs.map((leg) => [leg.status, leg.txHash])).toEqual([
      ['PENDING', '0xba7c4'],
      ['PENDING', '0xba7c4'],
      ['FAILED', null],
      ['PENDING', '0xba7c4'],
    ]);
    expect(moved).toStrictEqual(legs.filter((leg) => leg.status === 'PENDING'));
    for (const id of ids) {
      const statuses = (await updatedEvents(id)).events.map((event) => event.resource.status);
      expect(statuses).toEqual(id === ids[2] ? ['FAILED'] : ['PENDING']);
    }
    // Marked twice (a resumed batch), nothing moves again.
    expect(await markBatchPending(ctx.deps.database, ids[0] as string, '0xba7c4')).toEqual([]);
  });

  it('confirms the legs given, each with its own log index, and leaves the others', async () => {
    const ids = await batchOf(subscribed, 3);
    const batchId = ids[0] as string;
    await markBatchPending(ctx.deps.database, batchId, '0xba7c5');
    const confirmed = await confirmBatchLegs(
      ctx.deps.database,
      batchId,
      [
        { id: ids[0] as string, logIndex: 3 },
        { id: ids[2] as string, logIndex: 11 },
      ],
      { txHash: '0xba7c5', blockNumber: 42n, blockHash: '0xb10c' },
    );
    expect(confirmed.map((row) => row.id)).toEqual([ids[0], ids[2]]);
    const legs = await findBatchLegs(db, batchId);
    expect(legs.map((leg) => [leg.status, leg.logIndex, leg.blockNumber, leg.blockHash])).toEqual([
      ['CONFIRMED', 3, 42n, '0xb10c'],
      ['PENDING', null, 12_345_678_901_234n, null],
      ['CONFIRMED', 11, 42n, '0xb10c'],
    ]);
    expect((await updatedEvents(ids[2] as string)).events.map((event) => event.resource.status)).toEqual([
      'PENDING',
      'CONFIRMED',
    ]);
    // A leg of another batch is not this batch's to confirm.
    const other = await batchOf(unsubscribed, 2);
    expect(
      await confirmBatchLegs(ctx.deps.database, batchId, [{ id: other[1] as string, logIndex: 1 }], {
        txHash: '0xba7c5',
        blockNumber: 42n,
        blockHash: '0xb10c',
      }),
    ).toEqual([]);
  });

  it('dissolving queues the unfinished legs again to go alone, with an event for each PENDING one', async () => {
    const ids = await batchOf(subscribed, 3);
    const batchId = ids[0] as string;
    await markBatchPending(ctx.deps.database, batchId, '0xba7c6');
    await transition(db, ids[1] as string, 'PENDING', { status: 'CONFIRMED' });
    await dissolveBatch(ctx.deps.database, batchId);
    const after = await db.select().from(transactions).where(inArray(transactions.id, ids));
    const byId = new Map(after.map((row) => [row.id, row]));
    for (const id of [ids[0], ids[2]] as string[]) {
      const row = byId.get(id);
      expect([row?.status, row?.step, row?.batchId, row?.txHash]).toEqual(['QUEUED', 'alone', null, null]);
      expect((await updatedEvents(id)).events.map((event) => event.resource.status)).toEqual([
        'PENDING',
        'QUEUED',
      ]);
    }
    expect(byId.get(ids[1] as string)?.batchId).toBe(batchId);
  });
});

describe('batches moving at once', () => {
  it('never deadlock on the account’s counters, beside single moves of the same wallet', async () => {
    // Each moved row takes its counter rows in list_totals: on PostgreSQL, two batches of one wallet moving at once
    // took them in crossed orders and one was aborted (deadlock detected) before batch moves went one at a time.
    const owner = await account();
    for (let round = 0; round < 3; round += 1) {
      const batches: string[][] = [];
      for (let batch = 0; batch < 3; batch += 1) {
        const legs = await Promise.all(Array.from({ length: 20 }, () => queuedTransfer(owner)));
        batches.push(
          await assignBatch(
            db,
            legs.map((leg) => leg.id),
          ),
        );
      }
      const singles = await Promise.all(Array.from({ length: 10 }, () => queuedTransfer(owner)));
      const block = { txHash: '0xba7c7', blockNumber: 7n, blockHash: '0xb10c' } as const;
      await Promise.all([
        ...batches.map(async (ids) => {
          await markBatchPending(ctx.deps.database, ids[0] as string, block.txHash);
          const legs = ids.map((id, index) => ({ id, logIndex: index }));
          await confirmBatchLegs(ctx.deps.database, ids[0] as string, legs, block);
        }),
        ...singles.map((row) => transition(db, row.id, 'QUEUED', { status: 'FAILED' })),
      ]);
    }
    const byStatus = await db
      .select({ status: transactions.status, n: sql<number>`count(*)::int` })
      .from(transactions)
      .where(eq(transactions.walletId, owner.walletId))
      .groupBy(transactions.status);
    expect(Object.fromEntries(byStatus.map((row) => [row.status, row.n]))).toEqual({
      CONFIRMED: 180,
      FAILED: 30,
    });
    for (const status of ['CONFIRMED', 'FAILED', 'PENDING', 'QUEUED']) {
      expect([status, await listTotal(db, 'transactions', owner.userId, { status })]).toEqual([
        status,
        status === 'CONFIRMED' ? 180 : status === 'FAILED' ? 30 : 0,
      ]);
    }
  });
});

describe('updateLeased', () => {
  it('updates at once only the rows whose lease their owner still holds', async () => {
    const held = await queuedTransfer(unsubscribed, { leaseOwner: 'worker-a' });
    const heldToo = await queuedTransfer(unsubscribed, { leaseOwner: 'worker-a' });
    const takenOver = await queuedTransfer(unsubscribed, { leaseOwner: 'worker-b' });
    await updateLeased(db, [held, heldToo, { ...takenOver, leaseOwner: 'worker-a' }], {
      leaseOwner: null,
      leaseUntil: null,
    });
    const after = await Promise.all([held, heldToo, takenOver].map((row) => findTransactionById(db, row.id)));
    expect(after.map((row) => row?.leaseOwner ?? null)).toEqual([null, null, 'worker-b']);
  });
});
