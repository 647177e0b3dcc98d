/**
 * The transactions table as the worker's queue: leases, guarded status moves, retries. Rows are created by the
 * feature modules (`transactions.repository.ts`); from then on they move only through here.
 */
import { and, asc, eq, getTableColumns, inArray, isNull, ne, or, type SQL, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Hex } from 'viem';
import { type Database, type DbOrTx, rows } from '../db/client.ts';
import { hasEnabledEndpoint, recordEvent } from '../db/events.ts';
import { leaseDue } from '../db/lease.ts';
import { serviceNow } from '../db/schema/columns.ts';
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
  return db.transaction(async (tx) => {
    const [row] = await moveGuarded(tx, eq(transactions.id, id), from, values);
    return row;
  });
}

/**
 * A replacement of a row's transaction was mined: the rows the submission carries (its own, or its batch's legs)
 * that are still PENDING or SETTLING and show another of its attempts' hashes take the mined one.
 */
export async function adoptMinedHash(
  db: DbOrTx,
  carrierId: string,
  attemptHashes: readonly Hex[],
  mined: Hex,
): Promise<void> {
  await db.transaction((tx) =>
    moveGuarded(
      tx,
      and(
        or(eq(transactions.id, carrierId), eq(transactions.batchId, carrierId)),
        inArray(transactions.txHash, [...attemptHashes]),
        ne(transactions.txHash, mined),
      ),
      ['PENDING', 'SETTLING'],
      { txHash: mined },
    ),
  );
}

/**
 * `transition` for every row `which` selects, in one statement: each row still in `from` is locked, moved, and
 * gets its `transaction.updated` event when its status changed and its account has an enabled endpoint. Run
 * inside the database transaction the events must commit with. Returns the moved rows, a batch's in their legs'
 * order.
 */
async function moveGuarded(
  tx: DbOrTx,
  which: SQL | undefined,
  from: TransactionStatus | readonly TransactionStatus[],
  values: PgUpdateSetSource<typeof transactions>,
): Promise<TransactionRow[]> {
  const statuses = typeof from === 'string' ? [from] : [...from];
  // The statuses before the move, read under the rows' locks (`returning` sees only the new ones). Once locked, a
  // row cannot change before the update: a second mover waits, then finds it out of `from` and moves nothing.
  // Locked in id order, so two statements over the same rows never hold one each while waiting for the other's.
  const previous = tx
    .select({ id: transactions.id, status: transactions.status })
    .from(transactions)
    .where(and(which, inArray(transactions.status, statuses)))
    .orderBy(asc(transactions.id))
    .for('update')
    .as('previous');
  const moved = await tx
    .update(transactions)
    .set({ ...values, updatedAt: values.updatedAt ?? serviceNow })
    .from(previous)
    .where(eq(transactions.id, previous.id))
    .returning({
      ...getTableColumns(transactions),
      previousStatus: previous.status,
      hasEndpoints: hasEnabledEndpoint('transactions'),
    });
  moved.sort((a, b) => (a.batchLeg ?? 0) - (b.batchLeg ?? 0));
  const rows: TransactionRow[] = [];
  for (const { previousStatus, hasEndpoints, ...row } of moved) {
    if (hasEndpoints && row.status !== previousStatus) {
      await recordEvent(tx, { userId: row.userId, type: 'transaction.updated', kind: 'transaction', row });
    }
    rows.push(row);
  }
  return rows;
}

/**
 * A move of several legs of a batch, as one `moveGuarded`, while no other batch moves (in any process). Each row a
 * statement moves takes its account's two counter rows in `list_totals` (the trigger of migration 0007) in the
 * trigger's fixed order, but one row after another: two batches of one account moving at once would take the
 * counters of different slots in crossed orders and deadlock (PostgreSQL; PGlite runs one statement at a time).
 * One batch at a time closes that circle, and a single-row move cannot close one with it: a batch moves all its
 * legs of one wallet from the same status to the same other, so it takes each slot's counters in order too.
 */
function moveBatchLegs(
  database: Database,
  which: SQL | undefined,
  from: TransactionStatus | readonly TransactionStatus[],
  values: PgUpdateSetSource<typeof transactions>,
): Promise<TransactionRow[]> {
  return database.withLock('transactions:batch-moves', (db) =>
    db.transaction((tx) => moveGuarded(tx, which, from, values)),
  );
}

/** Marks the batch's QUEUED legs PENDING with the batch's hash, all at once, each as `transition` would. */
export function markBatchPending(
  database: Database,
  batchId: string,
  txHash: Hex,
): Promise<TransactionRow[]> {
  return moveBatchLegs(database, eq(transactions.batchId, batchId), 'QUEUED', { status: 'PENDING', txHash });
}

/**
 * Confirms these legs of the batch (those whose transfer moved their whole amount) all at once, each as
 * `transition` would from QUEUED or PENDING, with the batch's hash and block and its own `logIndex` (where its
 * `ConfidentialTransfer` landed). Returns the legs it moved.
 */
export async function confirmBatchLegs(
  database: Database,
  batchId: string,
  legs: readonly { id: string; logIndex: number | null }[],
  block: Required<Pick<NewTransaction, 'txHash' | 'blockNumber' | 'blockHash'>>,
): Promise<TransactionRow[]> {
  if (legs.length === 0) return [];
  const logIndexOfLeg = sql`case ${transactions.id} ${sql.join(
    legs.map((leg) => sql`when ${leg.id} then ${leg.logIndex}::integer`),
    sql` `,
  )} end`;
  const ids = legs.map((leg) => leg.id);
  return moveBatchLegs(
    database,
    and(eq(transactions.batchId, batchId), inArray(transactions.id, ids)),
    ['QUEUED', 'PENDING'],
    { status: 'CONFIRMED', ...block, logIndex: logIndexOfLeg },
  );
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
    ? sql`and q.type = ${freshOfType} and q.status = 'QUEUED' and q.step = 'start' and q.batch_id is null`
    : sql``;
  return leaseDue(db, transactions, {
    set: sql`lease_owner = ${owner}, lease_until = ${leaseUntil.toISOString()}`,
    due: sql`q.status in ('QUEUED', 'PENDING', 'SETTLING') ${fresh} and q.next_attempt_at <= ${now.toISOString()}`,
    orderBy: sql`q.next_attempt_at`,
    now,
    limit,
  });
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

/**
 * Updates rows only while each one's lease is still held by the owner it was leased to (a worker that stalled past
 * its lease must not touch a row another worker took over); one statement for all of them.
 */
export async function updateLeased(
  db: DbOrTx,
  leased: readonly Pick<TransactionRow, 'id' | 'leaseOwner'>[],
  values: Pick<Partial<NewTransaction>, 'leaseUntil' | 'leaseOwner' | 'attempts' | 'nextAttemptAt'>,
): Promise<void> {
  if (leased.length === 0) return;
  const heldLeases = sql.join(
    leased.map((row) => sql`(${row.id}, ${row.leaseOwner ?? ''})`),
    sql`, `,
  );
  // Locked in id order, as the batch's moves lock them: two statements over the same rows never deadlock.
  const held = db
    .select({ id: transactions.id })
    .from(transactions)
    .where(sql`(${transactions.id}, ${transactions.leaseOwner}) in (${heldLeases})`)
    .orderBy(asc(transactions.id))
    .for('update')
    .as('held');
  await db.update(transactions).set(values).from(held).where(eq(transactions.id, held.id));
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
 * Makes the rows one batch, named by the first row's id, in the order given: each row still QUEUED at step `start`
 * and in no batch joins (at the next position); one that moved meanwhile, or that goes alone (`claimGoingAlone`),
 * is left out. Returns the ids that joined, in order. One
 * statement: the joining rows are locked before they are numbered, so a row that moves meanwhile is left out
 * before the positions are counted, never after (no gap). A batch whose first row did not join would be named by a
 * row outside it: then there is no batch.
 */
export async function assignBatch(db: DbOrTx, ids: readonly string[]): Promise<string[]> {
  const batchId = ids[0];
  if (!batchId) return [];
  // A row listed twice joins at its first place, as it would have one row at a time.
  const wanted = sql.join(
    [...new Set(ids)].map((id, position) => sql`(${id}, ${position}::integer)`),
    sql`, `,
  );
  const joined = await rows<{ id: string; batch_leg: number }>(
    db,
    sql`with wanted (id, position) as (values ${wanted}),
        joining as (
          select id from transactions
          where id in (select id from wanted) and status = 'QUEUED' and step = 'start' and batch_id is null
          order by id
          for update),
        numbered as (
          select wanted.id, (row_number() over (order by wanted.position) - 1)::integer as leg
          from wanted join joining on joining.id = wanted.id)
        update transactions
        set batch_id = ${batchId}, batch_leg = numbered.leg, step = 'batched', updated_at = sealpay_now()
        from numbered
        where transactions.id = numbered.id and exists (select 1 from joining where joining.id = ${batchId})
        returning transactions.id, transactions.batch_leg`,
  );
  return joined.sort((a, b) => a.batch_leg - b.batch_leg).map((row) => row.id);
}

/**
 * Of these rows, those whose wallet still waits for money it asked for before them (a row of `creditTypes`, the
 * types whose descriptor `creditsWallet`: a mint, a letter's claim into it), unfinished and not among them. A batch is signed by the operator, outside the wallet's own nonce order, so
 * such a row would otherwise go out before the money it spends arrived and move an encrypted zero. Earlier money
 * going out (transfers, redeems, escrows) does not hold a row back: debits in another order change at most which
 * of them a short balance refuses, and holding them would send one batch at a time.
 */
export async function findRowsAwaitingEarlierCredits(
  db: DbOrTx,
  ids: readonly string[],
  creditTypes: readonly TransactionType[],
): Promise<string[]> {
  if (ids.length === 0 || creditTypes.length === 0) return [];
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
              and e.type in (${sql.join(
                creditTypes.map((type) => sql`${type}`),
                sql`, `,
              )})
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
export function deferLeased(
  db: DbOrTx,
  leased: readonly Pick<TransactionRow, 'id' | 'leaseOwner'>[],
  until: Date,
): Promise<void> {
  return updateLeased(db, leased, { nextAttemptAt: until });
}

/**
 * A transfer about to go out on its own takes step `alone` (once past `start`, it keeps its step) unless a batch
 * took it first; false when one did. `assignBatch` takes only rows at step `start` with no batch, so the two never
 * both succeed, whatever the workers' leases say: each is one statement on the row itself, and on PostgreSQL the
 * second to arrive waits for the first's row lock and then reads the row as the first left it. A worker whose
 * lease lapsed (its copy of the row is old) and the worker that took the row over can then never carry one
 * transfer twice, once in a batch and once alone.
 */
export async function claimGoingAlone(db: DbOrTx, id: string): Promise<boolean> {
  const claimed = await db
    .update(transactions)
    .set({ step: sql`case when ${transactions.step} = 'start' then 'alone' else ${transactions.step} end` })
    .where(and(eq(transactions.id, id), isNull(transactions.batchId)))
    .returning({ id: transactions.id });
  return claimed.length > 0;
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
 * (step `alone`: never batched again), due now. A PENDING leg going back to QUEUED is a status change: its event
 * is written with it.
 */
export async function dissolveBatch(database: Database, batchId: string): Promise<void> {
  await moveBatchLegs(database, eq(transactions.batchId, batchId), ['QUEUED', 'PENDING'], {
    status: 'QUEUED',
    step: 'alone',
    batchId: null,
    batchLeg: null,
    txHash: null,
    nextAttemptAt: serviceNow,
  });
}
