/**
 * The chain adapter's entry point: `createNetwork(config)` picks the embedded network (`local`) or one reached over
 * JSON-RPC (`devnet`, `sepolia`, `mainnet`: one code path, the relayer differs).
 */
import { createEmbeddedNetwork, type Logger } from './embedded.ts';
import type { ProviderObserver } from './providers.ts';
import { createRemoteNetwork } from './remote.ts';
import type { ContractAddresses, Network, NetworkName } from './types.ts';

export * from '../confidential/helpers.ts';
export * from './contracts.ts';
export type { EmbeddedNetwork, EmbeddedNetworkOptions, Logger } from './embedded.ts';
export { createEmbeddedNetwork, embeddedChain } from './embedded.ts';
export { handleJsonRpcBody, isPublicRpcMethod, jsonRpcParseError } from './jsonrpc.ts';
export type { ProviderFailure, ProviderName, ProviderObserver } from './providers.ts';
export { createProviderList, splitRpcUrls } from './providers.ts';
export { createRemoteNetwork, devnetChain, EXPLORERS } from './remote.ts';
export * from './tx.ts';
export type { ContractAddresses, Network, NetworkName } from './types.ts';

/**
 * How to reach the chain, from the configuration: `createNetwork` picks the embedded network or a remote
 * one from it.
 */
export interface NetworkConfig {
  network: NetworkName;
  /** Where the embedded network keeps its key, state and journal (`{dataDir}/chain`). */
  dataDir: string;
  /** One URL or several, comma-separated, in order of preference. */
  rpcUrl?: string;
  rpcTimeoutMs?: number;
  rpcObserver?: ProviderObserver;
  zamaApiKey?: string;
  operatorPrivateKey?: string;
  contracts?: Partial<ContractAddresses>;
  transferBatcher?: string;
  logger?: Logger;
}

/**
 * The chain of this deployment, chosen once at start: the embedded network (EDR, journal, fhEVM mock) on `local`,
 * JSON-RPC (`createRemoteNetwork`) on `devnet`, `sepolia` and `mainnet`. `close()` it on shutdown.
 */
export async function createNetwork(config: NetworkConfig): Promise<Network> {
  if (config.network === 'local') {
    return createEmbeddedNetwork({
      dataDir: config.dataDir,
      ...(config.logger ? { logger: config.logger } : {}),
    });
  }
  return createRemoteNetwork({
    network: config.network,
    ...(config.rpcUrl !== undefined ? { rpcUrl: config.rpcUrl } : {}),
    ...(config.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: config.rpcTimeoutMs } : {}),
    ...(config.rpcObserver ? { rpcObserver: config.rpcObserver } : {}),
    ...(config.zamaApiKey !== undefined ? { zamaApiKey: config.zamaApiKey } : {}),
    ...(config.operatorPrivateKey !== undefined ? { operatorPrivateKey: config.operatorPrivateKey } : {}),
    contracts: config.contracts ?? {},
    ...(config.transferBatcher !== undefined ? { transferBatcher: config.transferBatcher } : {}),
  });
}
