import { randomBytes } from 'node:crypto';
import { AppError } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/secrets.ts';

/** Crockford base32: no I, L, O, U, so a code read aloud or off paper is hard to get wrong. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CLAIM_CODE_LENGTH = 28;

/** A fresh claim code: 28 Crockford base32 characters (140 bits), in 7 dash-separated groups of 4. */
export function generateClaimCode(): string {
  const bytes = randomBytes(CLAIM_CODE_LENGTH);
  let code = '';
  for (const byte of bytes) code += ALPHABET[byte & 31];
  return formatClaimCode(code);
}

export function formatClaimCode(normalized: string): string {
  return normalized.match(/.{1,4}/g)?.join('-') ?? normalized;
}

/**
 * Accepts the code with or without dashes or spaces, in any case, and with Crockford's read-aloud aliases
 * (O→0, I/L→1). Anything else is `400 invalid_claim_code`.
 */
export function normalizeClaimCode(input: string): string {
  const compact = input
    .replace(/[\s-]+/g, '')
    .toUpperCase()
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  if (compact.length !== CLAIM_CODE_LENGTH || ![...compact].every((char) => ALPHABET.includes(char))) {
    throw new AppError(
      'invalid_claim_code',
      'The claim code is malformed: it has 28 letters and digits, as printed on the letter.',
    );
  }
  return compact;
}

export function claimCodeHash(normalized: string): string {
  return sha256Hex(`sealpay-claim-code:${normalized}`);
}
