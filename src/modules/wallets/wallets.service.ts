import { type Address, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { TransactionRow, WalletRow } from '../../db/schema/index.ts';
import type { Deps, OperationContext, WalletIdentity } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { inScope, type Scope } from '../../lib/key-scope.ts';
import { ensureGas } from '../../worker/steps.ts';
import { PreflightError } from '../../worker/submissions.ts';
import { lockUser } from '../accounts/accounts.repository.ts';
import { openWalletKey, sealWalletKey } from './custody.ts';
import {
  countWallets,
  findWallet,
  findWalletByAddress,
  findWalletById,
  insertWallet,
  listWallets,
  setPrimaryWallet,
} from './wallets.repository.ts';

export const MAX_WALLETS = 10;

function walletExists(): AppError {
  return new AppError('wallet_exists', 'A wallet with this address is already registered.');
}

function noSuchWallet(): AppError {
  return new AppError('not_found', 'No such wallet.');
}

/**
 * The caller's wallet, or `404 not_found`: another account's wallet reads as absent, and so does one of the account's
 * outside the scope of a key bound to other wallets.
 */
export async function ownWallet(
  deps: Deps,
  userId: string,
  walletId: string,
  scope: Scope,
): Promise<WalletRow> {
  if (!inScope(scope, walletId)) throw noSuchWallet();
  const wallet = await findWallet(deps.database.db, userId, walletId);
  if (!wallet) throw noSuchWallet();
  return wallet;
}

/** The wallets the caller sees: the account's, or those of them a bound key names. */
export async function scopedWallets(deps: Deps, userId: string, scope: Scope): Promise<WalletRow[]> {
  const wallets = await listWallets(deps.database.db, userId);
  return scope.walletIds ? wallets.filter((wallet) => inScope(scope, wallet.id)) : wallets;
}

/**
 * `ownWallet` for what never changes about the wallet, kept per process: a wallet is never deleted, handed over,
 * given another address or custody, so what was read once holds in every process. A money movement's request then
 * reads no wallet row.
 */
export async function ownWalletIdentity(
  deps: Deps,
  userId: string,
  walletId: string,
  scope: Scope,
): Promise<WalletIdentity> {
  if (!inScope(scope, walletId)) throw noSuchWallet();
  const key = `${userId}\n${walletId}`;
  const kept = deps.walletIdentities.get(key);
  if (kept) return kept;
  const { id, address, type } = await ownWallet(deps, userId, walletId, scope);
  const identity: WalletIdentity = { id, userId, address, type };
  deps.walletIdentities.set(key, identity);
  return identity;
}

/** Only a custodial wallet can send: the service holds no key for a watch-only one. */
export function assertCanSend(wallet: Pick<WalletRow, 'type'>): void {
  if (wallet.type !== 'CUSTODIAL') {
    throw new AppError('wallet_not_custodial', 'External (watch-only) wallets can receive but cannot send.');
  }
}

/**
 * Adds a wallet under the account's row lock: the limit of 10 and the first-is-primary rule hold under
 * concurrent requests. A custodial wallet brings its key, sealed here to the wallet's id.
 */
export async function addWallet(
  deps: Deps,
  userId: string,
  wallet: { address: Address; label: string | undefined; privateKey?: Hex },
): Promise<WalletRow> {
  const id = newId();
  const type = wallet.privateKey ? 'CUSTODIAL' : 'EXTERNAL';
  try {
    return await deps.database.db.transaction(async (tx) => {
      await lockUser(tx, userId);
      const count = await countWallets(tx, userId);
      if (count >= MAX_WALLETS) {
        throw new AppError('wallet_limit_reached', `An account can hold ${MAX_WALLETS} wallets.`);
      }
      if (await findWalletByAddress(tx, wallet.address)) throw walletExists();
      return insertWallet(tx, {
        id,
        userId,
        address: wallet.address,
        type,
        label: wallet.label ?? (type === 'CUSTODIAL' ? `Wallet ${count + 1}` : `External ${count + 1}`),
        isPrimary: count === 0,
        sealedPrivateKey: wallet.privateKey ? sealWalletKey(deps.keyring, id, wallet.privateKey) : null,
        createdAt: deps.clock.now(),
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw walletExists();
    throw error;
  }
}

/**
 * A new custodial wallet (the service generates and keeps its key) or a watch-only address. A key bound to wallets
 * cannot add one: it would not be in its scope.
 */
export function createWallet(
  deps: Deps,
  userId: string,
  input: { type: 'CUSTODIAL' | 'EXTERNAL'; label?: string | undefined; address?: string | undefined },
  scope: Scope,
): Promise<WalletRow> {
  if (scope.walletIds) {
    throw new AppError('insufficient_scope', 'This API key is bound to some wallets: it cannot create one.');
  }
  if (input.type === 'CUSTODIAL') {
    const privateKey = generatePrivateKey();
    return addWallet(deps, userId, {
      address: privateKeyToAccount(privateKey).address,
      label: input.label,
      privateKey,
    });
  }
  if (!input.address) {
    throw new AppError('validation_error', 'An EXTERNAL wallet needs its address.', {
      details: [{ path: 'address', message: 'is required for an EXTERNAL wallet' }],
    });
  }
  return addWallet(deps, userId, { address: getAddress(input.address.toLowerCase()), label: input.label });
}

/** One of the caller's wallets (`walletId`), or all it sees. */
export async function selectedWallets(
  deps: Deps,
  userId: string,
  walletId: string | undefined,
  scope: Scope,
): Promise<WalletRow[]> {
  return walletId ? [await ownWallet(deps, userId, walletId, scope)] : scopedWallets(deps, userId, scope);
}

export async function makePrimary(
  deps: Deps,
  userId: string,
  walletId: string,
  scope: Scope,
): Promise<WalletRow> {
  const wallet = await ownWallet(deps, userId, walletId, scope);
  return deps.database.db.transaction((tx) => setPrimaryWallet(tx, userId, wallet.id));
}

/** The wallet a transaction moves money from; a row whose wallet is gone fails before anything is signed. */
export async function transactionWallet(deps: Deps, row: TransactionRow): Promise<WalletRow> {
  const wallet = await findWalletById(deps.database.db, row.walletId);
  if (!wallet) throw new PreflightError('The wallet of this transaction no longer exists.');
  return wallet;
}

/**
 * What an operation that spends from a custodial wallet starts with: the wallet, its key (in memory for this
 * operation only), and the sponsored gas top-up's hash when it needed one.
 */
export async function spendingWallet(
  ctx: OperationContext,
  row: TransactionRow,
): Promise<{ wallet: WalletRow; key: Hex; gasTxHash: Hex | null }> {
  const wallet = await transactionWallet(ctx.deps, row);
  const key = openWalletKey(ctx.deps.keyring, wallet);
  const gasTxHash = await ensureGas(ctx, row, wallet);
  return { wallet, key, gasTxHash };
}

/** The key of the custodial wallet at `address`, or null when the service holds none (`sealpay repair nonces`). */
export async function custodialKeyOf(deps: Deps, address: string): Promise<Hex | null> {
  const wallet = await findWalletByAddress(deps.database.db, address);
  if (!wallet?.sealedPrivateKey) return null;
  return openWalletKey(deps.keyring, wallet);
}
