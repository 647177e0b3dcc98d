import { and, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import {
  type NewTransaction,
  type TransactionRow,
  type TransactionStatus,
  type TransactionType,
  transactions,
} from '../../db/schema/index.ts';

export async function insertTransaction(db: DbOrTx, values: NewTransaction): Promise<TransactionRow> {
  const [row] = await db.insert(transactions).values(values).returning();
  if (!row) throw new Error('insert into transactions returned no row');
  return row;
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
  walletId?: string;
  type?: TransactionType;
  status?: TransactionStatus;
}

export async function listTransactions(
  db: DbOrTx,
  filter: TransactionFilter,
  page: number,
  pageSize: number,
): Promise<{ items: TransactionRow[]; total: number }> {
  const conditions: SQL[] = [eq(transactions.userId, filter.userId)];
  if (filter.walletId) conditions.push(eq(transactions.walletId, filter.walletId));
  if (filter.type) conditions.push(eq(transactions.type, filter.type));
  if (filter.status) conditions.push(eq(transactions.status, filter.status));
  const where = and(...conditions);
  const [items, [count]] = await Promise.all([
    db
      .select()
      .from(transactions)
      .where(where)
      .orderBy(desc(transactions.createdAt), desc(transactions.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ total: sql<number>`count(*)::int` }).from(transactions).where(where),
  ]);
  return { items, total: Number(count?.total ?? 0) };
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
