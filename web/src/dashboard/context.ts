import type { NetworkInfo, User, Wallet } from '../types.ts';

/** What every dashboard view shares. */
export interface Ctx {
  user: User;
  network: NetworkInfo | null;
  wallets: Wallet[];
  /** Re-reads `GET /wallets` into `wallets`. */
  reloadWallets(): Promise<void>;
  setUser(user: User): void;
  /** Registers a timer that stops when the view is left. */
  every(ms: number, tick: () => Promise<void> | void): void;
}

export function walletName(ctx: Ctx, walletId: string): string {
  const wallet = ctx.wallets.find((w) => w.id === walletId);
  return wallet ? wallet.label : walletId;
}

/** The label of the account's own wallet at `address`, or null when it is not one of them. */
export function walletNameAt(ctx: Ctx, address: string): string | null {
  return ctx.wallets.find((w) => w.address.toLowerCase() === address.toLowerCase())?.label ?? null;
}
