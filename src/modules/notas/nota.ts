import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { AppError } from '../../lib/errors.ts';
import { type Keyring, sha256Hex } from '../../lib/secrets.ts';

/**
 * `.nota` files: a UTF-8 JSON document, base64url-encoded,
 * `{"nota": 1, "kind": "receipt" | "wallet-key", "issuedAt", "payload": {…}, "signature"?: {…}}`.
 * A receipt is signed with the service's Ed25519 key over the RFC 8785 canonical JSON of the nota without
 * its `signature` member; a wallet key carries no signature (the AES-GCM tag authenticates its ciphertext).
 */

// canonicalize is CommonJS whose types declare an ES default export: under NodeNext the default import is the
// function itself at run time, while the types see the module. Accept either shape.
type Canonicalize = (input: unknown) => string | undefined;
const canonicalize: Canonicalize =
  typeof canonicalizeModule === 'function'
    ? (canonicalizeModule as Canonicalize)
    : (canonicalizeModule as unknown as { default: Canonicalize }).default;

export const NOTA_VERSION = 1;
export const NOTA_KINDS = ['receipt', 'wallet-key'] as const;
export type NotaKind = (typeof NOTA_KINDS)[number];

/** Generous for a receipt (about 2 KB) or a wallet key (under 1 KB); bounds the work a verify call can cause. */
export const MAX_NOTA_LENGTH = 64 * 1024;

export interface NotaSignature {
  alg: 'Ed25519';
  keyId: string;
  value: string;
}

export interface Nota {
  nota: 1;
  kind: NotaKind;
  issuedAt: string;
  payload: Record<string, unknown>;
  signature?: NotaSignature;
}

export function encodeNota(nota: Nota): string {
  return Buffer.from(JSON.stringify(nota), 'utf8').toString('base64url');
}

function invalidNota(message: string): AppError {
  return new AppError('invalid_nota', message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNotaKind(value: unknown): value is NotaKind {
  return typeof value === 'string' && (NOTA_KINDS as readonly string[]).includes(value);
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Parses a nota string: base64url of UTF-8 JSON with `nota: 1` and a known kind, or `400 invalid_nota`. */
export function decodeNota(text: string): Nota {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_NOTA_LENGTH || !BASE64URL.test(trimmed)) {
    throw invalidNota('This is not a .nota file: expected a base64url string.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(trimmed, 'base64url')));
  } catch {
    throw invalidNota('This is not a .nota file: its content is not UTF-8 JSON.');
  }
  if (!isRecord(parsed) || parsed.nota !== NOTA_VERSION) {
    throw invalidNota('This is not a .nota file of a supported version (`nota: 1`).');
  }
  const { kind, issuedAt, payload } = parsed;
  if (!isNotaKind(kind)) throw invalidNota('The .nota file is of an unknown kind.');
  if (typeof issuedAt !== 'string' || !isRecord(payload)) {
    throw invalidNota('The .nota file lacks its issuedAt or payload.');
  }
  // Every member kept as it came (a signature covers them all); `signature` is checked where it is verified.
  return { ...parsed, nota: NOTA_VERSION, kind, issuedAt, payload };
}

/** The bytes a receipt's signature covers: RFC 8785 canonical JSON of the nota without `signature`. */
export function signingInput(nota: Nota | Record<string, unknown>): Buffer {
  const { signature: _signature, ...unsigned } = nota as Record<string, unknown>;
  const canonical = canonicalize(unsigned);
  if (canonical === undefined) throw new Error('nota cannot be canonicalized');
  return Buffer.from(canonical, 'utf8');
}

// PKCS#8 DER of an Ed25519 private key, up to the 32-byte seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface NotaSigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The raw 32-byte public key, base64url. */
  publicKeyRaw: string;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };
}

const cache = new WeakMap<Keyring, NotaSigningKey>();

/**
 * The service's receipt-signing key, derived from the master key: every API process signs with the same key
 * and nothing more is stored. The key id is a short hash of the public key.
 */
export function notaSigningKey(keyring: Keyring): NotaSigningKey {
  const cached = cache.get(keyring);
  if (cached) return cached;
  const seed = keyring.derive('nota-signing-ed25519', 32);
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  seed.fill(0);
  const publicKey = createPublicKey(privateKey);
  const x = publicKey.export({ format: 'jwk' }).x as string;
  const keyId = sha256Hex(Buffer.from(x, 'base64url')).slice(0, 16);
  const key: NotaSigningKey = {
    keyId,
    privateKey,
    publicKey,
    publicKeyRaw: x,
    jwk: { kty: 'OKP', crv: 'Ed25519', x, kid: keyId, alg: 'EdDSA', use: 'sig' },
  };
  cache.set(keyring, key);
  return key;
}

/** Every key a receipt of this service can be signed with (one: the master key's derivation). */
export function notaPublicKeys(keyring: Keyring): NotaSigningKey[] {
  return [notaSigningKey(keyring)];
}

export function signNota(keyring: Keyring, unsigned: Omit<Nota, 'signature'>): Nota {
  const key = notaSigningKey(keyring);
  const value = sign(null, signingInput(unsigned), key.privateKey).toString('base64url');
  return { ...unsigned, signature: { alg: 'Ed25519', keyId: key.keyId, value } };
}

/** A receipt's signature holds under one of the service's keys. */
export function verifyReceiptSignature(keyring: Keyring, nota: Nota): boolean {
  const signature = nota.signature as unknown;
  if (!isRecord(signature) || signature.alg !== 'Ed25519') return false;
  if (typeof signature.keyId !== 'string' || typeof signature.value !== 'string') return false;
  if (!BASE64URL.test(signature.value)) return false;
  const key = notaPublicKeys(keyring).find((candidate) => candidate.keyId === signature.keyId);
  if (!key) return false;
  const bytes = Buffer.from(signature.value, 'base64url');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, signingInput(nota), key.publicKey, bytes);
  } catch {
    return false;
  }
}

// Wallet-key notas ------------------------------------------------------------------------------------------

export const WALLET_KEY_KDF = { name: 'PBKDF2', hash: 'SHA-256', iterations: 310_000 } as const;
/** Iterations an imported file may name: at least the export's, and a ceiling so a file cannot pin a CPU. */
export const MIN_IMPORT_ITERATIONS = 310_000;
export const MAX_IMPORT_ITERATIONS = 2_000_000;

export interface WalletKeyPayload {
  address: string;
  kdf: { name: 'PBKDF2'; hash: 'SHA-256'; iterations: number; salt: string };
  cipher: { name: 'AES-256-GCM'; iv: string; ciphertext: string };
}

function b64(value: unknown, minBytes: number, maxBytes: number): boolean {
  if (typeof value !== 'string' || !BASE64URL.test(value)) return false;
  const length = Buffer.from(value, 'base64url').length;
  return length >= minBytes && length <= maxBytes;
}

/** The payload of a wallet-key nota when it is well-formed (the fields an import needs), otherwise null. */
export function walletKeyPayloadOf(nota: Nota): WalletKeyPayload | null {
  if (nota.kind !== 'wallet-key') return null;
  const { address, kdf, cipher } = nota.payload;
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return null;
  if (!isRecord(kdf) || kdf.name !== 'PBKDF2' || kdf.hash !== 'SHA-256') return null;
  if (
    typeof kdf.iterations !== 'number' ||
    !Number.isInteger(kdf.iterations) ||
    kdf.iterations < MIN_IMPORT_ITERATIONS ||
    kdf.iterations > MAX_IMPORT_ITERATIONS
  ) {
    return null;
  }
  if (!b64(kdf.salt, 8, 64)) return null;
  if (!isRecord(cipher) || cipher.name !== 'AES-256-GCM') return null;
  // A 32-byte key plus the 16-byte tag.
  if (!b64(cipher.iv, 12, 12) || !b64(cipher.ciphertext, 48, 48)) return null;
  return {
    address,
    kdf: { name: 'PBKDF2', hash: 'SHA-256', iterations: kdf.iterations, salt: kdf.salt as string },
    cipher: { name: 'AES-256-GCM', iv: cipher.iv as string, ciphertext: cipher.ciphertext as string },
  };
}
