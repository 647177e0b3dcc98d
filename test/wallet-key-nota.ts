/**
 * Wallet-key `.nota` files made and opened outside the service, with standard WebCrypto only, following the
 * published format (PBKDF2-SHA256, 310,000 iterations, then AES-256-GCM): what a browser or another tool would do.
 */
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface WalletKeyNota {
  nota: 1;
  kind: 'wallet-key';
  issuedAt: string;
  payload: {
    address: string;
    kdf: { name: string; hash: string; iterations: number; salt: string };
    cipher: { name: string; iv: string; ciphertext: string };
  };
  signature?: unknown;
}

export function decodeWalletKeyNota(nota: string): WalletKeyNota {
  return JSON.parse(Buffer.from(nota, 'base64url').toString('utf8'));
}

export function bytes(base64url: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(base64url, 'base64url'));
}

/** The passphrase's AES-GCM key, with standard WebCrypto only (as a browser or another tool would do it). */
async function webCryptoKey(passphrase: string, salt: Uint8Array<ArrayBuffer>, usage: KeyUsage) {
  const base = await crypto.subtle.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, [
    'deriveKey',
  ]);
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations: 310_000 },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  );
}

export async function webCryptoDecrypt(document: WalletKeyNota, passphrase: string): Promise<Hex> {
  const { kdf, cipher } = document.payload;
  const key = await webCryptoKey(passphrase, bytes(kdf.salt), 'decrypt');
  const plaintext = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: bytes(cipher.iv) },
    key,
    bytes(cipher.ciphertext),
  );
  return `0x${Buffer.from(plaintext).toString('hex')}`;
}

/** A wallet-key nota made outside the service, following the published format. */
export async function webCryptoNota(privateKey: Hex, passphrase: string, address?: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await webCryptoKey(passphrase, salt, 'encrypt');
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv },
    key,
    new Uint8Array(Buffer.from(privateKey.slice(2), 'hex')),
  );
  const document: WalletKeyNota = {
    nota: 1,
    kind: 'wallet-key',
    issuedAt: new Date().toISOString(),
    payload: {
      address: address ?? privateKeyToAccount(privateKey).address,
      kdf: {
        name: 'PBKDF2',
        hash: 'SHA-256',
        iterations: 310_000,
        salt: Buffer.from(salt).toString('base64url'),
      },
      cipher: {
        name: 'AES-256-GCM',
        iv: Buffer.from(iv).toString('base64url'),
        ciphertext: Buffer.from(ciphertext).toString('base64url'),
      },
    },
  };
  return Buffer.from(JSON.stringify(document)).toString('base64url');
}
