import { and, desc, eq, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import {
  type LetterRow,
  type LetterStatus,
  letters,
  type NewLetter,
  type TransactionRow,
  transactions,
} from '../../db/schema/index.ts';

/** The statuses a letter can be claimed (and expires) in. */
export const CLAIMABLE = ['ESCROWED', 'MAILED'] as const satisfies readonly LetterStatus[];

export async function insertLetter(db: DbOrTx, values: NewLetter): Promise<LetterRow> {
  const [row] = await db.insert(letters).values(values).returning();
  if (!row) throw new Error('insert into letters returned no row');
  return row;
}

export async function findLetterById(db: DbOrTx, id: string): Promise<LetterRow | undefined> {
  const [row] = await db.select().from(letters).where(eq(letters.id, id)).limit(1);
  return row;
}

export async function findLetterByCodeHash(db: DbOrTx, hash: string): Promise<LetterRow | undefined> {
  const [row] = await db.select().from(letters).where(eq(letters.claimCodeHash, hash)).limit(1);
  return row;
}

export async function listLetters(
  db: DbOrTx,
  userId: string,
  status: LetterStatus | undefined,
  page: number,
  pageSize: number,
): Promise<{ items: LetterRow[]; total: number }> {
  const conditions: SQL[] = [eq(letters.userId, userId)];
  if (status) conditions.push(eq(letters.status, status));
  const where = and(...conditions);
  const [items, [count]] = await Promise.all([
    db
      .select()
      .from(letters)
      .where(where)
      .orderBy(desc(letters.createdAt), desc(letters.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ total: sql<number>`count(*)::int` }).from(letters).where(where),
  ]);
  return { items, total: Number(count?.total ?? 0) };
}

/** Guarded letter update: applies only while the letter is in one of `from`. */
export async function moveLetter(
  db: DbOrTx,
  id: string,
  from: readonly LetterStatus[],
  values: Partial<NewLetter>,
): Promise<LetterRow | undefined> {
  const [row] = await db
    .update(letters)
    .set({ ...values, updatedAt: values.updatedAt ?? new Date() })
    .where(and(eq(letters.id, id), inArray(letters.status, [...from])))
    .returning();
  return row;
}

export async function updateLetter(db: DbOrTx, id: string, values: Partial<NewLetter>): Promise<LetterRow> {
  const [row] = await db
    .update(letters)
    .set({ ...values, updatedAt: values.updatedAt ?? new Date() })
    .where(eq(letters.id, id))
    .returning();
  if (!row) throw new Error(`letter ${id} vanished`);
  return row;
}

/** The leg transactions of letters, by id. */
export async function legTransactions(db: DbOrTx, rows: LetterRow[]): Promise<Map<string, TransactionRow>> {
  const ids = rows
    .flatMap((row) => [row.escrowTransactionId, row.claimTransactionId, row.refundTransactionId])
    .filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return new Map();
  const found = await db.select().from(transactions).where(inArray(transactions.id, ids));
  return new Map(found.map((row) => [row.id, row]));
}

/** Claimable letters past their expiry, at most `limit` (the sweep). */
export function findExpiredLetters(db: DbOrTx, now: Date, limit: number): Promise<LetterRow[]> {
  return db
    .select()
    .from(letters)
    .where(and(inArray(letters.status, [...CLAIMABLE]), lte(letters.expiresAt, now)))
    .limit(limit);
}

/** Voided or expired letters whose refund leg FAILED, at most `limit` (the sweep queues them again). */
export async function findLettersWithFailedRefund(db: DbOrTx, limit: number): Promise<LetterRow[]> {
  const found = await db
    .select({ letter: letters })
    .from(letters)
    .innerJoin(transactions, eq(transactions.id, letters.refundTransactionId))
    .where(and(inArray(letters.status, ['VOIDED', 'EXPIRED']), eq(transactions.status, 'FAILED')))
    .limit(limit);
  return found.map(({ letter }) => letter);
}

/**
 * Letters still DRAFT or CLAIMING whose leg (the escrow, the claim) already finished, with that leg: the letter's
 * own move was lost (a crash between the two), at most `limit`.
 */
export function findUnsettledLetters(
  db: DbOrTx,
  limit: number,
): Promise<Array<{ letter: LetterRow; leg: TransactionRow }>> {
  return db
    .select({ letter: letters, leg: transactions })
    .from(letters)
    .innerJoin(
      transactions,
      sql`${transactions.id} = case when ${letters.status} = 'DRAFT' then ${letters.escrowTransactionId} else ${letters.claimTransactionId} end`,
    )
    .where(
      and(
        inArray(letters.status, ['DRAFT', 'CLAIMING']),
        inArray(transactions.status, ['CONFIRMED', 'FAILED']),
      ),
    )
    .limit(limit);
}
