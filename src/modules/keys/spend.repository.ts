/** The spend-limit queries (src/modules/keys/spend.service.ts): sums over the transaction rows a key asked for. */
import { and, inArray, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { type TransactionType, transactions } from '../../db/schema/index.ts';

/** The rows that count against their key's spend limit: `types`, asked for by one of `keyIds`, since `since`, not FAILED. */
function spendingRows(keyIds: readonly string[], types: readonly TransactionType[], since: Date): SQL {
  return and(
    inArray(transactions.apiKeyId, [...keyIds]),
    inArray(transactions.type, [...types]),
    sql`${transactions.status} <> 'FAILED'`,
    sql`${transactions.createdAt} > ${since.toISOString()}::timestamptz`,
  ) as SQL;
}

/** Base units each key's spending rows since `since` add up to (keys without any are absent). */
export async function spentByKeys(
  db: DbOrTx,
  keyIds: readonly string[],
  types: readonly TransactionType[],
  since: Date,
): Promise<Map<string, bigint>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db
    .select({
      keyId: sql<string>`${transactions.apiKeyId}`,
      total: sql<string>`coalesce(sum(${transactions.amount}), 0)::text`,
    })
    .from(transactions)
    .where(spendingRows(keyIds, types, since))
    .groupBy(transactions.apiKeyId);
  return new Map(rows.map((row) => [row.keyId, BigInt(row.total)]));
}

/**
 * When the oldest of a key's spending rows since `since` that together reach `amount` was created: once it leaves
 * the window, that much is free again. Undefined when the rows add up to less.
 */
export async function spendReachedAt(
  db: DbOrTx,
  keyId: string,
  types: readonly TransactionType[],
  since: Date,
  amount: bigint,
): Promise<Date | undefined> {
  const running = db
    .select({
      createdAt: transactions.createdAt,
      running:
        sql<string>`sum(${transactions.amount}) over (order by ${transactions.createdAt}, ${transactions.id})`.as(
          'running',
        ),
    })
    .from(transactions)
    .where(spendingRows([keyId], types, since))
    .as('running');
  const [row] = await db
    .select({ createdAt: running.createdAt })
    .from(running)
    .where(sql`${running.running} >= ${amount.toString()}::numeric`)
    .orderBy(running.createdAt)
    .limit(1);
  return row?.createdAt;
}
