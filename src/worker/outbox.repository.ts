/**
 * The transactions table as the worker's queue: leases, guarded status moves, retries. Rows are created by the
 * feature modules (`transactions.repository.ts`); from then on they move only through here.
 */
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { type DbOrTx, rows } from '../db/client.ts';
import { recordEvent } from '../db/events.ts';
import {
  type NewTransaction,
  type TransactionRow,
  type TransactionStatus,
  type TransactionType,
  transactions,
} from '../db/schema/index.ts';

/** The statuses a worker still has to drive. */
export const RUNNABLE_STATUSES = [
  'QUEUED',
  'PENDING',
  'SETTLING',
] as const satisfies readonly TransactionStatus[];

export async function findTransactionById(db: DbOrTx, id: string): Promise<TransactionRow | undefined> {
  const [row] = await db.select().from(transactions).where(eq(transactions.id, id)).limit(1);
  return row;
}

/**
 * A guarded update: applies only while the row is still in `from`, so two actors can never both move it.
 * Returns the updated row, or undefined when someone else moved it first. A status change writes its
 * `transaction.updated` event in the same database transaction.
 */
export async function transition(
  db: DbOrTx,
  id: string,
  from: TransactionStatus | readonly TransactionStatus[],
  values: Partial<NewTransaction>,
): Promise<TransactionRow | undefined> {
  const statuses = typeof from === 'string' ? [from] : [...from];
  const guard = and(eq(transactions.id, id), inArray(transactions.status, statuses));
  return db.transaction(async (tx) => {
    const [before] = await tx
      .select({ status: transactions.status })
      .from(transactions)
      .where(guard)
      .for('update');
    if (!before) return undefined;
    const [row] = await tx
      .update(transactions)
      .set({ ...values, updatedAt: values.updatedAt ?? new Date() })
      .where(guard)
      .returning();
    if (row && row.status !== before.status) {
      await recordEvent(tx, { userId: row.userId, type: 'transaction.updated', kind: 'transaction', row });
    }
    return row;
  });
}

/**
 * Leases up to `limit` runnable rows due by `now` to `owner` (SKIP LOCKED: two workers never take one row); with
 * `freshOfType`, only QUEUED rows of that type that were never started nor batched (rows that may join a batch).
 */
export async function leaseDueRows(
  db: DbOrTx,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
  freshOfType?: TransactionType,
): Promise<TransactionRow[]> {
  const fresh = freshOfType
    ? sql`and type = ${freshOfType} and status = 'QUEUED' and step = 'start' and batch_id is null`
    : sql``;
  const claimed = await rows<{ id: string }>(
    db,
    sql`update transactions set lease_owner = ${owner}, lease_until = ${leaseUntil.toISOString()}
        where id in (
          select id from transactions
          where status in ('QUEUED', 'PENDING', 'SETTLING') ${fresh}
            and next_attempt_at <= ${now.toISOString()}
            and (lease_until is null or lease_until < ${now.toISOString()})
          order by next_attempt_at
          limit ${limit}
          for update skip locked)
        returning id`,
  );
  if (claimed.length === 0) return [];
  return db
    .select()
    .from(transactions)
    .where(
      inArray(
        transactions.id,
        claimed.map((row) => row.id),
      ),
    );
}

/** Leases one runnable row to `owner` unless another owner's lease on it is still running. */
export async function leaseRow(
  db: DbOrTx,
  id: string,
  owner: string,
  now: Date,
  leaseUntil: Date,
): Promise<TransactionRow | undefined> {
  const [row] = await db
    .update(transactions)
    .set({ leaseOwner: owner, leaseUntil })
    .where(
      and(
        eq(transactions.id, id),
        inArray(transactions.status, RUNNABLE_STATUSES),
        sql`(${transactions.leaseUntil} is null or ${transactions.leaseUntil} < ${now.toISOString()} or ${transactions.leaseOwner} = ${owner})`,
      ),
    )
    .returning();
  return row;
}

/** Updates a row only while `owner` still holds its lease (a worker that stalled past it must not touch it). */
export async function updateLeased(
  db: DbOrTx,
  row: Pick<TransactionRow, 'id' | 'leaseOwner'>,
  values: Pick<Partial<NewTransaction>, 'leaseUntil' | 'leaseOwner' | 'attempts' | 'nextAttemptAt'>,
): Promise<void> {
  await db
    .update(transactions)
    .set(values)
    .where(and(eq(transactions.id, row.id), eq(transactions.leaseOwner, row.leaseOwner ?? '')));
}

/** Releases every lease (the embedded database at start: their owners are gone); returns how many. */
export async function releaseAllLeases(db: DbOrTx): Promise<number> {
  const released = await db
    .update(transactions)
    .set({ leaseOwner: null, leaseUntil: null })
    .where(sql`${transactions.leaseOwner} is not null`)
    .returning({ id: transactions.id });
  return released.length;
}

/**
 * Makes the rows one batch, named by the first row's id, in the order given: each row still QUEUED and in no batch
 * joins (at the next position); one that moved meanwhile is left out. Returns the ids that joined, in order.
 */
export async function assignBatch(db: DbOrTx, ids: readonly string[]): Promise<string[]> {
  const batchId = ids[0];
  if (!batchId) return [];
  return db.transaction(async (tx) => {
    const joined: string[] = [];
    for (const id of ids) {
      const [row] = await tx
        .update(transactions)
        .set({ batchId, batchLeg: joined.length, step: 'batched', updatedAt: new Date() })
        .where(and(eq(transactions.id, id), eq(transactions.status, 'QUEUED'), isNull(transactions.batchId)))
        .returning({ id: transactions.id });
      if (row) joined.push(row.id);
    }
    // A batch whose first row did not join would be named by a row outside it: then there is no batch.
    if (joined[0] !== batchId) {
      await tx
        .update(transactions)
        .set({ batchId: null, batchLeg: null, step: 'start' })
        .where(inArray(transactions.id, joined));
      return [];
    }
    return joined;
  });
}

/**
 * Of these rows, those whose wallet still waits for money it asked for before them (a mint, a letter's claim into
 * it), unfinished and not among them. A batch is signed by the operator, outside the wallet's own nonce order, so
 * such a row would otherwise go out before the money it spends arrived and move an encrypted zero. Earlier money
 * going out (transfers, redeems, escrows) does not hold a row back: debits in another order change at most which
 * of them a short balance refuses, and holding them would send one batch at a time.
 */
export async function findRowsAwaitingEarlierCredits(db: DbOrTx, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const list = sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );
  const behind = await rows<{ id: string }>(
    db,
    sql`select r.id from transactions r
        where r.id in (${list})
          and exists (
            select 1 from transactions e
            where e.wallet_id = r.wallet_id
              and e.type in ('MINT', 'LETTER_CLAIM')
              and e.status in ('QUEUED', 'PENDING', 'SETTLING')
              and (e.created_at, e.id) < (r.created_at, r.id)
              and e.id not in (${list}))`,
  );
  return behind.map((row) => row.id);
}

/**
 * Leased rows told to wait until `until`, without counting an attempt (nothing went wrong). The lease stays with its
 * holder, who releases it with the rest of what it drove: released here, the same worker could claim the row again
 * while still holding the run that deferred it, and that run's release would then free the new claim.
 */
export async function deferLeased(
  db: DbOrTx,
  leased: readonly Pick<TransactionRow, 'id' | 'leaseOwner'>[],
  until: Date,
): Promise<void> {
  for (const row of leased) {
    await updateLeased(db, row, { nextAttemptAt: until });
  }
}

/** The legs of a batch, in their order. */
export function findBatchLegs(db: DbOrTx, batchId: string): Promise<TransactionRow[]> {
  return db
    .select()
    .from(transactions)
    .where(eq(transactions.batchId, batchId))
    .orderBy(asc(transactions.batchLeg));
}

/**
 * A batch whose transaction reverted moved nothing: its unfinished legs leave it and are queued again to go alone
 * (step `alone`: never batched again), due now.
 */
export async function dissolveBatch(db: DbOrTx, batchId: string): Promise<void> {
  const guard = and(eq(transactions.batchId, batchId), inArray(transactions.status, ['QUEUED', 'PENDING']));
  await db.transaction(async (tx) => {
    const before = await tx
      .select({ id: transactions.id, status: transactions.status })
      .from(transactions)
      .where(guard)
      .for('update');
    const rows = await tx
      .update(transactions)
      .set({
        status: 'QUEUED',
        step: 'alone',
        batchId: null,
        batchLeg: null,
        txHash: null,
        nextAttemptAt: new Date(),
        updatedAt: new Date(),
      })
      .where(guard)
      .returning();
    // A reverted batch's PENDING legs go back to QUEUED: a status change, so its event is written with it.
    const statusBefore = new Map(before.map((row) => [row.id, row.status]));
    for (const row of rows) {
      if (statusBefore.get(row.id) !== row.status) {
        await recordEvent(tx, { userId: row.userId, type: 'transaction.updated', kind: 'transaction', row });
      }
    }
  });
}
