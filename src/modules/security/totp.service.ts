import type { UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { constantTimeEqual } from '../../lib/secrets.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import {
  admitLogin,
  changeUser,
  recordLoginFailure,
  verifyCurrentPassword,
} from '../accounts/accounts.service.ts';
import { queueNotice } from '../notifications/notifications.service.ts';
import { hashRecoveryCode, isTotpCode, newRecoveryCodes } from './recovery-codes.ts';
import {
  activateTotp,
  consumePendingTotpLogin,
  countPendingTotpFailure,
  createPendingTotpLogin,
  deactivateTotp,
  findLivePendingTotpLogin,
  replaceRecoveryCodes,
  type SecondFactorProof,
  spendSecondFactor,
} from './security.repository.ts';
import { matchTotpStep, newTotpSecret, otpauthUrlOf } from './totp.ts';

/** The sealing context binds a sealed TOTP secret to its account: it cannot be moved to another row. */
function sealContext(userId: string): string {
  return `totp-secret:${userId}`;
}

function openSecret(deps: Deps, user: UserRow, sealed: string): string {
  return deps.keyring.openText(sealed, sealContext(user.id));
}

function invalidCode(status?: number): AppError {
  return new AppError(
    'invalid_totp_code',
    status === 401 ? 'The code or the pending login is not valid.' : 'The code is wrong or was used already.',
    status === undefined ? {} : { status },
  );
}

function notConfigured(message: string): AppError {
  return new AppError('totp_not_configured', message);
}

/** Starts (or restarts) an enrollment: a new pending secret, sealed at rest, shown once. */
export async function setupTotp(deps: Deps, user: UserRow): Promise<{ secret: string; otpauthUrl: string }> {
  if (user.totpEnabled) {
    throw new AppError('totp_already_enabled', 'Two-factor authentication is already on. Disable it first.');
  }
  const secret = newTotpSecret();
  await changeUser(deps, user.id, {
    totpPendingSecretSealed: deps.keyring.seal(secret, sealContext(user.id)),
    updatedAt: deps.clock.now(),
  });
  return { secret, otpauthUrl: otpauthUrlOf(secret, user.email) };
}

/**
 * Confirms the pending enrollment with a live code; two-factor enforcement starts here. Returns the account's new
 * recovery codes, shown this once.
 */
export async function enableTotp(deps: Deps, user: UserRow, code: string): Promise<string[]> {
  const pending = user.totpPendingSecretSealed;
  if (!pending || user.totpEnabled) {
    throw notConfigured('There is no pending TOTP enrollment. Call POST /me/totp/setup first.');
  }
  const now = deps.clock.now();
  // TOTP steps follow real time: the authenticator app knows nothing of the sandbox's test clock.
  const step = matchTotpStep(openSecret(deps, user, pending), code, deps.wallClock.now(), user.totpLastStep);
  if (step === null) throw invalidCode();
  const recovery = newRecoveryCodes(user.id);
  // The pending secret becomes the active one only if it is still the pending one and the step is unspent.
  const activated = await activateTotp(
    deps.database.db,
    user.id,
    { pendingSealed: pending, step, recoveryCodeHashes: recovery.hashes },
    now,
  );
  deps.credentialCache?.forgetUser(user.id);
  if (!activated) throw invalidCode();
  return recovery.codes;
}

/**
 * What `code` proves for an account with TOTP on: a live, unspent TOTP step, or one of its unused recovery codes
 * (anything that is not six digits is read as one). Null when it proves nothing. Nothing is spent here: the update
 * that acts on the proof spends it, guarded, so a code works once also under concurrent requests.
 */
function secondFactorProof(deps: Deps, user: UserRow, code: string): SecondFactorProof | null {
  if (!isTotpCode(code)) {
    const hash = hashRecoveryCode(user.id, code);
    // Compared with every stored hash, with no early exit.
    const known = user.recoveryCodeHashes.reduce(
      (found, stored) => constantTimeEqual(stored, hash) || found,
      false,
    );
    return known ? { kind: 'recovery', hash } : null;
  }
  if (!user.totpSecretSealed) return null;
  const step = matchTotpStep(
    openSecret(deps, user, user.totpSecretSealed),
    code.trim(),
    deps.wallClock.now(),
    user.totpLastStep,
  );
  return step === null ? null : { kind: 'totp', step };
}

/**
 * Turns two-factor off; needs the password (under the account's password-check limit) and a live code or a recovery
 * code. The account's address is told (a thief with the session and the password would do exactly this).
 */
export async function disableTotp(
  deps: Deps,
  request: RequestContext,
  user: UserRow,
  credentials: { password: string; code: string },
): Promise<void> {
  if (!user.totpEnabled || !user.totpSecretSealed) {
    throw notConfigured('Two-factor authentication is not on.');
  }
  await verifyCurrentPassword(deps, request, user, credentials.password);
  const now = deps.clock.now();
  const proof = secondFactorProof(deps, user, credentials.code);
  if (!proof) throw invalidCode();
  const deactivated = await deps.database.db.transaction(async (tx) => {
    const row = await deactivateTotp(tx, user.id, proof, now);
    if (row) await queueNotice(deps, tx, row, 'totp_disabled');
    return row;
  });
  deps.credentialCache?.forgetUser(user.id);
  if (!deactivated) throw invalidCode();
}

/**
 * A new set of recovery codes in place of the old (which stop working at once): needs the password (under the
 * account's password-check limit) and a live code or a recovery code. Returns the codes, shown this once.
 */
export async function regenerateRecoveryCodes(
  deps: Deps,
  request: RequestContext,
  user: UserRow,
  credentials: { password: string; code: string },
): Promise<string[]> {
  if (!user.totpEnabled || !user.totpSecretSealed) {
    throw notConfigured('Two-factor authentication is not on: recovery codes come with it.');
  }
  await verifyCurrentPassword(deps, request, user, credentials.password);
  const now = deps.clock.now();
  const proof = secondFactorProof(deps, user, credentials.code);
  if (!proof) throw invalidCode();
  const recovery = newRecoveryCodes(user.id);
  const replaced = await replaceRecoveryCodes(deps.database.db, user.id, proof, recovery.hashes, now);
  deps.credentialCache?.forgetUser(user.id);
  if (!replaced) throw invalidCode();
  return recovery.codes;
}

/** `loginExtensions.secondFactor`: with TOTP on, the password step ends in a pending token, not a session. */
export async function totpSecondFactor(
  deps: Deps,
  user: UserRow,
): Promise<{ totpRequired: true; pendingToken: string } | null> {
  if (!user.totpEnabled) return null;
  const { token } = await createPendingTotpLogin(deps.database.db, user.id, deps.clock.now());
  return { totpRequired: true, pendingToken: token };
}

/**
 * The second login step, with a live code or one of the account's recovery codes (each works once). Every failure
 * is `401 invalid_totp_code` (wrong, expired or reused code or token) and counts against the per-IP login limit;
 * past the limit every attempt fails the same way, right or wrong.
 */
export async function completeTotpLogin(
  deps: Deps,
  request: RequestContext,
  pendingToken: string,
  code: string,
): Promise<UserRow> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const pending = await findLivePendingTotpLogin(db, pendingToken, now);
  // The account's own reset pass applies to its second step as to its password (accounts.service.ts).
  const admission = await admitLogin(deps, request, pending?.userId ?? null);
  if (!admission) throw invalidCode(401);
  const fail = async () => {
    await recordLoginFailure(deps, admission);
    return invalidCode(401);
  };
  if (!pending) throw await fail();
  const user = await findUserById(db, pending.userId);
  if (!user?.totpEnabled || !user.totpSecretSealed) throw await fail();
  const proof = secondFactorProof(deps, user, code);
  if (!proof) {
    await countPendingTotpFailure(db, pending.id);
    throw await fail();
  }
  // The token is spent first, then the step or recovery code: a request that loses either race gets no session.
  if (!(await consumePendingTotpLogin(db, pending.id, now))) throw await fail();
  // A recovery code in use may be a thief's: the owner hears of it, in the transaction that spends it.
  const spent = await db.transaction(async (tx) => {
    const done = await spendSecondFactor(tx, user.id, proof);
    if (done && proof.kind === 'recovery') {
      const left = String(user.recoveryCodeHashes.length - 1);
      await queueNotice(deps, tx, user, 'recovery_code_used', left);
    }
    return done;
  });
  deps.credentialCache?.forgetUser(user.id);
  if (!spent) throw await fail();
  if (user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
  return user;
}
