import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { bytesToHex, getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { WalletRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { SESSION_SCOPE } from '../../lib/key-scope.ts';
import { iso } from '../../lib/time.ts';
import {
  decodeNota,
  encodeNota,
  type Nota,
  WALLET_KEY_KDF,
  type WalletKeyPayload,
  walletKeyPayloadOf,
} from '../notas/nota.ts';
import { openWalletKey } from './custody.ts';
import { addWallet, ownWallet } from './wallets.service.ts';

/**
 * Wallet-key export and import: the custodial key encrypted under the caller's passphrase (PBKDF2-SHA256,
 * 310,000 iterations, then AES-256-GCM), in the layout WebCrypto reads (`ciphertext` ends with the 16-byte tag).
 * PBKDF2 runs on the thread pool (async `pbkdf2`), never on the event loop.
 */

const pbkdf2Async = promisify(pbkdf2);

function deriveKey(passphrase: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(passphrase, 'utf8'), salt, iterations, 32, 'sha256');
}

export async function encryptWalletKey(
  address: string,
  privateKey: Hex,
  passphrase: string,
): Promise<WalletKeyPayload> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await deriveKey(passphrase, salt, WALLET_KEY_KDF.iterations);
  const plaintext = Buffer.from(privateKey.slice(2), 'hex');
  try {
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return {
      address,
      kdf: { ...WALLET_KEY_KDF, salt: salt.toString('base64url') },
      cipher: {
        name: 'AES-256-GCM',
        iv: iv.toString('base64url'),
        ciphertext: ciphertext.toString('base64url'),
      },
    };
  } finally {
    plaintext.fill(0);
    key.fill(0);
  }
}

/** The private key of a wallet-key payload, or `400 invalid_passphrase` when the tag does not hold. */
export async function decryptWalletKey(payload: WalletKeyPayload, passphrase: string): Promise<Hex> {
  const key = await deriveKey(passphrase, Buffer.from(payload.kdf.salt, 'base64url'), payload.kdf.iterations);
  const body = Buffer.from(payload.cipher.ciphertext, 'base64url');
  let plaintext: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(payload.cipher.iv, 'base64url'));
    decipher.setAuthTag(body.subarray(body.length - 16));
    plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
  } catch {
    throw new AppError('invalid_passphrase', 'The passphrase does not open this file.');
  } finally {
    key.fill(0);
  }
  const hex = bytesToHex(plaintext);
  plaintext.fill(0);
  return hex;
}

export function walletKeyFilename(address: string): string {
  return `sealpay-wallet-${address}.nota`;
}

/** The `.nota` file of a custodial wallet's key, encrypted under `passphrase` (the key never leaves otherwise). */
export async function exportWalletKey(
  deps: Deps,
  userId: string,
  walletId: string,
  passphrase: string,
): Promise<{ filename: string; nota: string }> {
  // Session only: a session's scope is the whole account.
  const wallet = await ownWallet(deps, userId, walletId, SESSION_SCOPE);
  const privateKey = openWalletKey(deps.keyring, wallet);
  const payload = await encryptWalletKey(wallet.address, privateKey, passphrase);
  const nota: Nota = {
    nota: 1,
    kind: 'wallet-key',
    issuedAt: iso(deps.clock.now()),
    payload: { ...payload },
  };
  return { filename: walletKeyFilename(wallet.address), nota: encodeNota(nota) };
}

/** A wallet-key `.nota` file opened with its passphrase and added to the account as a custodial wallet. */
export async function importWalletKey(
  deps: Deps,
  userId: string,
  input: { nota: string; passphrase: string; label?: string | undefined },
): Promise<WalletRow> {
  const payload = walletKeyPayloadOf(decodeNota(input.nota));
  if (!payload) throw new AppError('invalid_nota', 'This is not a wallet-key .nota file.');
  const privateKey = await decryptWalletKey(payload, input.passphrase);
  let address: string;
  try {
    address = privateKeyToAccount(privateKey).address;
  } catch {
    throw new AppError('invalid_nota', 'The file does not hold a valid private key.');
  }
  if (address.toLowerCase() !== payload.address.toLowerCase()) {
    throw new AppError('invalid_nota', 'The key in this file does not belong to the address it names.');
  }
  return addWallet(deps, userId, { address: getAddress(address), label: input.label, privateKey });
}
