/**
 * The transactions table as the worker's queue: leases, guarded status moves, retries. Rows are created by the
 * feature modules (`transactions.repository.ts`); from then on they move only through here.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { type DbOrTx, rows } from '../db/client.ts';
import {
  type NewTransaction,
  type TransactionRow,
  type TransactionStatus,
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
 * Returns the updated row, or undefined when someone else moved it first.
 */
export async function transition(
  db: DbOrTx,
  id: string,
  from: TransactionStatus | readonly TransactionStatus[],
  values: Partial<NewTransaction>,
): Promise<TransactionRow | undefined> {
  const statuses = typeof from === 'string' ? [from] : [...from];
  const [row] = await db
    .update(transactions)
    .set({ ...values, updatedAt: values.updatedAt ?? new Date() })
    .where(and(eq(transactions.id, id), inArray(transactions.status, statuses)))
    .returning();
  return row;
}

/** Leases up to `limit` runnable rows due by `now` to `owner` (SKIP LOCKED: two workers never take one row). */
export async function leaseDueRows(
  db: DbOrTx,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<TransactionRow[]> {
  const claimed = await rows<{ id: string }>(
    db,
    sql`update transactions set lease_owner = ${owner}, lease_until = ${leaseUntil.toISOString()}
        where id in (
          select id from transactions
          where status in ('QUEUED', 'PENDING', 'SETTLING')
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
