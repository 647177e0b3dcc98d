/**
 * What the paged lists share: their totals from `list_totals` (constant time, whatever the number of rows), and
 * the keyset position of a list ordered `created_at desc, id desc`.
 */
import { type AnyColumn, and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from './client.ts';
import { type CountedList, listTotals } from './schema/index.ts';

/** Where a page starts: a page number (OFFSET), or just after the row a cursor names (keyset). */
export type ListPosition = { page: number } | { after: ListCursor };

/** The last row of the previous page, in the list's order. */
export interface ListCursor {
  createdAt: Date;
  id: string;
}

/**
 * How many rows of `list` the account has under `filter` (each value one of the list's filters, keyed as in the
 * list's key function of migrations 0007 and 0012), and in one of `walletIds` when given (a key bound to wallets): a
 * sum over at most wallets × types × statuses × directions × 8 counter rows.
 */
export async function listTotal(
  db: DbOrTx,
  list: CountedList,
  userId: string,
  filter: Record<string, string>,
  walletIds?: readonly string[],
): Promise<number> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${listTotals.count}), 0)::text` })
    .from(listTotals)
    .where(
      and(
        eq(listTotals.list, list),
        eq(listTotals.userId, userId),
        sql`${listTotals.key} @> ${JSON.stringify(filter)}::jsonb`,
        walletIds ? inArray(sql`${listTotals.key}->>'walletId'`, [...walletIds]) : undefined,
      ),
    );
  return Number(row?.total ?? 0);
}

/** Rows after `cursor` in `created_at desc, id desc` order: one row comparison, which the list's index answers. */
export function afterCursor(createdAt: AnyColumn, id: AnyColumn, cursor: ListCursor): SQL {
  return sql`(${createdAt}, ${id}) < (${cursor.createdAt.toISOString()}::timestamptz, ${cursor.id})`;
}

/** A page read with one row too many: the page, and whether anything follows it. */
export function trimPage<T>(rows: T[], pageSize: number): { items: T[]; hasMore: boolean } {
  return { items: rows.slice(0, pageSize), hasMore: rows.length > pageSize };
}
