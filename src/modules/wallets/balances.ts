import { type Hex, zeroHash } from 'viem';
import { CONFIDENTIAL_TOKEN_SYMBOL, STABLECOIN_SYMBOL } from '../../adapters/chain/contracts.ts';
import type { Network } from '../../adapters/chain/types.ts';
import {
  getConfidentialBalanceHandle,
  getGasBalance,
  getStablecoinBalance,
} from '../../adapters/confidential/helpers.ts';
import type { WalletRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { formatAmount, GAS_DECIMALS, STABLE_DECIMALS } from '../../lib/money.ts';
import { requireNetwork } from '../network/network.service.ts';
import { openWalletKey } from './custody.ts';
import { toWallet } from './wallets.schema.ts';

/** A confidential balance handle decrypted with the custodial wallet's key, kept by handle (a handle never changes). */
export async function decryptBalance(
  deps: Deps,
  network: Network,
  wallet: WalletRow,
  handle: Hex,
): Promise<bigint> {
  if (handle === zeroHash) return 0n;
  const cacheKey = `${network.contracts.confidentialToken}:${wallet.address}:${handle}`;
  const cached = deps.balanceCache.get(cacheKey);
  if (cached !== undefined) return cached;
  const value = await network.rail.userDecrypt({
    handle,
    contract: network.contracts.confidentialToken,
    privateKey: openWalletKey(deps.keyring, wallet),
  });
  deps.balanceCache.set(cacheKey, value);
  return value;
}

export interface GasRecord {
  walletId: string;
  address: string;
  eth: { amount: string; baseUnits: string };
  normal: { token: string; amount: string; baseUnits: string };
}

/** Gas and public balances: plain chain reads, no decryption, cheap enough to poll. */
export async function gasOf(deps: Deps, wallet: WalletRow): Promise<GasRecord> {
  const network = requireNetwork(deps);
  const address = wallet.address;
  const [eth, normal] = await Promise.all([
    getGasBalance(network, address),
    getStablecoinBalance(network, address),
  ]);
  return {
    walletId: wallet.id,
    address: wallet.address,
    eth: { amount: formatAmount(eth, GAS_DECIMALS), baseUnits: eth.toString() },
    normal: {
      token: STABLECOIN_SYMBOL,
      amount: formatAmount(normal, STABLE_DECIMALS),
      baseUnits: normal.toString(),
    },
  };
}

/** The balance record of one wallet; the confidential amount is decrypted for custodial wallets only. */
export async function balanceOf(deps: Deps, wallet: WalletRow) {
  const network = requireNetwork(deps);
  const address = wallet.address;
  const [eth, normal, handle] = await Promise.all([
    getGasBalance(network, address),
    getStablecoinBalance(network, address),
    getConfidentialBalanceHandle(network, address),
  ]);
  const confidential =
    wallet.type === 'CUSTODIAL' ? await decryptBalance(deps, network, wallet, handle) : null;
  return {
    wallet: toWallet(wallet),
    eth: { amount: formatAmount(eth, GAS_DECIMALS) },
    normal: { token: STABLECOIN_SYMBOL, amount: formatAmount(normal, STABLE_DECIMALS) },
    confidential: {
      token: CONFIDENTIAL_TOKEN_SYMBOL,
      amount: confidential === null ? null : formatAmount(confidential, STABLE_DECIMALS),
      encrypted: confidential === null,
      handle,
    },
    total: { amount: formatAmount(normal + (confidential ?? 0n), STABLE_DECIMALS), currency: 'USD' },
  };
}
