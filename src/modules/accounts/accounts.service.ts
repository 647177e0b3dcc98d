import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { setSessionCookie } from '../../http/cookies.ts';
import { consume, type Limit, setRateLimitHeaders } from '../../http/rate-limit.ts';
import { AppError } from '../../lib/errors.ts';
import { createSession, findUserByEmail, type UserRow, updateUser } from './accounts.repository.ts';
import { verifyPassword } from './password.ts';

const LOGIN_WINDOW_MS = 15 * 60_000;

function loginFailureKey(request: FastifyRequest): string {
  return `login-failures:ip:${request.ip}`;
}

function loginLimit(deps: Deps): Limit {
  return { bucket: 'login', max: deps.config.rateLimits.loginFailuresPer15Min, windowMs: LOGIN_WINDOW_MS };
}

/**
 * The login limit counts failed attempts per IP over 15 minutes. Past it every attempt, right or wrong, answers
 * `401 invalid_credentials`: a locked-out client cannot tell lockout from a wrong password.
 */
export async function assertLoginAllowed(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean> {
  const limit = loginLimit(deps);
  const now = deps.clock.now();
  const hit = await deps.rateLimits.peek(loginFailureKey(request), limit.windowMs, now);
  setRateLimitHeaders(reply, limit, hit, now);
  return hit.count < limit.max;
}

export async function recordLoginFailure(deps: Deps, request: FastifyRequest): Promise<void> {
  await deps.rateLimits.hit(loginFailureKey(request), LOGIN_WINDOW_MS, deps.clock.now());
}

export function invalidCredentials(): AppError {
  return new AppError('invalid_credentials', 'The email or password is incorrect.');
}

/** Checks email and password under the login limit; the user is returned only when both are right. */
export async function checkPassword(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  email: string,
  password: string,
): Promise<UserRow> {
  const allowed = await assertLoginAllowed(deps, request, reply);
  const user = await findUserByEmail(deps.database.db, email);
  const valid = await verifyPassword(user?.passwordHash ?? null, password);
  if (!allowed || !user || !valid) {
    if (allowed) await recordLoginFailure(deps, request);
    throw invalidCredentials();
  }
  if (user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
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
  reply: FastifyReply,
  user: UserRow,
  password: string,
): Promise<void> {
  const limit: Limit = {
    bucket: 'password-check',
    max: deps.config.rateLimits.loginFailuresPer15Min,
    windowMs: LOGIN_WINDOW_MS,
  };
  await consume(deps.rateLimits, reply, limit, `user:${user.id}`, deps.clock.now());
  if (!(await verifyPassword(user.passwordHash, password))) throw invalidCredentials();
}

/** Mints the session cookie for a user who has proved who they are, and stamps lastLoginAt. */
export async function completeLogin(deps: Deps, reply: FastifyReply, user: UserRow): Promise<UserRow> {
  const now = deps.clock.now();
  const { token, session } = await createSession(deps.database.db, user, now);
  setSessionCookie(reply, deps, token, session.expiresAt);
  return updateUser(deps.database.db, user.id, { lastLoginAt: now });
}

export async function consumeSignupBudget(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const limit = { bucket: 'signup', max: deps.config.rateLimits.signupsPerHour, windowMs: 60 * 60_000 };
  await consume(deps.rateLimits, reply, limit, `ip:${request.ip}`, deps.clock.now());
}
