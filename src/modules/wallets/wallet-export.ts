import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Type } from '@sinclair/typebox';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import {
  decodeNota,
  encodeNota,
  MAX_NOTA_LENGTH,
  type Nota,
  WALLET_KEY_KDF,
  type WalletKeyPayload,
  walletKeyPayloadOf,
} from '../receipts/nota.ts';
import { NotaFile } from '../receipts/receipts.routes.ts';
import { openWalletKey, sealWalletKey } from './custody.ts';
import { insertWallet, ownWallet } from './wallets.routes.ts';
import { toWallet, Wallet } from './wallets.schema.ts';

/**
 * Wallet-key export and import: the custodial key encrypted under the caller's passphrase (PBKDF2-SHA256,
 * 310,000 iterations, then AES-256-GCM), in the layout WebCrypto reads (`ciphertext` ends with the 16-byte tag).
 * PBKDF2 runs on the thread pool (async `pbkdf2`), never on the event loop.
 */

const pbkdf2Async = promisify(pbkdf2);

const Passphrase = Type.String({
  minLength: 8,
  maxLength: 200,
  description: '8 to 200 characters. It cannot be recovered: without it the file cannot be opened.',
});

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
  const hex = `0x${plaintext.toString('hex')}` as Hex;
  plaintext.fill(0);
  return hex;
}

export function walletKeyFilename(address: string): string {
  return `sealpay-wallet-${address}.nota`;
}

export function registerWalletExportRoutes(app: App, deps: Deps): void {
  app.post(
    '/wallets/:id/export',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['Wallets'],
        summary: 'Export a custodial wallet key (passphrase-encrypted .nota file)',
        description:
          'Session only (`403 session_required` with an API key). `nota` is base64url of the UTF-8 JSON ' +
          '`{"nota": 1, "kind": "wallet-key", "issuedAt", "payload": {address, kdf: {name: "PBKDF2", hash: ' +
          '"SHA-256", iterations: 310000, salt}, cipher: {name: "AES-256-GCM", iv, ciphertext}}}` (base64url ' +
          'fields; `ciphertext` ends with the 16-byte GCM tag, as WebCrypto produces it; the plaintext is the ' +
          '32-byte private key). The encryption happens server-side; the plaintext key never leaves the ' +
          'service. The passphrase cannot be recovered. Only custodial wallets (`400 wallet_not_custodial`).',
        params: IdParam,
        body: Type.Object({ passphrase: Passphrase }),
        response: responses({ 200: NotaFile }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const wallet = await ownWallet(deps, user.id, request.params.id);
      const privateKey = openWalletKey(deps.keyring, wallet);
      const payload = await encryptWalletKey(wallet.address, privateKey, request.body.passphrase);
      const nota: Nota = {
        nota: 1,
        kind: 'wallet-key',
        issuedAt: iso(deps.clock.now()),
        payload: payload as unknown as Record<string, unknown>,
      };
      return ok({ filename: walletKeyFilename(wallet.address), nota: encodeNota(nota) });
    },
  );

  app.post(
    '/wallets/import',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['Wallets'],
        summary: 'Import an exported wallet key as a custodial wallet',
        description:
          'Session only. `nota` is a file from `POST /wallets/{id}/export`. `400 invalid_nota` when it is not a ' +
          'well-formed wallet-key nota, `400 invalid_passphrase` when the passphrase does not decrypt it, ' +
          '`409 wallet_exists` when the address is already registered (in any account), ' +
          '`400 wallet_limit_reached` at 10 wallets.',
        body: Type.Object({
          nota: Type.String({ minLength: 1, maxLength: MAX_NOTA_LENGTH }),
          passphrase: Type.String({ minLength: 1, maxLength: 200 }),
          label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        }),
        response: responses({ 201: Type.Object({ wallet: Wallet }) }),
      },
    },
    async (request, reply) => {
      const { user } = principalOf(request);
      const nota = decodeNota(request.body.nota);
      const payload = walletKeyPayloadOf(nota);
      if (!payload) throw new AppError('invalid_nota', 'This is not a wallet-key .nota file.');
      const privateKey = await decryptWalletKey(payload, request.body.passphrase);
      let address: string;
      try {
        address = privateKeyToAccount(privateKey).address;
      } catch {
        throw new AppError('invalid_nota', 'The file does not hold a valid private key.');
      }
      if (address.toLowerCase() !== payload.address.toLowerCase()) {
        throw new AppError('invalid_nota', 'The key in this file does not belong to the address it names.');
      }
      const id = newId();
      const row = await insertWallet(deps, user.id, {
        id,
        address: getAddress(address),
        type: 'CUSTODIAL',
        label: request.body.label,
        sealedPrivateKey: sealWalletKey(deps.keyring, id, privateKey),
      });
      return reply.code(201).send(ok({ wallet: toWallet(row) }));
    },
  );
}
