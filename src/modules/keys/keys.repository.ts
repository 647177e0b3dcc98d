import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { apiKeys, users } from '../../db/schema/index.ts';
import type { UserRow } from '../accounts/accounts.repository.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

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
