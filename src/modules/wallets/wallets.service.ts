import type { Hex } from 'viem';
import type { TransactionRow, WalletRow } from '../../db/schema/index.ts';
import type { Deps, OperationContext } from '../../deps.ts';
import { ensureGas } from '../../worker/steps.ts';
import { PreflightError } from '../../worker/submissions.ts';
import { openWalletKey } from './custody.ts';
import { findWalletByAddress, findWalletById } from './wallets.repository.ts';

/** The wallet a transaction moves money from; a row whose wallet is gone fails before anything is signed. */
export async function transactionWallet(deps: Deps, row: TransactionRow): Promise<WalletRow> {
  const wallet = await findWalletById(deps.database.db, row.walletId);
  if (!wallet) throw new PreflightError('wallet_missing', 'The wallet of this transaction no longer exists.');
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
