import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { type PasswordResetRow, passwordResets, type UserRow, users } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { nextTokenVersion } from '../accounts/accounts.repository.ts';

export async function insertPasswordReset(
  db: DbOrTx,
  values: { userId: string; tokenHash: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await db.insert(passwordResets).values({ id: newId(), ...values, createdAt: now });
  // Spent and expired tokens are kept a day (for support questions), then swept.
  await db.delete(passwordResets).where(lt(passwordResets.expiresAt, new Date(now.getTime() - 86_400_000)));
}

/** The unspent, unexpired reset of a token's hash. */
export async function findLiveReset(
  db: DbOrTx,
  tokenHash: string,
  now: Date,
): Promise<PasswordResetRow | undefined> {
  const [row] = await db
    .select()
    .from(passwordResets)
    .where(
      and(
        eq(passwordResets.tokenHash, tokenHash),
        isNull(passwordResets.usedAt),
        gt(passwordResets.expiresAt, now),
      ),
    )
    .limit(1);
  return row;
}

/** Spends a reset token; false when another request spent it first (or it expired meanwhile). */
export async function spendReset(db: DbOrTx, id: string, now: Date): Promise<boolean> {
  const updated = await db
    .update(passwordResets)
    .set({ usedAt: now })
    .where(and(eq(passwordResets.id, id), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
    .returning({ id: passwordResets.id });
  return updated.length === 1;
}

/** Spends every other open reset token of the account: one reset ends them all. */
export async function spendOpenResets(db: DbOrTx, userId: string, now: Date): Promise<void> {
  await db
    .update(passwordResets)
    .set({ usedAt: now })
    .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
}

/** The new password hash, and the token version moved on: every session minted before ends. */
export async function replacePassword(
  db: DbOrTx,
  userId: string,
  passwordHash: string,
  now: Date,
): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({
      passwordHash,
      mustChangePassword: false,
      tokenVersion: nextTokenVersion(),
      updatedAt: now,
    })
    .where(eq(users.id, userId))
    .returning();
  return row;
}
