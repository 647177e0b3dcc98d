import { Type } from '@sinclair/typebox';
import { and, eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { users, type WalletRow, wallets } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { balanceOf, gasOf } from './balances.ts';
import { sealWalletKey } from './custody.ts';
import { countWallets, findWallet, findWalletByAddress, listWallets } from './wallets.repository.ts';
import { Balance, CreateWalletBody, GasRecord, toWallet, Wallet, WalletQuery } from './wallets.schema.ts';

export const MAX_WALLETS = 10;

function walletExists(): AppError {
  return new AppError('wallet_exists', 'A wallet with this address is already registered.');
}

function isUniqueViolation(error: unknown): boolean {
  const code =
    (error as { code?: string; cause?: { code?: string } })?.cause?.code ??
    (error as { code?: string })?.code;
  return code === '23505';
}

/**
 * Inserts a wallet under the account's row lock: the limit of 10 and the first-is-primary rule hold under
 * concurrent requests. Used by creation and by key import.
 */
export async function insertWallet(
  deps: Deps,
  userId: string,
  values: {
    id?: string;
    address: string;
    type: 'CUSTODIAL' | 'EXTERNAL';
    label: string | undefined;
    sealedPrivateKey?: string;
  },
): Promise<WalletRow> {
  const { db } = deps.database;
  const id = values.id ?? newId();
  try {
    return await db.transaction(async (tx) => {
      await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
      const count = await countWallets(tx, userId);
      if (count >= MAX_WALLETS) {
        throw new AppError('wallet_limit_reached', `An account can hold ${MAX_WALLETS} wallets.`);
      }
      if (await findWalletByAddress(tx, values.address)) throw walletExists();
      const [row] = await tx
        .insert(wallets)
        .values({
          id,
          userId,
          address: values.address,
          type: values.type,
          label:
            values.label ?? (values.type === 'CUSTODIAL' ? `Wallet ${count + 1}` : `External ${count + 1}`),
          isPrimary: count === 0,
          sealedPrivateKey: values.sealedPrivateKey ?? null,
          createdAt: deps.clock.now(),
        })
        .returning();
      return row as WalletRow;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw walletExists();
    throw error;
  }
}

/** The caller's wallet, or `404 not_found` (another account's wallet reads as absent). */
export async function ownWallet(deps: Deps, userId: string, walletId: string): Promise<WalletRow> {
  const wallet = await findWallet(deps.database.db, userId, walletId);
  if (!wallet) throw new AppError('not_found', 'No such wallet.');
  return wallet;
}

export function registerWalletRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

  app.post(
    '/wallets',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'Create a custodial wallet or register an external (watch-only) address',
        body: CreateWalletBody,
        response: responses({ 201: Type.Object({ wallet: Wallet }) }),
      },
    },
    async (request, reply) => {
      const { user } = principalOf(request);
      const { type, label, address } = request.body;
      let row: WalletRow;
      if (type === 'CUSTODIAL') {
        const id = newId();
        const privateKey = generatePrivateKey();
        row = await insertWallet(deps, user.id, {
          id,
          address: privateKeyToAccount(privateKey).address,
          type,
          label,
          sealedPrivateKey: sealWalletKey(deps.keyring, id, privateKey),
        });
      } else {
        if (!address) {
          throw new AppError('validation_error', 'An EXTERNAL wallet needs its address.', {
            details: [{ path: 'address', message: 'is required for an EXTERNAL wallet' }],
          });
        }
        row = await insertWallet(deps, user.id, { address: getAddress(address.toLowerCase()), type, label });
      }
      return reply.code(201).send(ok({ wallet: toWallet(row) }));
    },
  );

  app.get(
    '/wallets',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'List wallets',
        response: responses({ 200: Type.Object({ wallets: Type.Array(Wallet) }) }),
      },
    },
    async (request) => ok({ wallets: (await listWallets(db, principalOf(request).user.id)).map(toWallet) }),
  );

  app.get(
    '/wallets/:id',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'One wallet with its balances',
        params: IdParam,
        response: responses({ 200: Type.Object({ wallet: Wallet, balances: Balance }) }),
      },
    },
    async (request) => {
      const wallet = await ownWallet(deps, principalOf(request).user.id, request.params.id);
      return ok({ wallet: toWallet(wallet), balances: await balanceOf(deps, wallet) });
    },
  );

  app.post(
    '/wallets/:id/primary',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'Make a wallet the primary one',
        params: IdParam,
        response: responses({ 200: Type.Object({ wallet: Wallet }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const wallet = await ownWallet(deps, user.id, request.params.id);
      const updated = await db.transaction(async (tx) => {
        await tx
          .update(wallets)
          .set({ isPrimary: false })
          .where(and(eq(wallets.userId, user.id), eq(wallets.isPrimary, true)));
        const [row] = await tx
          .update(wallets)
          .set({ isPrimary: true })
          .where(eq(wallets.id, wallet.id))
          .returning();
        return row as WalletRow;
      });
      return ok({ wallet: toWallet(updated) });
    },
  );

  app.get(
    '/balances',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'Balances of every wallet, or of one (?walletId=)',
        description:
          'Confidential balances of custodial wallets are decrypted: heavy. Poll `GET /gas` instead.',
        querystring: WalletQuery,
        response: responses({ 200: Type.Object({ balances: Type.Array(Balance) }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const selected = request.query.walletId
        ? [await ownWallet(deps, user.id, request.query.walletId)]
        : await listWallets(db, user.id);
      return ok({ balances: await Promise.all(selected.map((wallet) => balanceOf(deps, wallet))) });
    },
  );

  app.get(
    '/gas',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Wallets'],
        summary: 'Gas and public balances (no decryption; cheap to poll)',
        querystring: WalletQuery,
        response: responses({ 200: Type.Object({ wallets: Type.Array(GasRecord) }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const selected = request.query.walletId
        ? [await ownWallet(deps, user.id, request.query.walletId)]
        : await listWallets(db, user.id);
      return ok({ wallets: await Promise.all(selected.map((wallet) => gasOf(deps, wallet))) });
    },
  );
}
