import type { UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { findUserById } from '../accounts/accounts.repository.ts';
import {
  assertLoginAllowed,
  changeUser,
  recordLoginFailure,
  verifyCurrentPassword,
} from '../accounts/accounts.service.ts';
import {
  activateTotp,
  advanceTotpStep,
  consumePendingTotpLogin,
  countPendingTotpFailure,
  createPendingTotpLogin,
  deactivateTotp,
  findLivePendingTotpLogin,
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

/** Confirms the pending enrollment with a live code; two-factor enforcement starts here. */
export async function enableTotp(deps: Deps, user: UserRow, code: string): Promise<void> {
  const pending = user.totpPendingSecretSealed;
  if (!pending || user.totpEnabled) {
    throw notConfigured('There is no pending TOTP enrollment. Call POST /me/totp/setup first.');
  }
  const now = deps.clock.now();
  const step = matchTotpStep(openSecret(deps, user, pending), code, now, user.totpLastStep);
  if (step === null) throw invalidCode();
  // The pending secret becomes the active one only if it is still the pending one and the step is unspent.
  const activated = await activateTotp(deps.database.db, user.id, pending, step, now);
  deps.credentialCache?.forgetUser(user.id);
  if (!activated) throw invalidCode();
}

/** Turns two-factor off; needs both the password (under the account's password-check limit) and a live code. */
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
  const { code } = credentials;
  const now = deps.clock.now();
  const step = matchTotpStep(openSecret(deps, user, user.totpSecretSealed), code, now, user.totpLastStep);
  if (step === null) throw invalidCode();
  const deactivated = await deactivateTotp(deps.database.db, user.id, step, now);
  deps.credentialCache?.forgetUser(user.id);
  if (!deactivated) throw invalidCode();
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
 * The second login step. Every failure is `401 invalid_totp_code` (wrong, expired or reused code or token) and
 * counts against the per-IP login limit; past the limit every attempt fails the same way, right or wrong.
 */
export async function completeTotpLogin(
  deps: Deps,
  request: RequestContext,
  pendingToken: string,
  code: string,
): Promise<UserRow> {
  const { db } = deps.database;
  if (!(await assertLoginAllowed(deps, request))) throw invalidCode(401);
  const fail = async () => {
    await recordLoginFailure(deps, request);
    return invalidCode(401);
  };
  const now = deps.clock.now();
  const pending = await findLivePendingTotpLogin(db, pendingToken, now);
  if (!pending) throw await fail();
  const user = await findUserById(db, pending.userId);
  if (!user?.totpEnabled || !user.totpSecretSealed) throw await fail();
  const step = matchTotpStep(openSecret(deps, user, user.totpSecretSealed), code, now, user.totpLastStep);
  if (step === null) {
    await countPendingTotpFailure(db, pending.id);
    throw await fail();
  }
  // The token is spent first, then the step: a request that loses either race gets no session.
  if (!(await consumePendingTotpLogin(db, pending.id, now))) throw await fail();
  const advanced = await advanceTotpStep(db, user.id, step);
  deps.credentialCache?.forgetUser(user.id);
  if (!advanced) throw await fail();
  if (user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
  return user;
}
