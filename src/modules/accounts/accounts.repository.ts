import { and, eq, gt, isNull, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client.ts';
import { type SessionRow, sessions, type UserRow, users } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { randomToken, sha256Hex } from '../../lib/secrets.ts';

export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

export async function findUserByEmail(db: DbOrTx, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`)
    .limit(1);
  return row;
}

/**
 * Locks the account's row until the end of the database transaction `tx`: what is checked and written under it
 * (a per-account limit, a cap) holds against concurrent requests and workers.
 */
export async function lockUser(tx: Tx, userId: string): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
}

export async function findUserById(db: DbOrTx, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

export async function insertUser(
  db: DbOrTx,
  values: {
    email: string;
    passwordHash: string;
    name?: string | null;
    company?: string | null;
    mustChangePassword?: boolean;
  },
  now: Date,
): Promise<UserRow> {
  const [row] = await db
    .insert(users)
    .values({
      id: newId(),
      email: values.email.trim(),
      passwordHash: values.passwordHash,
      name: values.name ?? null,
      company: values.company ?? null,
      mustChangePassword: values.mustChangePassword ?? false,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error('insert into users returned no row');
  return row;
}

/** What an account's row may be changed to: values, or SQL computed from the row (`nextTokenVersion`). */
export type UserChanges = {
  [Column in keyof Omit<UserRow, 'id' | 'createdAt'>]?: UserRow[Column] | SQL;
};

/** The account's token version moved on in the update itself: every session minted before ends, whatever races it. */
export function nextTokenVersion(): SQL {
  return sql`${users.tokenVersion} + 1`;
}

export async function updateUser(db: DbOrTx, id: string, values: UserChanges): Promise<UserRow> {
  const [row] = await db.update(users).set(values).where(eq(users.id, id)).returning();
  if (!row) throw new Error(`user ${id} vanished`);
  return row;
}

/**
 * Updates the user only if its token version is still `tokenVersion` (a guarded update): of two requests that both
 * checked the same credentials, only the first may replace them. `undefined` when another request got there first.
 */
export async function updateUserAtVersion(
  db: DbOrTx,
  id: string,
  tokenVersion: number,
  values: Partial<Omit<UserRow, 'id' | 'createdAt'>>,
): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set(values)
    .where(and(eq(users.id, id), eq(users.tokenVersion, tokenVersion)))
    .returning();
  return row;
}

/** Mints a session; the cookie carries the token, the database only its hash. */
export async function createSession(
  db: DbOrTx,
  user: Pick<UserRow, 'id' | 'tokenVersion'>,
  now: Date,
): Promise<{ token: string; session: SessionRow }> {
  const token = randomToken(32);
  const [session] = await db
    .insert(sessions)
    .values({
      id: newId(),
      userId: user.id,
      tokenHash: sha256Hex(token),
      tokenVersion: user.tokenVersion,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      createdAt: now,
    })
    .returning();
  if (!session) throw new Error('insert into sessions returned no row');
  return { token, session };
}

/**
 * The unexpired, unrevoked session of a cookie token with its user, or undefined. Whether its token version is
 * still the user's is for the caller to judge (`resolveSession`).
 */
export async function findLiveSession(
  db: DbOrTx,
  token: string,
  now: Date,
): Promise<{ session: SessionRow; user: UserRow } | undefined> {
  const [row] = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.tokenHash, sha256Hex(token)), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)),
    )
    .limit(1);
  return row;
}

export async function revokeSession(db: DbOrTx, sessionId: string, now: Date): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
}
