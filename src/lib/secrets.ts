import {
  createCipheriv,
  createDecipheriv,
  createHash,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Secrets at rest (custodial keys, TOTP secrets, claim codes shown again to the sender) are sealed with
 * AES-256-GCM under a master key. Each sealed value names the key id it was sealed with, so the master key can
 * be rotated: the new key seals, the previous ones still open what they sealed.
 *
 * Format: `v1.<keyId>.<iv>.<ciphertext+tag>` (base64url parts).
 */
export interface Keyring {
  readonly currentId: string;
  seal(plaintext: string | Uint8Array, context: string): string;
  open(sealed: string, context: string): Buffer;
  openText(sealed: string, context: string): string;
  /** A sub-key for one purpose (cookie signing, nota signing seed), derived so the master key is never reused raw. */
  derive(purpose: string, length?: number): Buffer;
}

/** One-shot `crypto.hash`: half the time of a `createHash` object, on every API key a request presents. */
export function sha256Hex(value: string | Uint8Array): string {
  return hash('sha256', value, 'hex');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = hash('sha256', a, 'buffer');
  const right = hash('sha256', b, 'buffer');
  return timingSafeEqual(left, right) && a.length === b.length;
}

function parseKey(raw: string, name: string): Buffer {
  const trimmed = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64url');
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes, as 64 hex characters or base64`);
  return key;
}

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('sealpay-key-id').update(key).digest('hex').slice(0, 12);
}

export function createKeyring(current: Buffer, previous: Buffer[] = []): Keyring {
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) keys.set(keyIdOf(key), key);
  const currentId = keyIdOf(current);

  function open(sealed: string, context: string): Buffer {
    const [version, keyId, ivPart, bodyPart] = sealed.split('.');
    const key = keyId ? keys.get(keyId) : undefined;
    if (version !== 'v1' || !key || !ivPart || !bodyPart)
      throw new Error('sealed value is malformed or its key is unknown');
    const body = Buffer.from(bodyPart, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivPart, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
  }

  return {
    currentId,
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return `v1.${currentId}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open,
    openText: (sealed, context) => open(sealed, context).toString('utf8'),
    derive(purpose, length = 32) {
      return Buffer.from(hkdfSync('sha256', current, Buffer.alloc(0), `sealpay:${purpose}`, length));
    },
  };
}

/**
 * `MASTER_KEY` (and `MASTER_KEY_PREVIOUS`, comma-separated, during a rotation) when set; otherwise, on the
 * embedded default only, a key file created under `DATA_DIR` with mode 0600.
 */
export function loadKeyring(options: {
  masterKey: string | null;
  previous?: string | null;
  dataDir: string;
}): Keyring {
  const previous = (options.previous ?? '')
    .split(',')
    .filter((part) => part.trim())
    .map((part) => parseKey(part, 'MASTER_KEY_PREVIOUS'));
  if (options.masterKey) return createKeyring(parseKey(options.masterKey, 'MASTER_KEY'), previous);
  mkdirSync(options.dataDir, { recursive: true });
  const path = join(options.dataDir, 'master.key');
  if (!existsSync(path)) {
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(path, 0o600);
  return createKeyring(parseKey(readFileSync(path, 'utf8'), path), previous);
}
