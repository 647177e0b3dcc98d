import type { Network } from '../../adapters/chain/types.ts';
import type { Deps } from '../../deps.ts';
import { AppError, type ErrorCode } from '../../lib/errors.ts';

/** The chain of this process, or `503 service_unavailable` where it has none. */
export function requireNetwork(deps: Deps): Network {
  if (!deps.network) throw new AppError('service_unavailable', 'The chain is not available in this process.');
  return deps.network;
}

/**
 * The refusals of `assertMoneyConfigured`, as routes document them. Not `requireNetwork`'s `service_unavailable`:
 * every process that serves the API has a chain.
 */
export const MONEY_CONFIGURATION_ERRORS = [
  'fhe_credentials_missing',
  'configuration_missing',
] as const satisfies readonly ErrorCode[];

/**
 * What a route that reads the chain before it answers can fail with: `503 service_unavailable` (with `Retry-After`)
 * while no RPC provider answers (`providers.ts`), or the relayer cannot be reached; `configuration_missing` where
 * a setting the read needs is absent (`RPC_URL`, a contract address).
 */
export const CHAIN_READ_ERRORS = [
  'service_unavailable',
  'configuration_missing',
] as const satisfies readonly ErrorCode[];

/** A 503 naming what is missing, checked before anything is queued (so no transaction row exists). */
export function assertMoneyConfigured(deps: Deps): void {
  const network = requireNetwork(deps);
  if (network.rail.kind === 'fhe' && !deps.config.zamaApiKey) {
    throw new AppError(
      'fhe_credentials_missing',
      'Confidential operations are not configured: ZAMA_API_KEY is not set.',
    );
  }
  // The remote network's getters throw a 503 naming the variable when a setting is missing.
  void network.operator.address;
  void network.contracts.stablecoin;
  void network.contracts.confidentialToken;
}
