import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client.ts';
import { type ApiKeyRow, apiKeys, type NewApiKey, type UserRow, users } from '../../db/schema/index.ts';

export function activeKeyCondition(now: Date) {
  return and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)));
}

export async function findKeyByHash(
  db: DbOrTx,
  keyHash: string,
): Promise<{ key: ApiKeyRow; user: UserRow } | undefined> {
  const [row] = await db
    .select({ key: apiKeys, user: users })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.keyHash, keyHash))
    .limit(1);
  return row;
}

export async function countActiveKeys(db: DbOrTx, userId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, userId), activeKeyCondition(now)));
  return Number(row?.count ?? 0);
}

export function listKeys(db: DbOrTx, userId: string): Promise<ApiKeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.userId, userId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function findKey(db: DbOrTx, userId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)))
    .limit(1);
  return row;
}

export async function touchKey(db: DbOrTx, id: string, now: Date): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, id));
}

export async function insertKey(db: DbOrTx, values: NewApiKey): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(values).returning();
  if (!row) throw new Error('insert into api_keys returned no row');
  return row;
}

export async function revokeKey(db: DbOrTx, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, id)).returning();
  return row;
}

/** Holds the key's row until the database transaction ends: one spend of the key at a time, in every process. */
export async function lockKey(tx: Tx, id: string): Promise<void> {
  await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id)).for('update');
}
