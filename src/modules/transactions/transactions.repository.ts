import { and, desc, eq, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';
import { type DbOrTx, insertValuesWhere, tableRows } from '../../db/client.ts';
import { hasEnabledEndpoint, hasEnabledEndpointOf, recordEvent } from '../../db/events.ts';
import { afterCursor, type ListPosition, listTotal, trimPage } from '../../db/lists.ts';
import {
  type NewTransaction,
  type TransactionDirection,
  type TransactionRow,
  type TransactionStatus,
  type TransactionType,
  transactions,
} from '../../db/schema/index.ts';

/** A row to insert, with its direction named: a queued one's comes from its type's descriptor (`queuedTransaction`). */
export type DirectedTransaction = NewTransaction & { direction: TransactionDirection };

/**
 * Inserts a transaction and, when its account has an enabled webhook endpoint, its `transaction.created` event in
 * the same database transaction. Most accounts have none: their row goes in by one statement that inserts only
 * while the account has no such endpoint, with no database transaction around it (on the embedded database, a
 * transaction holds the one connection from its first statement until its commit arrives). Otherwise, or when an
 * endpoint appeared, the row goes in with its event.
 */
export async function insertTransaction(db: DbOrTx, row: DirectedTransaction): Promise<TransactionRow> {
  const [alone] = await tableRows(
    db,
    transactions,
    insertValuesWhere(transactions, row, sql`not ${hasEnabledEndpointOf(row.userId)}`),
  );
  if (alone) return alone;
  return db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(transactions)
      .values(row)
      .returning({ ...getTableColumns(transactions), hasEndpoints: hasEnabledEndpoint('transactions') });
    if (!inserted) throw new Error('insert into transactions returned no row');
    const { hasEndpoints, ...written } = inserted;
    if (hasEndpoints) {
      await recordEvent(tx, {
        userId: written.userId,
        type: 'transaction.created',
        kind: 'transaction',
        row: written,
      });
    }
    return written;
  });
}

export async function findOwnTransaction(
  db: DbOrTx,
  userId: string,
  id: string,
): Promise<TransactionRow | undefined> {
  const [row] = await db
    .select()
    .from(transactions)
    .where(and(eq(transactions.id, id), eq(transactions.userId, userId)))
    .limit(1);
  return row;
}

export async function findByIdempotencyKey(
  db: DbOrTx,
  userId: string,
  key: string,
): Promise<TransactionRow | undefined> {
  const [row] = await db
    .select()
    .from(transactions)
    .where(and(eq(transactions.userId, userId), eq(transactions.idempotencyKey, key)))
    .limit(1);
  return row;
}

export interface TransactionFilter {
  userId: string;
  /** The wallets of a key bound to some (its scope); absent: every wallet of the account. */
  inWallets?: readonly string[];
  walletId?: string;
  type?: TransactionType;
  status?: TransactionStatus;
  direction?: TransactionDirection;
}

/**
 * A page of the caller's transactions, newest first (`created_at desc, id desc`), with the filter's total from
 * `list_totals`: neither read counts or skips rows by cursor, so page 1 and the last page cost the same at 10⁶ rows.
 */
export async function listTransactions(
  db: DbOrTx,
  filter: TransactionFilter,
  position: ListPosition,
  pageSize: number,
): Promise<{ items: TransactionRow[]; hasMore: boolean; total: number }> {
  const { userId, inWallets, ...filters } = filter;
  const conditions: SQL[] = [eq(transactions.userId, userId)];
  if (inWallets) conditions.push(inArray(transactions.walletId, [...inWallets]));
  if (filters.walletId) conditions.push(eq(transactions.walletId, filters.walletId));
  if (filters.type) conditions.push(eq(transactions.type, filters.type));
  if (filters.status) conditions.push(eq(transactions.status, filters.status));
  if (filters.direction) conditions.push(eq(transactions.direction, filters.direction));
  if ('after' in position)
    conditions.push(afterCursor(transactions.createdAt, transactions.id, position.after));
  const offset = 'page' in position ? (position.page - 1) * pageSize : 0;
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(transactions)
      .where(and(...conditions))
      .orderBy(desc(transactions.createdAt), desc(transactions.id))
      .limit(pageSize + 1)
      .offset(offset),
    listTotal(db, 'transactions', userId, filters, inWallets),
  ]);
  return { ...trimPage(rows, pageSize), total };
}

/**
 * Base units of a user's `type` transactions since `since` that passed pre-flight and did not fail (the faucet's
 * rolling cap): a row still at step `start` has not been counted yet.
 */
export async function sumSince(
  db: DbOrTx,
  userId: string,
  type: TransactionType,
  since: Date,
  excludeId: string,
): Promise<bigint> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${transactions.amount}), 0)::text` })
    .from(transactions)
    .where(
      and(
        eq(transactions.userId, userId),
        eq(transactions.type, type),
        sql`${transactions.status} <> 'FAILED'`,
        sql`${transactions.step} <> 'start'`,
        sql`${transactions.createdAt} > ${since.toISOString()}`,
        sql`${transactions.id} <> ${excludeId}`,
      ),
    );
  return BigInt(row?.total ?? '0');
}
