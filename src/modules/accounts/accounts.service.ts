import type { DbOrTx } from '../../db/client.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { UserCredential } from '../../http/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { SESSION_SCOPE } from '../../lib/key-scope.ts';
import { consume, type Limit } from '../../lib/rate-limit.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { queueNotice } from '../notifications/notifications.service.ts';
import {
  createSession,
  findLiveSession,
  findUserByEmail,
  insertUser,
  revokeSession,
  updateUser,
  updateUserAtVersion,
} from './accounts.repository.ts';
import { assertPasswordPolicy, hashPassword, verifyPassword } from './password.ts';

const LOGIN_WINDOW_MS = 15 * 60_000;

/** A session just minted: the account as it is now, and the token the session cookie carries. */
export interface NewSession {
  user: UserRow;
  token: string;
  expiresAt: Date;
}

function loginFailureKey(ip: string): string {
  return `login-failures:ip:${ip}`;
}

/** Counts the password resets of one account made from one IP in the current login window (its pass there). */
function resetPassKey(ip: string, userId: string): string {
  return `login-reset:ip:${ip}:user:${userId}`;
}

/** Failed attempts at one account from one IP under that account's reset pass. */
function passFailureKey(ip: string, userId: string): string {
  return `login-failures:ip:${ip}:user:${userId}`;
}

function loginLimit(deps: Deps): Limit {
  return { bucket: 'login', max: deps.config.rateLimits.loginFailuresPer15Min, windowMs: LOGIN_WINDOW_MS };
}

/**
 * Every change to an account goes through here: the row is updated and the account's cached credentials evicted,
 * so a disabled account, a new password or 2FA holds from the next request on. `db` is a database transaction's
 * handle when the change is part of one.
 */
export async function changeUser(
  deps: Deps,
  id: string,
  values: Parameters<typeof updateUser>[2],
  db: DbOrTx = deps.database.db,
): Promise<UserRow> {
  const row = await updateUser(db, id, values);
  deps.credentialCache?.forgetUser(id);
  return row;
}

/** A login attempt let through the limit, and the counter its failure goes to. */
export interface LoginAdmission {
  failureKey: string;
}

/**
 * The login limit counts failed attempts per IP over 15 minutes. Past it every attempt, right or wrong, answers
 * `401 invalid_credentials`: a locked-out client cannot tell lockout from a wrong password. One exception: an
 * account whose password was reset from this IP in the window (`grantLoginAfterReset`) may still be tried there,
 * with a budget of its own of the same size; every other account stays locked out. `userId` is the account the
 * attempt is for, when the caller knows it (null: only the IP's budget applies). Null when the attempt is refused.
 */
export async function admitLogin(
  deps: Deps,
  request: RequestContext,
  userId: string | null = null,
): Promise<LoginAdmission | null> {
  const limit = loginLimit(deps);
  const now = deps.clock.now();
  const hit = await deps.rateLimits.peek(loginFailureKey(request.ip), limit.windowMs, now);
  request.rateLimits.report(limit, hit, now);
  if (hit.count < limit.max) return { failureKey: loginFailureKey(request.ip) };
  if (userId === null) return null;
  const [pass, failures] = await Promise.all([
    deps.rateLimits.peek(resetPassKey(request.ip, userId), limit.windowMs, now),
    deps.rateLimits.peek(passFailureKey(request.ip, userId), limit.windowMs, now),
  ]);
  return pass.count > 0 && failures.count < limit.max
    ? { failureKey: passFailureKey(request.ip, userId) }
    : null;
}

export async function recordLoginFailure(deps: Deps, admission: LoginAdmission): Promise<void> {
  await deps.rateLimits.hit(admission.failureKey, LOGIN_WINDOW_MS, deps.clock.now());
}

/**
 * After a password reset from the request's IP: its account may log in there again, whatever the IP's lock-out. The
 * reset proved the caller holds that account's email (the web app tells a locked-out person to reset, so the new
 * password must work at once), and nothing of any other account: guesses at those stay locked out until the window
 * ends. Lasts as long as the lock-out: the current login window.
 */
export async function grantLoginAfterReset(
  deps: Deps,
  request: RequestContext,
  userId: string,
): Promise<void> {
  await deps.rateLimits.hit(resetPassKey(request.ip, userId), LOGIN_WINDOW_MS, deps.clock.now());
}

export function invalidCredentials(): AppError {
  return new AppError('invalid_credentials', 'The email or password is incorrect.');
}

/**
 * Checks email and password under the login limit; the user is returned only when both are right. A disabled
 * account answers `403 account_disabled` whether its password is right or wrong, after the same hash, and every
 * attempt at it counts against the IP's budget: neither the answer, its time nor the next attempt's
 * `RateLimit-Remaining` tells a right password from a wrong one (an account disabled now may be enabled later).
 */
export async function checkPassword(
  deps: Deps,
  request: RequestContext,
  email: string,
  password: string,
): Promise<UserRow> {
  const user = await findUserByEmail(deps.database.db, email);
  const admission = await admitLogin(deps, request, user?.id ?? null);
  const valid = await verifyPassword(user?.passwordHash ?? null, password);
  if (!admission || !user || !valid || user.disabledAt) {
    if (admission) await recordLoginFailure(deps, admission);
    if (admission && user?.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
    throw invalidCredentials();
  }
  return user;
}

/**
 * Re-checks the password of a signed-in account before a sensitive change (`POST /me/password`,
 * `POST /me/totp/disable`), so a stolen session cannot be used to guess it. Attempts are counted per account (the
 * caller is known; per IP would let a thief rotate addresses), shared by both routes, with the login budget: 10
 * per 15 minutes. Every attempt is counted before the check, not only failures: a count taken after the slow hash
 * would let concurrent guesses all pass, and an owner rarely makes these changes ten times in 15 minutes. A wrong
 * password is `401 invalid_credentials`; past the budget every attempt, right or wrong, is `429 rate_limited` with
 * Retry-After. Login answers 401 there to hide a lockout from someone probing unknown accounts; here the caller
 * already holds the account's session, so a 401 would hide nothing and only make the owner doubt a right password.
 */
export async function verifyCurrentPassword(
  deps: Deps,
  request: RequestContext,
  user: UserRow,
  password: string,
): Promise<void> {
  const limit: Limit = {
    bucket: 'password-check',
    max: deps.config.rateLimits.loginFailuresPer15Min,
    windowMs: LOGIN_WINDOW_MS,
  };
  await consume(deps.rateLimits, request.rateLimits, limit, `user:${user.id}`, deps.clock.now());
  if (!(await verifyPassword(user.passwordHash, password))) throw invalidCredentials();
}

/** Mints a session for a user who has proved who they are, and stamps lastLoginAt. */
export async function startSession(deps: Deps, user: UserRow): Promise<NewSession> {
  const now = deps.clock.now();
  const { token, session } = await createSession(deps.database.db, user, now);
  const stamped = await changeUser(deps, user.id, { lastLoginAt: now });
  return { user: stamped, token, expiresAt: session.expiresAt };
}

/** Ends one session at once (logout, password change). */
export async function endSession(
  deps: Deps,
  sessionId: string,
  db: DbOrTx = deps.database.db,
  now: Date = deps.clock.now(),
): Promise<void> {
  deps.credentialCache?.forgetCredential(sessionId);
  await revokeSession(db, sessionId, now);
}

/** Self-service signup, under the per-IP signup budget; the new account comes back signed in. */
export async function signup(
  deps: Deps,
  request: RequestContext,
  input: { email: string; password: string; name?: string | undefined; company?: string | undefined },
): Promise<NewSession> {
  if (deps.config.signup === 'closed') throw new AppError('signup_closed', 'Self-service signup is closed.');
  const limit = { bucket: 'signup', max: deps.config.rateLimits.signupsPerHour, windowMs: 60 * 60_000 };
  await consume(deps.rateLimits, request.rateLimits, limit, `ip:${request.ip}`, deps.clock.now());
  const { email, password } = input;
  assertPasswordPolicy(password);
  const emailTaken = () => new AppError('email_taken', 'An account with this email exists.');
  if (await findUserByEmail(deps.database.db, email)) throw emailTaken();
  const passwordHash = await hashPassword(password);
  const user = await insertUser(
    deps.database.db,
    { email, passwordHash, name: input.name ?? null, company: input.company ?? null },
    deps.clock.now(),
  ).catch((error: unknown) => {
    if (isUniqueViolation(error)) throw emailTaken();
    throw error;
  });
  return startSession(deps, user);
}

/**
 * A new password for a signed-in account: checked against the current one, then every session minted before it
 * ends (the token version moves on) and the caller gets a fresh one.
 */
export async function changePassword(
  deps: Deps,
  request: RequestContext,
  caller: { user: UserRow; sessionId: string },
  passwords: { currentPassword: string; newPassword: string },
): Promise<NewSession> {
  const { user } = caller;
  await verifyCurrentPassword(deps, request, user, passwords.currentPassword);
  assertPasswordPolicy(passwords.newPassword);
  const now = deps.clock.now();
  const passwordHash = await hashPassword(passwords.newPassword);
  return deps.database.db.transaction(async (tx) => {
    // Guarded by the token version the caller's credentials were checked at: of concurrent changes, the first
    // wins and ends every other session, so the others' sessions (and current passwords) are no longer valid.
    const updated = await updateUserAtVersion(tx, user.id, user.tokenVersion, {
      passwordHash,
      mustChangePassword: false,
      tokenVersion: user.tokenVersion + 1,
      updatedAt: now,
    });
    deps.credentialCache?.forgetUser(user.id);
    if (!updated)
      throw new AppError('session_expired', 'The password was changed by another request. Log in again.');
    await endSession(deps, caller.sessionId, tx, now);
    await queueNotice(deps, tx, updated, 'password_changed');
    const { token, session } = await createSession(tx, updated, now);
    return { user: updated, token, expiresAt: session.expiresAt };
  });
}

/**
 * The account behind a session cookie's token, or `401 session_expired` (unknown, ended, or superseded). A session
 * superseded by a disable (which moves the token version on) still names its account while that account is
 * disabled, so the auth hook answers `403 account_disabled` as it does for the account's keys; once the account is
 * enabled again the session stays ended.
 */
export async function resolveSession(deps: Deps, token: string, now: Date): Promise<UserCredential> {
  const hash = sha256Hex(token);
  const cache = deps.credentialCache;
  let credential = cache?.get(hash);
  if (!credential) {
    const found = await findLiveSession(deps.database.db, token, now);
    if (!found) throw new AppError('session_expired', 'The session has expired. Log in again.');
    credential = {
      kind: 'session',
      id: found.session.id,
      user: found.user,
      expiresAt: found.session.expiresAt,
      lastUsedAt: null,
      tokenVersion: found.session.tokenVersion,
      scope: SESSION_SCOPE,
    };
    cache?.set(hash, credential);
  }
  if (
    (credential.expiresAt && credential.expiresAt <= now) ||
    (credential.tokenVersion !== credential.user.tokenVersion && !credential.user.disabledAt)
  ) {
    throw new AppError('session_expired', 'The session has expired. Log in again.');
  }
  return credential;
}
