import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { recordEvent } from '../../db/events.ts';
import { type NewWallet, type WalletRow, wallets } from '../../db/schema/index.ts';

export function listWallets(db: DbOrTx, userId: string): Promise<WalletRow[]> {
  return db
    .select()
    .from(wallets)
    .where(eq(wallets.userId, userId))
    .orderBy(asc(wallets.createdAt), asc(wallets.id));
}

export async function findWallet(db: DbOrTx, userId: string, id: string): Promise<WalletRow | undefined> {
  const [row] = await db
    .select()
    .from(wallets)
    .where(and(eq(wallets.id, id), eq(wallets.userId, userId)))
    .limit(1);
  return row;
}

export async function findWalletById(db: DbOrTx, id: string): Promise<WalletRow | undefined> {
  const [row] = await db.select().from(wallets).where(eq(wallets.id, id)).limit(1);
  return row;
}

export async function findWalletByAddress(db: DbOrTx, address: string): Promise<WalletRow | undefined> {
  const [row] = await db
    .select()
    .from(wallets)
    .where(sql`lower(${wallets.address}) = ${address.toLowerCase()}`)
    .limit(1);
  return row;
}

export async function countWallets(db: DbOrTx, userId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(wallets)
    .where(eq(wallets.userId, userId));
  return Number(row?.count ?? 0);
}

/** Inserts a wallet and its `wallet.created` event, in one database transaction. */
export async function insertWallet(db: DbOrTx, values: NewWallet): Promise<WalletRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(wallets).values(values).returning();
    if (!row) throw new Error('insert into wallets returned no row');
    await recordEvent(tx, { userId: row.userId, type: 'wallet.created', kind: 'wallet', row });
    return row;
  });
}

/** Makes `walletId` the account's one primary wallet (the other loses the flag first: a unique index holds one). */
export async function setPrimaryWallet(db: DbOrTx, userId: string, walletId: string): Promise<WalletRow> {
  await db
    .update(wallets)
    .set({ isPrimary: false })
    .where(and(eq(wallets.userId, userId), eq(wallets.isPrimary, true)));
  const [row] = await db.update(wallets).set({ isPrimary: true }).where(eq(wallets.id, walletId)).returning();
  if (!row) throw new Error(`wallet ${walletId} vanished`);
  return row;
}

/** Records until when (unix seconds) the TransferBatcher is the wallet's operator, as its mined grant says. */
export async function recordBatcherGrant(db: DbOrTx, walletId: string, until: number): Promise<void> {
  await db.update(wallets).set({ batcherOperatorUntil: until }).where(eq(wallets.id, walletId));
}

/** These wallets grant the batcher again before their next batch (their recorded grants are in doubt). */
export async function forgetBatcherGrants(db: DbOrTx, walletIds: readonly string[]): Promise<void> {
  if (walletIds.length === 0) return;
  await db
    .update(wallets)
    .set({ batcherOperatorUntil: null })
    .where(inArray(wallets.id, [...walletIds]));
}
