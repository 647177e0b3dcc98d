/**
 * A network whose JSON-RPC requests pass through `fault` first: it throws for a request that is to fail (before
 * the node saw it), or returns to let it through. The worker's view of the chain in the fault tests.
 */
import { createPublicClient, custom, type PublicClient } from 'viem';
import type { Network } from '../../src/adapters/chain/types.ts';

export function networkWithFault(
  base: Network,
  fault: (request: { method: string; params?: unknown }) => void,
): Network {
  const publicClient = createPublicClient({
    chain: base.chain,
    pollingInterval: 50,
    transport: custom(
      {
        async request({ method, params }: { method: string; params?: unknown }) {
          fault({ method, params });
          return base.publicClient.request({ method, params } as never);
        },
      },
      { retryCount: 0 },
    ),
  }) as PublicClient;
  return { ...base, publicClient };
}
