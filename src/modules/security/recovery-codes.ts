import { randomInt } from 'node:crypto';
import { sha256Hex } from '../../lib/secrets.ts';

/** How many recovery codes an account gets at TOTP enrollment and at each regeneration. */
export const RECOVERY_CODE_COUNT = 10;

// Crockford's base32 in lower case: no i, l, o or u to misread; 12 characters are 60 bits, out of reach of guessing
// under the login limit and of a brute force of a leaked hash (each hash is salted with its account's id).
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 3;
const GROUP_LENGTH = 4;

/** A TOTP code is six digits; anything else offered as a second factor is read as a recovery code. */
export function isTotpCode(code: string): boolean {
  return /^[0-9]{6}$/.test(code.trim());
}

/** `xxxx-xxxx-xxxx`, drawn with the CSPRNG. */
export function newRecoveryCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/** What a person may type for a code: any case, with or without dashes and spaces, i/l for 1 and o for 0. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
}

/** The stored form of a code: SHA-256, salted with the account id (the codes are high-entropy, no slow hash needed). */
export function hashRecoveryCode(userId: string, code: string): string {
  return sha256Hex(`sealpay-recovery-code:${userId}:${normalizeRecoveryCode(code)}`);
}

/** A fresh set: the codes to show once, and their hashes to store. */
export function newRecoveryCodes(userId: string): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  return { codes, hashes: codes.map((code) => hashRecoveryCode(userId, code)) };
}
