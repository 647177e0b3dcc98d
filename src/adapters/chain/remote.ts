/**
 * `NETWORK=sepolia|mainnet|devnet`: viem over `RPC_URL` (HTTP; a comma-separated list of providers, in order of
 * preference, behind one failover transport: `providers.ts`) and a relayer: Zama's (the relayer SDK) on the public
 * networks; on `devnet` (`sealpay devnet`, or `hardhat node` with Zama's plugin) the mock relayer that answers the
 * `fhevm_relayer_*` methods on the same RPC URL, through `@fhevm/mock-utils`'s `MockFhevmInstance`, which has the
 * relayer SDK instance's interface. Everything else is the same code.
 *
 * Construction never fails for a missing setting, so that the service starts and answers 503s: what is missing
 * throws on first use (`missingSetting('RPC_URL')`, `missingSetting('OPERATOR_PRIVATE_KEY')`, the contract
 * addresses, or `fhe_credentials_missing` for the relayer), and `ready()` lists it. The relayer SDK instance is
 * created on first confidential use (it downloads the FHE public key) and retried if that fails.
 */
import { type FhevmInstanceConfig, MainnetConfig, SepoliaConfig } from '@zama-fhe/relayer-sdk/node';
import {
  type Address,
  createPublicClient,
  custom,
  getAddress,
  type Hex,
  isAddress,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat, mainnet, sepolia } from 'viem/chains';
import { AppError, missingSetting } from '../../lib/errors.ts';
import { createFhevmRail, type FhevmInstanceLike } from '../confidential/fhevm-rail.ts';
import { createProviderList, type ProviderObserver, splitRpcUrls, withRounds } from './providers.ts';
import type { ContractAddresses, Network } from './types.ts';

/** A network reached over RPC rather than run in this process. */
export type RemoteNetworkName = 'sepolia' | 'mainnet' | 'devnet';

/** How to reach a remote network: its RPC providers, timeouts, and the deployed contracts. */
export interface RemoteNetworkOptions {
  network: RemoteNetworkName;
  /** One URL, or several separated by commas, in order of preference. */
  rpcUrl?: string;
  /** Per request to one provider (default 10 s): past it, the next provider is asked. */
  rpcTimeoutMs?: number;
  /** Told of every request to every provider (the per-provider metrics). */
  rpcObserver?: ProviderObserver;
  zamaApiKey?: string;
  operatorPrivateKey?: string;
  contracts: Partial<ContractAddresses>;
  /** Optional: without it every confidential transfer goes alone. */
  transferBatcher?: string;
  /** Replaces the relayer SDK's `createInstance` (tests). */
  createInstance?: (config: FhevmInstanceConfig) => Promise<FhevmInstanceLike>;
}

const CONTRACT_SETTINGS: Record<keyof ContractAddresses, string> = {
  stablecoin: 'STABLECOIN_ADDRESS',
  confidentialToken: 'CONFIDENTIAL_TOKEN_ADDRESS',
  letterVault: 'LETTER_VAULT_ADDRESS',
};

/** The block explorer of each remote network, for links to transactions (none for a devnet). */
export const EXPLORERS = {
  sepolia: 'https://sepolia.etherscan.io',
  mainnet: 'https://etherscan.io',
  devnet: null,
} as const;

/** `sealpay devnet`: chain 31337, like `hardhat node` and `anvil`. */
export const devnetChain = { ...hardhat, name: 'sealpay devnet' } as const;

const CHAINS = { sepolia, mainnet, devnet: devnetChain } as const;

function invalidSetting(variable: string, why: string): AppError {
  return new AppError('configuration_missing', `The service is misconfigured: ${variable} ${why}.`, {
    details: { variable },
  });
}

/**
 * A `Network` over `RPC_URL` and a relayer (Zama's, or the devnet's mock one on the same URL). It never fails for a
 * missing setting: what is missing throws a 503 naming it on first use, and `ready()` lists it.
 */
export function createRemoteNetwork(options: RemoteNetworkOptions): Network {
  const chain = CHAINS[options.network];
  // The devnet's relayer is the mock one on the RPC URL itself: no Zama credentials.
  const mockRelayer = options.network === 'devnet';
  const rpcUrls = splitRpcUrls(options.rpcUrl);
  // The first provider: what `GET /network` shows wallets, and the readiness message's subject.
  const rpcUrl = rpcUrls[0];
  const zamaApiKey = options.zamaApiKey?.trim() || undefined;
  const operatorKey = options.operatorPrivateKey?.trim() || undefined;

  for (const url of rpcUrls) {
    if (!/^https?:\/\/[^/]/.test(url))
      throw invalidSetting('RPC_URL', 'must be http(s) URLs, separated by commas');
  }
  if (operatorKey && !/^0x[0-9a-fA-F]{64}$/.test(operatorKey)) {
    throw invalidSetting('OPERATOR_PRIVATE_KEY', 'must be a 0x-prefixed 32-byte hex key');
  }
  for (const [field, variable] of Object.entries(CONTRACT_SETTINGS)) {
    const value = options.contracts[field as keyof ContractAddresses];
    if (value !== undefined && !isAddress(value)) throw invalidSetting(variable, 'is not an address');
  }
  if (options.transferBatcher !== undefined && !isAddress(options.transferBatcher)) {
    throw invalidSetting('TRANSFER_BATCHER_ADDRESS', 'is not an address');
  }

  const missing = (): string[] => {
    const list: string[] = [];
    if (!rpcUrl) list.push('RPC_URL');
    if (!operatorKey) list.push('OPERATOR_PRIVATE_KEY');
    for (const [field, variable] of Object.entries(CONTRACT_SETTINGS)) {
      if (!options.contracts[field as keyof ContractAddresses]) list.push(variable);
    }
    if (!zamaApiKey && !mockRelayer) list.push('ZAMA_API_KEY');
    return list;
  };

  const providers =
    rpcUrls.length > 0
      ? createProviderList({
          urls: rpcUrls,
          chain,
          ...(options.rpcTimeoutMs !== undefined ? { timeoutMs: options.rpcTimeoutMs } : {}),
          ...(options.rpcObserver ? { observer: options.rpcObserver } : {}),
        })
      : null;
  const publicClient = (
    providers
      ? // Each provider is tried once per request; when every one failed, the list is tried again twice.
        createPublicClient({ chain, transport: custom({ request: providers.request }, { retryCount: 2 }) })
      : createPublicClient({
          chain,
          transport: custom({
            request: async () => {
              throw missingSetting('RPC_URL');
            },
          }),
        })
  ) as PublicClient;

  const operator = operatorKey
    ? { address: privateKeyToAccount(operatorKey as Hex).address, privateKey: operatorKey as Hex }
    : null;

  const contracts = {} as ContractAddresses;
  for (const [field, variable] of Object.entries(CONTRACT_SETTINGS) as [keyof ContractAddresses, string][]) {
    const value = options.contracts[field];
    Object.defineProperty(contracts, field, {
      enumerable: true,
      get(): Address {
        if (!value) throw missingSetting(variable);
        return getAddress(value);
      },
    });
  }

  const baseConfig = options.network === 'mainnet' ? MainnetConfig : SepoliaConfig;
  const createInstance =
    options.createInstance ??
    (async (config: FhevmInstanceConfig) => {
      if (mockRelayer) {
        const { createMockFhevmClient } = await import('../confidential/fhevm-mock-client.ts');
        return await createMockFhevmClient(config.network as string);
      }
      const { createInstance: sdkCreateInstance } = await import('@zama-fhe/relayer-sdk/node');
      return await sdkCreateInstance(config);
    });
  let instancePromise: Promise<FhevmInstanceLike> | null = null;
  const getInstance = (): Promise<FhevmInstanceLike> => {
    if (!zamaApiKey && !mockRelayer) {
      return Promise.reject(
        new AppError(
          'fhe_credentials_missing',
          'The Zama relayer credentials (ZAMA_API_KEY) are not configured.',
        ),
      );
    }
    if (!rpcUrl) return Promise.reject(missingSetting('RPC_URL'));
    instancePromise ??= createInstance({
      ...baseConfig,
      // Several providers: the SDK reads the chain through the same failover as everything else.
      network: rpcUrls.length > 1 && providers ? { request: withRounds(providers.request, 3) } : rpcUrl,
      ...(zamaApiKey ? { auth: { __type: 'ApiKeyHeader' as const, value: zamaApiKey } } : {}),
    }).catch((error: unknown) => {
      instancePromise = null;
      // Unreachable like the chain itself (`providers.ts`): a 503 the same request may retry.
      throw new AppError('service_unavailable', 'The Zama relayer could not be reached. Retry later.', {
        cause: error,
      });
    });
    return instancePromise;
  };

  return {
    name: options.network,
    chainId: chain.id,
    chain,
    publicClient,
    contracts,
    transferBatcher: options.transferBatcher ? getAddress(options.transferBatcher) : null,
    explorerBaseUrl: EXPLORERS[options.network],
    upstreamRpcUrl: rpcUrl ?? null,
    get operator() {
      if (!operator) throw missingSetting('OPERATOR_PRIVATE_KEY');
      return operator;
    },
    rail: createFhevmRail(mockRelayer ? 'mock' : 'fhe', getInstance),
    rpc: null,
    async ready() {
      const absent = missing();
      if (!rpcUrl) return { ok: false, detail: `missing settings: ${absent.join(', ')}` };
      try {
        const chainId = await publicClient.getChainId();
        if (chainId !== chain.id) {
          return {
            ok: false,
            detail: `RPC_URL serves chain ${chainId}, expected ${chain.id} (${options.network})`,
          };
        }
      } catch (error) {
        return { ok: false, detail: `RPC_URL does not answer: ${(error as Error).message.split('\n')[0]}` };
      }
      if (absent.length > 0) return { ok: false, detail: `missing settings: ${absent.join(', ')}` };
      if (mockRelayer) {
        try {
          await publicClient.request({ method: 'fhevm_relayer_metadata' as never });
        } catch (error) {
          return {
            ok: false,
            detail: `the relayer on RPC_URL does not answer: ${(error as Error).message.split('\n')[0]}`,
          };
        }
      }
      return { ok: true };
    },
    async close() {},
  };
}
