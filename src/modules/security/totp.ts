import { Secret, TOTP } from 'otpauth';
import { constantTimeEqual } from '../../lib/secrets.ts';

/** RFC 6238 as every authenticator app speaks it: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_ALGORITHM = 'SHA1';
/** Steps accepted either side of the current one (clock drift between phone and server). */
export const TOTP_WINDOW = 1;
export const TOTP_ISSUER = 'sealpay';

/** A fresh 160-bit secret, base32 as authenticator apps expect it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function otpauthUrlOf(secretBase32: string, label: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: TOTP_ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  }).toString();
}

export function totpStepAt(now: Date): number {
  return Math.floor(now.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * The time step a code belongs to, within ±1 step of `now`, or null when it matches none. Steps at or below
 * `lastStep` (already accepted) are never matched, so a code is accepted once even inside its window.
 */
export function matchTotpStep(
  secretBase32: string,
  code: string,
  now: Date,
  lastStep: number | null,
): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const secret = Secret.fromBase32(secretBase32);
  const current = totpStepAt(now);
  let matched: number | null = null;
  // Every candidate is computed (no early exit), and the latest matching step wins.
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step += 1) {
    const expected = TOTP.generate({
      secret,
      algorithm: TOTP_ALGORITHM,
      digits: TOTP_DIGITS,
      period: TOTP_PERIOD_SECONDS,
      timestamp: step * TOTP_PERIOD_SECONDS * 1000,
    });
    if (constantTimeEqual(expected, code) && (lastStep === null || step > lastStep)) matched = step;
  }
  return matched;
}
