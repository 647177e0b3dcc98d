import type { Hex } from 'viem';
import type { WalletRow } from '../../db/schema/index.ts';
import { AppError } from '../../lib/errors.ts';
import type { Keyring } from '../../lib/secrets.ts';

/** The keyring context binds a sealed key to its wallet: a sealed value moved to another row does not open. */
function context(walletId: string): string {
  return `wallet-key:${walletId}`;
}

export function sealWalletKey(keyring: Keyring, walletId: string, privateKey: Hex): string {
  return keyring.seal(privateKey, context(walletId));
}

/** The custodial key of a wallet, in memory only for the operation at hand. Never logged, never returned. */
export function openWalletKey(
  keyring: Keyring,
  wallet: Pick<WalletRow, 'id' | 'type' | 'sealedPrivateKey'>,
): Hex {
  if (wallet.type !== 'CUSTODIAL' || !wallet.sealedPrivateKey) {
    throw new AppError(
      'wallet_not_custodial',
      'This is an external (watch-only) wallet: the service holds no key for it.',
    );
  }
  return keyring.openText(wallet.sealedPrivateKey, context(wallet.id)) as Hex;
}
