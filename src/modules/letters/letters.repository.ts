import { and, desc, eq, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { recordEvent } from '../../db/events.ts';
import { afterCursor, type ListPosition, listTotal, trimPage } from '../../db/lists.ts';
import { serviceNow } from '../../db/schema/columns.ts';
import {
  type LetterRow,
  type LetterStatus,
  letters,
  type NewLetter,
  type TransactionRow,
  transactions,
  type WebhookEventType,
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

/**
 * A page of the caller's sent letters, newest first, with the total from `list_totals` (as `listTransactions`); only
 * those sent from `inWallets` when given (a key bound to some wallets).
 */
export async function listLetters(
  db: DbOrTx,
  userId: string,
  filter: { status?: LetterStatus | undefined; inWallets?: readonly string[] | undefined },
  position: ListPosition,
  pageSize: number,
): Promise<{ items: LetterRow[]; hasMore: boolean; total: number }> {
  const { status, inWallets } = filter;
  const conditions: SQL[] = [eq(letters.userId, userId)];
  if (inWallets) conditions.push(inArray(letters.senderWalletId, [...inWallets]));
  if (status) conditions.push(eq(letters.status, status));
  if ('after' in position) conditions.push(afterCursor(letters.createdAt, letters.id, position.after));
  const offset = 'page' in position ? (position.page - 1) * pageSize : 0;
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(letters)
      .where(and(...conditions))
      .orderBy(desc(letters.createdAt), desc(letters.id))
      .limit(pageSize + 1)
      .offset(offset),
    listTotal(db, 'letters', userId, status ? { status } : {}, inWallets),
  ]);
  return { ...trimPage(rows, pageSize), total };
}

/** The event of a letter's move from one status to another, if it is one an account can subscribe to. */
function letterEventOf(before: LetterStatus, after: LetterStatus): WebhookEventType | null {
  if (before === after) return null;
  // A letter exists for its recipient once its escrow holds the amount (DRAFT is the moment before that).
  if (after === 'ESCROWED') return before === 'DRAFT' ? 'letter.created' : null;
  const events: Partial<Record<LetterStatus, WebhookEventType>> = {
    MAILED: 'letter.mailed',
    CLAIMED: 'letter.claimed',
    VOIDED: 'letter.voided',
    EXPIRED: 'letter.expired',
  };
  return events[after] ?? null;
}

/**
 * Every letter update goes through here: applies `values` while the letter is in one of `from` (any status when
 * null), and writes the event of its status move in the same database transaction.
 */
async function changeLetter(
  db: DbOrTx,
  id: string,
  from: readonly LetterStatus[] | null,
  values: Partial<NewLetter>,
): Promise<LetterRow | undefined> {
  const guard = from ? and(eq(letters.id, id), inArray(letters.status, [...from])) : eq(letters.id, id);
  return db.transaction(async (tx) => {
    const [before] = await tx.select({ status: letters.status }).from(letters).where(guard).for('update');
    if (!before) return undefined;
    const [row] = await tx
      .update(letters)
      .set({ ...values, updatedAt: values.updatedAt ?? serviceNow })
      .where(guard)
      .returning();
    const type = row ? letterEventOf(before.status, row.status) : null;
    if (row && type) {
      const related = async (db: DbOrTx) => [...(await legTransactions(db, [row])).values()];
      await recordEvent(tx, { userId: row.userId, type, kind: 'letter', row, related });
    }
    return row;
  });
}

/** Whether a claim of the letter has failed before (a sandbox magic amount fails only the first claim). */
export async function hasFailedClaim(db: DbOrTx, letterId: string): Promise<boolean> {
  const [found] = await db
    .select({ id: transactions.id })
    .from(transactions)
    .where(
      and(
        eq(transactions.type, 'LETTER_CLAIM'),
        eq(transactions.status, 'FAILED'),
        sql`${transactions.metadata}->>'letterId' = ${letterId}`,
      ),
    )
    .limit(1);
  return found !== undefined;
}

/** Guarded letter update: applies only while the letter is in one of `from`. */
export function moveLetter(
  db: DbOrTx,
  id: string,
  from: readonly LetterStatus[],
  values: Partial<NewLetter>,
): Promise<LetterRow | undefined> {
  return changeLetter(db, id, from, values);
}

export async function updateLetter(db: DbOrTx, id: string, values: Partial<NewLetter>): Promise<LetterRow> {
  const row = await changeLetter(db, id, null, values);
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
