import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { CHAIN_READ_ERRORS } from '../network/network.service.ts';
import { MAX_NOTA_LENGTH } from '../notas/nota.ts';
import { NotaFile } from '../notas/notas.schema.ts';
import { balanceOf, gasOf } from './balances.ts';
import { exportWalletKey, importWalletKey } from './wallet-export.ts';
import { Balance, CreateWalletBody, GasRecord, toWallet, Wallet, WalletQuery } from './wallets.schema.ts';
import { createWallet, makePrimary, ownWallet, scopedWallets, selectedWallets } from './wallets.service.ts';

const Passphrase = Type.String({
  minLength: 8,
  maxLength: 200,
  description: '8 to 200 characters. It cannot be recovered: without it the file cannot be opened.',
});

export function registerWalletRoutes(app: App, deps: Deps): void {
  app.post(
    '/wallets',
    {
      config: { auth: 'either', errors: ['wallet_limit_reached', 'wallet_exists'] },
      schema: {
        operationId: 'createWallet',
        tags: ['Wallets'],
        summary: 'Create a custodial wallet or register an external (watch-only) address',
        body: CreateWalletBody,
        response: responses({ 201: Type.Object({ wallet: Wallet }) }),
      },
    },
    async (request, reply) => {
      const { principal, user } = principalOf(request);
      const wallet = await createWallet(deps, user.id, request.body, principal.scope);
      return reply.code(201).send(ok({ wallet: toWallet(wallet) }));
    },
  );

  app.get(
    '/wallets',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'listWallets',
        tags: ['Wallets'],
        summary: 'List wallets',
        response: responses({ 200: Type.Object({ wallets: Type.Array(Wallet) }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      return ok({ wallets: (await scopedWallets(deps, user.id, principal.scope)).map(toWallet) });
    },
  );

  app.get(
    '/wallets/:id',
    {
      config: { auth: 'either', errors: [...CHAIN_READ_ERRORS] },
      schema: {
        operationId: 'getWallet',
        tags: ['Wallets'],
        summary: 'One wallet with its balances',
        params: IdParam,
        response: responses({ 200: Type.Object({ wallet: Wallet, balances: Balance }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const wallet = await ownWallet(deps, user.id, request.params.id, principal.scope);
      return ok({ wallet: toWallet(wallet), balances: await balanceOf(deps, wallet) });
    },
  );

  app.post(
    '/wallets/:id/primary',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'setPrimaryWallet',
        tags: ['Wallets'],
        summary: 'Make a wallet the primary one',
        params: IdParam,
        response: responses({ 200: Type.Object({ wallet: Wallet }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const wallet = await makePrimary(deps, user.id, request.params.id, principal.scope);
      return ok({ wallet: toWallet(wallet) });
    },
  );

  app.get(
    '/balances',
    {
      config: { auth: 'either', errors: ['not_found', ...CHAIN_READ_ERRORS] },
      schema: {
        operationId: 'listBalances',
        tags: ['Wallets'],
        summary: 'Balances of every wallet, or of one (?walletId=)',
        description:
          'Confidential balances of custodial wallets are decrypted: heavy. Poll `GET /gas` instead.',
        querystring: WalletQuery,
        response: responses({ 200: Type.Object({ balances: Type.Array(Balance) }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const selected = await selectedWallets(deps, user.id, request.query.walletId, principal.scope);
      return ok({ balances: await Promise.all(selected.map((wallet) => balanceOf(deps, wallet))) });
    },
  );

  app.get(
    '/gas',
    {
      config: { auth: 'either', errors: ['not_found', ...CHAIN_READ_ERRORS] },
      schema: {
        operationId: 'getGas',
        tags: ['Wallets'],
        summary: 'Gas and public balances (no decryption; cheap to poll)',
        querystring: WalletQuery,
        response: responses({ 200: Type.Object({ wallets: Type.Array(GasRecord) }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const selected = await selectedWallets(deps, user.id, request.query.walletId, principal.scope);
      return ok({ wallets: await Promise.all(selected.map((wallet) => gasOf(deps, wallet))) });
    },
  );

  app.post(
    '/wallets/:id/export',
    {
      config: { auth: 'session', errors: ['wallet_not_custodial'] },
      schema: {
        operationId: 'exportWallet',
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
      return ok(await exportWalletKey(deps, user.id, request.params.id, request.body.passphrase));
    },
  );

  app.post(
    '/wallets/import',
    {
      config: {
        auth: 'session',
        errors: ['invalid_nota', 'invalid_passphrase', 'wallet_limit_reached', 'wallet_exists'],
      },
      schema: {
        operationId: 'importWallet',
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
      const wallet = await importWalletKey(deps, principalOf(request).user.id, request.body);
      return reply.code(201).send(ok({ wallet: toWallet(wallet) }));
    },
  );
}
