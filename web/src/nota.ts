/**
 * Receipts (`.nota` files) read and checked in the browser: base64url of UTF-8 JSON
 * `{"nota": 1, "kind": "receipt", "issuedAt", "payload", "signature": {alg: "Ed25519", keyId, value}}`, signed by
 * the service's Ed25519 key over the RFC 8785 canonical JSON of the nota without `signature` (SUPPLEMENT, "Receipts
 * and key export"). The check runs here with WebCrypto against the keys `GET /notas/keys` publishes, the same steps
 * as `examples/verify-receipt-offline.ts`: the service is not asked whether its own receipt is genuine.
 */
import canonicalizeModule from 'canonicalize';
import { get } from './api.ts';

// canonicalize is CommonJS typed as an ES default export: accept the function itself or a module holding it.
type Canonicalize = (input: unknown) => string | undefined;
const canonicalize: Canonicalize =
  typeof canonicalizeModule === 'function'
    ? (canonicalizeModule as Canonicalize)
    : (canonicalizeModule as unknown as { default: Canonicalize }).default;

export interface Nota {
  nota: 1;
  kind: string;
  issuedAt: string;
  payload: Record<string, unknown>;
  signature?: { alg?: unknown; keyId?: unknown; value?: unknown };
}

export interface NotaKey {
  keyId: string;
  alg: 'Ed25519';
  publicKey: string;
  jwk: JsonWebKey & { kid: string };
}

/** The outcome of checking a receipt, in words a person can act on. */
export type Verdict = { verified: true; keyId: string } | { verified: false; reason: string };

function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Reads a `.nota` string; throws an Error in plain words when it is not one. */
export function decodeNota(text: string): Nota {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9_-]+$/.test(trimmed)) throw new Error('This is not a .nota receipt file.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64urlBytes(trimmed)));
  } catch {
    throw new Error('This is not a .nota receipt file: its content cannot be read.');
  }
  const nota = parsed as Partial<Nota> | null;
  if (
    !nota ||
    typeof nota !== 'object' ||
    nota.nota !== 1 ||
    typeof nota.kind !== 'string' ||
    typeof nota.issuedAt !== 'string' ||
    !nota.payload ||
    typeof nota.payload !== 'object'
  ) {
    throw new Error('This is not a .nota file this app can read.');
  }
  if (nota.kind !== 'receipt') {
    throw new Error('This .nota file is not a receipt (it may be an exported wallet key).');
  }
  return nota as Nota;
}

/** This module's state: the published keys, once asked for (null again after a failed read). */
const state = { keys: null as Promise<NotaKey[]> | null };

/** The service's published receipt keys, read once per page. */
export function notaKeys(): Promise<NotaKey[]> {
  state.keys ??= get<{ keys: NotaKey[] }>('/notas/keys')
    .then((data) => data.keys)
    .catch((error: unknown) => {
      state.keys = null;
      throw error;
    });
  return state.keys;
}

/** Checks the receipt's signature in this browser against the published keys. */
export async function verifyNota(nota: Nota, published: NotaKey[]): Promise<Verdict> {
  const signature = nota.signature;
  if (signature?.alg !== 'Ed25519' || typeof signature.value !== 'string') {
    return { verified: false, reason: 'The receipt carries no signature of the service.' };
  }
  const key = published.find((candidate) => candidate.keyId === signature.keyId);
  if (!key) {
    return { verified: false, reason: 'The receipt was not signed with a key this service publishes.' };
  }
  const { signature: _signature, ...unsigned } = nota;
  const canonical = canonicalize(unsigned);
  if (canonical === undefined) return { verified: false, reason: 'The receipt cannot be read as signed.' };
  try {
    const publicKey = await crypto.subtle.importKey(
      'jwk',
      { kty: key.jwk.kty, crv: key.jwk.crv, x: key.jwk.x },
      { name: 'Ed25519' },
      false,
      ['verify'],
    );
    const valid = await crypto.subtle.verify(
      { name: 'Ed25519' },
      publicKey,
      base64urlBytes(signature.value),
      new TextEncoder().encode(canonical),
    );
    return valid
      ? { verified: true, keyId: key.keyId }
      : {
          verified: false,
          reason: 'The signature does not match: the receipt was changed after the service signed it.',
        };
  } catch {
    return {
      verified: false,
      reason: 'This browser could not check the signature (it needs Ed25519 in Web Crypto).',
    };
  }
}
