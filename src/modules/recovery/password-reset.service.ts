import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { consume, type Limit } from '../../lib/rate-limit.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { randomToken, sha256Hex } from '../../lib/secrets.ts';
import { findUserByEmail } from '../accounts/accounts.repository.ts';
import { grantLoginAfterReset } from '../accounts/accounts.service.ts';
import { assertPasswordPolicy, hashPassword } from '../accounts/password.ts';
import { passwordResetEmail, resetLinkOf } from '../notifications/emails.ts';
import { queueEmail, queueNotice } from '../notifications/notifications.service.ts';
import {
  findLiveReset,
  insertPasswordReset,
  replacePassword,
  spendOpenResets,
  spendReset,
} from './recovery.repository.ts';

export const RESET_TTL_MINUTES = 30;
const HOUR_MS = 3_600_000;
/** Reset emails one address receives per hour at most; past it, requests are answered the same and send nothing. */
export const RESETS_PER_ADDRESS_PER_HOUR = 3;
/** Reset attempts (token + new password) per IP per 15 minutes: tokens are 256 bits, this only bounds the work. */
const RESET_ATTEMPTS_PER_15_MINUTES = 30;
/**
 * Every request for a reset link takes at least this long, whether the address has an account or not: what it does
 * for an account (a token, an outbox row in one transaction) takes a few milliseconds the other path would not.
 */
export const FORGOT_ANSWER_FLOOR_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * `POST /auth/password/forgot`: emails a reset link when `email` has an enabled account, and answers the same either
 * way, in about the same time (no account enumeration). Limited per IP (429) and per address (silently: the
 * answer cannot differ). The token is single use, 30 minutes, stored as its SHA-256; the email is queued in the
 * transaction that stores the token.
 */
export async function requestPasswordReset(
  deps: Deps,
  request: RequestContext,
  email: string,
): Promise<void> {
  const started = performance.now();
  const now = deps.clock.now();
  const perIp: Limit = {
    bucket: 'password-reset',
    max: deps.config.rateLimits.passwordResetRequestsPerHour,
    windowMs: HOUR_MS,
  };
  await consume(deps.rateLimits, request.rateLimits, perIp, `ip:${request.ip}`, now);
  const address = email.trim().toLowerCase();
  // Counted for every address, with an account or not, so the limit itself tells nothing.
  const perAddress = await deps.rateLimits.hit(`password-reset-address:${sha256Hex(address)}`, HOUR_MS, now);
  const token = randomToken(32);
  const tokenHash = sha256Hex(token);
  const user = await findUserByEmail(deps.database.db, address);
  if (user && !user.disabledAt && perAddress.count <= RESETS_PER_ADDRESS_PER_HOUR) {
    const message = passwordResetEmail(
      user.email,
      resetLinkOf(deps.config.publicOrigin, token),
      RESET_TTL_MINUTES,
    );
    await deps.database.db.transaction(async (tx) => {
      const expiresAt = new Date(now.getTime() + RESET_TTL_MINUTES * 60_000);
      await insertPasswordReset(tx, { userId: user.id, tokenHash, expiresAt }, now);
      await queueEmail(deps, tx, { userId: user.id, kind: 'password_reset', message });
    });
  }
  await sleep(FORGOT_ANSWER_FLOOR_MS - (performance.now() - started));
}

function invalidToken(): AppError {
  return new AppError(
    'invalid_reset_token',
    'The reset link is not valid: it was used already, it is older than 30 minutes, or it was never issued. ' +
      'Ask for a new one.',
  );
}

/**
 * `POST /auth/password/reset`: a new password for the account of a live reset token. The token is spent (once, also
 * under concurrent requests), with every other open token of the account; the password policy applies; the token
 * version moves on, so every session ends; two-factor stays as it is (the next login still asks for the code). The
 * login lock-out does not apply here, and it is lifted at the caller's IP for this account alone, so the new
 * password works (other accounts stay locked out there: the reset proved nothing of them).
 */
export async function resetPassword(
  deps: Deps,
  request: RequestContext,
  input: { token: string; newPassword: string },
): Promise<void> {
  const now = deps.clock.now();
  const limit: Limit = {
    bucket: 'password-reset-attempt',
    max: RESET_ATTEMPTS_PER_15_MINUTES,
    windowMs: HOUR_MS / 4,
  };
  await consume(deps.rateLimits, request.rateLimits, limit, `ip:${request.ip}`, now);
  assertPasswordPolicy(input.newPassword);
  const { db } = deps.database;
  const reset = await findLiveReset(db, sha256Hex(input.token), now);
  if (!reset) throw invalidToken();
  const passwordHash = await hashPassword(input.newPassword);
  const user = await db.transaction(async (tx) => {
    if (!(await spendReset(tx, reset.id, now))) throw invalidToken();
    await spendOpenResets(tx, reset.userId, now);
    const updated = await replacePassword(tx, reset.userId, passwordHash, now);
    if (!updated) throw invalidToken();
    await queueNotice(deps, tx, updated, 'password_changed');
    return updated;
  });
  deps.credentialCache?.forgetUser(user.id);
  await grantLoginAfterReset(deps, request, user.id);
}
