/**
 * The chain as the invariants read it (`ChainView`), on a `sealpay devnet`: token logs, public balances, receipts,
 * and confidential balances decrypted through the devnet's relayer methods with each custodial wallet's key (opened
 * with the service's master key). Shared by the scale-out and the public-chain runs.
 */
import { type Address, erc20Abi, getAddress, type Hex, type PublicClient } from 'viem';
import { createMockFhevmClient } from '../../src/adapters/confidential/fhevm-mock-client.ts';
import { createFhevmRail } from '../../src/adapters/confidential/fhevm-rail.ts';
import { getConfidentialBalanceHandle } from '../../src/adapters/confidential/helpers.ts';
import type { WalletRow } from '../../src/db/schema/index.ts';
import { loadKeyring } from '../../src/lib/secrets.ts';
import { openWalletKey } from '../../src/modules/wallets/custody.ts';
import type { ChainView, RawLog } from './invariants.ts';
import { freshDataDir } from './service.ts';

export async function devnetChainView(params: {
  client: PublicClient;
  /** The devnet's `devnet.env`. */
  settings: Record<string, string>;
  masterKey: string;
  walletRows: WalletRow[];
}) {
  const { client, settings } = params;
  const fhevm = await createMockFhevmClient(settings.RPC_URL as string);
  const rail = createFhevmRail('mock', async () => fhevm);
  const contracts = {
    stablecoin: getAddress(settings.STABLECOIN_ADDRESS as string),
    confidentialToken: getAddress(settings.CONFIDENTIAL_TOKEN_ADDRESS as string),
    letterVault: getAddress(settings.LETTER_VAULT_ADDRESS as string),
  };
  const reads = { publicClient: client as never, contracts };
  const keyring = loadKeyring({ masterKey: params.masterKey, dataDir: freshDataDir('sealpay-view-keys-') });
  const keyOf = new Map(params.walletRows.map((w) => [w.id, openWalletKey(keyring, w)]));
  const view: ChainView = {
    contracts,
    logs: (fromBlock) =>
      client.request({
        method: 'eth_getLogs',
        params: [
          {
            fromBlock: `0x${fromBlock.toString(16)}`,
            toBlock: 'latest',
            address: [contracts.stablecoin, contracts.confidentialToken],
          },
        ],
      }) as Promise<RawLog[]>,
    publicBalance: (address) =>
      client.readContract({
        address: contracts.stablecoin,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [address],
      }),
    receiptStatus: async (hash) => {
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
      return receipt ? receipt.status : null;
    },
    confidentialBalance: async (wallet) =>
      rail.userDecrypt({
        handle: await getConfidentialBalanceHandle(reads, wallet.address as Address),
        contract: contracts.confidentialToken,
        privateKey: keyOf.get(wallet.id) as Hex,
      }),
  };
  return { view, rail, reads, contracts };
}

/** The hashes of every transaction mined from `fromBlock` to the head, lower-case, in block order. */
export async function minedHashes(client: PublicClient, fromBlock: bigint): Promise<string[]> {
  const latest = await client.getBlockNumber();
  const hashes: string[] = [];
  for (let n = fromBlock; n <= latest; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) hashes.push(tx.hash.toLowerCase());
  }
  return hashes;
}
