import { and, asc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import {
  type PasskeyRow,
  type PendingTotpLoginRow,
  passkeys,
  pendingTotpLogins,
  type UserRow,
  usedWebauthnChallenges,
  users,
} from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { randomToken, sha256Hex } from '../../lib/secrets.ts';

export const PENDING_LOGIN_TTL_MS = 5 * 60_000;
/** Wrong codes one pending token tolerates before it is spent (the per-IP login limit applies as well). */
export const PENDING_LOGIN_MAX_ATTEMPTS = 5;

/** A TOTP step is spendable only above the last accepted one. */
const stepUnspent = (step: number) => or(isNull(users.totpLastStep), lt(users.totpLastStep, step));

/**
 * What proved the second factor: a TOTP step (spent by moving the last accepted step up to it) or a recovery code's
 * hash (spent by removing it from the account's codes).
 */
export type SecondFactorProof = { kind: 'totp'; step: number } | { kind: 'recovery'; hash: string };

/** The update that spends `proof`, and the condition under which it is still unspent. */
function spending(proof: SecondFactorProof) {
  if (proof.kind === 'totp') return { set: { totpLastStep: proof.step }, unspent: stepUnspent(proof.step) };
  return {
    set: { recoveryCodeHashes: sql<string[]>`array_remove(${users.recoveryCodeHashes}, ${proof.hash})` },
    unspent: sql`${proof.hash} = any(${users.recoveryCodeHashes})`,
  };
}

/**
 * Spends a TOTP step or a recovery code: the one atomic place where a second factor becomes used. Returns false when
 * it was spent already (that step or a later one accepted, that recovery code used), also by a concurrent request.
 */
export async function spendSecondFactor(
  db: DbOrTx,
  userId: string,
  proof: SecondFactorProof,
): Promise<boolean> {
  const { set, unspent } = spending(proof);
  const updated = await db
    .update(users)
    .set(set)
    .where(and(eq(users.id, userId), eq(users.totpEnabled, true), unspent))
    .returning({ id: users.id });
  return updated.length === 1;
}

/**
 * Pending secret → active secret, 2FA on, `step` spent, a new set of recovery codes; false when the enrollment or
 * step changed meanwhile.
 */
export async function activateTotp(
  db: DbOrTx,
  userId: string,
  values: { pendingSealed: string; step: number; recoveryCodeHashes: string[] },
  now: Date,
): Promise<boolean> {
  const { pendingSealed, step } = values;
  const updated = await db
    .update(users)
    .set({
      totpSecretSealed: pendingSealed,
      totpPendingSecretSealed: null,
      totpEnabled: true,
      totpLastStep: step,
      recoveryCodeHashes: values.recoveryCodeHashes,
      updatedAt: now,
    })
    .where(and(eq(users.id, userId), eq(users.totpPendingSecretSealed, pendingSealed), stepUnspent(step)))
    .returning({ id: users.id });
  return updated.length === 1;
}

/**
 * 2FA off, both secrets and the recovery codes dropped, `proof` spent; false when 2FA was off already or the proof
 * was spent.
 */
export async function deactivateTotp(
  db: DbOrTx,
  userId: string,
  proof: SecondFactorProof,
  now: Date,
): Promise<UserRow | undefined> {
  const { set, unspent } = spending(proof);
  const [row] = await db
    .update(users)
    .set({
      ...set,
      totpSecretSealed: null,
      totpPendingSecretSealed: null,
      totpEnabled: false,
      recoveryCodeHashes: [],
      updatedAt: now,
    })
    .where(and(eq(users.id, userId), eq(users.totpEnabled, true), unspent))
    .returning();
  return row;
}

/** A new set of recovery codes in place of the old, `proof` spent; undefined when 2FA is off or the proof was spent. */
export async function replaceRecoveryCodes(
  db: DbOrTx,
  userId: string,
  proof: SecondFactorProof,
  hashes: string[],
  now: Date,
): Promise<UserRow | undefined> {
  const { set, unspent } = spending(proof);
  const [row] = await db
    .update(users)
    .set({ ...set, recoveryCodeHashes: hashes, updatedAt: now })
    .where(and(eq(users.id, userId), eq(users.totpEnabled, true), unspent))
    .returning();
  return row;
}

export async function createPendingTotpLogin(
  db: DbOrTx,
  userId: string,
  now: Date,
): Promise<{ token: string; row: PendingTotpLoginRow }> {
  const token = randomToken(32);
  const [row] = await db
    .insert(pendingTotpLogins)
    .values({
      id: newId(),
      userId,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(now.getTime() + PENDING_LOGIN_TTL_MS),
      createdAt: now,
    })
    .returning();
  if (!row) throw new Error('insert into pending_totp_logins returned no row');
  // Finished pending logins are kept only briefly.
  await db
    .delete(pendingTotpLogins)
    .where(lt(pendingTotpLogins.expiresAt, new Date(now.getTime() - PENDING_LOGIN_TTL_MS)));
  return { token, row };
}

/** The live (unexpired, unspent, attempts left) pending login of a token. */
export async function findLivePendingTotpLogin(
  db: DbOrTx,
  token: string,
  now: Date,
): Promise<PendingTotpLoginRow | undefined> {
  const [row] = await db
    .select()
    .from(pendingTotpLogins)
    .where(
      and(
        eq(pendingTotpLogins.tokenHash, sha256Hex(token)),
        isNull(pendingTotpLogins.consumedAt),
        gt(pendingTotpLogins.expiresAt, now),
        lt(pendingTotpLogins.attempts, PENDING_LOGIN_MAX_ATTEMPTS),
      ),
    )
    .limit(1);
  return row;
}

/** Spends a pending login; false when another request spent it first. */
export async function consumePendingTotpLogin(db: DbOrTx, id: string, now: Date): Promise<boolean> {
  const updated = await db
    .update(pendingTotpLogins)
    .set({ consumedAt: now })
    .where(and(eq(pendingTotpLogins.id, id), isNull(pendingTotpLogins.consumedAt)))
    .returning({ id: pendingTotpLogins.id });
  return updated.length === 1;
}

export async function countPendingTotpFailure(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(pendingTotpLogins)
    .set({ attempts: sql`${pendingTotpLogins.attempts} + 1` })
    .where(eq(pendingTotpLogins.id, id));
}

/**
 * Records a WebAuthn challenge as spent. Returns false when it was spent before (the primary key is the
 * challenge's hash, so two concurrent requests cannot both succeed).
 */
export async function spendChallenge(
  db: DbOrTx,
  values: { challenge: string; purpose: string; userId: string | null; expiresAt: Date },
  now: Date,
): Promise<boolean> {
  await db.delete(usedWebauthnChallenges).where(lt(usedWebauthnChallenges.expiresAt, now));
  const inserted = await db
    .insert(usedWebauthnChallenges)
    .values({
      challengeHash: sha256Hex(values.challenge),
      purpose: values.purpose,
      userId: values.userId,
      expiresAt: values.expiresAt,
      usedAt: now,
    })
    .onConflictDoNothing()
    .returning({ challengeHash: usedWebauthnChallenges.challengeHash });
  return inserted.length === 1;
}

/** The account's passkeys in use (removed ones are not listed). */
export async function listPasskeys(db: DbOrTx, userId: string): Promise<PasskeyRow[]> {
  return db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.userId, userId), isNull(passkeys.removedAt)))
    .orderBy(asc(passkeys.createdAt), asc(passkeys.id));
}

/** One of the account's passkeys, removed ones included; undefined for another account's id. */
export async function findOwnPasskey(
  db: DbOrTx,
  userId: string,
  id: string,
): Promise<PasskeyRow | undefined> {
  const [row] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .limit(1);
  return row;
}

/** Renames a passkey in use; undefined when it is removed (or not the account's). */
export async function renamePasskey(
  db: DbOrTx,
  userId: string,
  id: string,
  deviceName: string,
): Promise<PasskeyRow | undefined> {
  const [row] = await db
    .update(passkeys)
    .set({ deviceName })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId), isNull(passkeys.removedAt)))
    .returning();
  return row;
}

/** Marks a passkey removed; undefined when it was removed already (by a concurrent request, say). */
export async function markPasskeyRemoved(
  db: DbOrTx,
  userId: string,
  id: string,
  now: Date,
): Promise<PasskeyRow | undefined> {
  const [row] = await db
    .update(passkeys)
    .set({ removedAt: now })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId), isNull(passkeys.removedAt)))
    .returning();
  return row;
}

export async function findPasskeyByCredentialId(
  db: DbOrTx,
  credentialId: string,
): Promise<{ passkey: PasskeyRow; user: UserRow } | undefined> {
  const [row] = await db
    .select({ passkey: passkeys, user: users })
    .from(passkeys)
    .innerJoin(users, eq(users.id, passkeys.userId))
    .where(and(eq(passkeys.credentialId, credentialId), isNull(passkeys.removedAt)))
    .limit(1);
  return row;
}

export async function insertPasskey(
  db: DbOrTx,
  values: {
    userId: string;
    credentialId: string;
    publicKey: string;
    counter: number;
    transports: string[];
    deviceName: string | null;
  },
  now: Date,
): Promise<PasskeyRow> {
  const [row] = await db
    .insert(passkeys)
    .values({ id: newId(), ...values, createdAt: now })
    .returning();
  if (!row) throw new Error('insert into passkeys returned no row');
  return row;
}

/**
 * Stores the counter of a verified assertion and stamps lastUsedAt. The stored counter only moves forward: a
 * concurrent assertion that already stored a larger one wins, and this one is refused (false).
 */
export async function recordPasskeyUse(
  db: DbOrTx,
  id: string,
  previousCounter: number,
  newCounter: number,
  now: Date,
): Promise<boolean> {
  const updated = await db
    .update(passkeys)
    .set({ counter: newCounter, lastUsedAt: now })
    .where(and(eq(passkeys.id, id), eq(passkeys.counter, previousCounter), isNull(passkeys.removedAt)))
    .returning({ id: passkeys.id });
  return updated.length === 1;
}
