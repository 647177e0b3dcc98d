/**
 * A TOTP generator for tests, independent of the server's code (RFC 4226/6238 with node:crypto HMAC-SHA1): the
 * codes an authenticator app would show, and a code none of the steps the service accepts would.
 */
import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(input: string): Buffer {
  const clean = input.replace(/=+$/, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 HOTP, 6 digits, HMAC-SHA1. */
export function hotp(secret: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', secret).update(message).digest();
  const offset = (digest[digest.length - 1] as number) & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

/** RFC 6238 TOTP with 30-second steps at `at`, `stepOffset` steps away. */
export function totpCode(secretBase32: string, at: Date, stepOffset = 0): string {
  return hotp(base32Decode(secretBase32), Math.floor(at.getTime() / 30_000) + stepOffset);
}

/**
 * A six-digit code that no step near `at` produces (two either side: more than the service accepts), where a
 * fixed "wrong" code compared with the current step alone was the previous or next step's code once in 500,000.
 */
export function wrongTotpCode(secretBase32: string, at: Date): string {
  const near = new Set([-2, -1, 0, 1, 2].map((offset) => totpCode(secretBase32, at, offset)));
  for (let candidate = 0; ; candidate += 1) {
    const code = String(candidate).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}
