/**
 * What the embedded network needs of an EVM engine, whichever runs it (anvil for every new data directory, EDR for
 * those made before it): EIP-1193 requests, the chain's parameters, and the JSON-RPC error type.
 */

/** Chain id of the embedded network and devnet: 31337, hardhat's and anvil's, which wallets and plugins know. */
export const EMBEDDED_CHAIN_ID = 31337;
/** The hardfork the embedded EVM runs, whichever engine it is. */
export const EMBEDDED_HARDFORK = 'Cancun';
/** Gas limit of each embedded block, set at genesis. */
export const EMBEDDED_BLOCK_GAS_LIMIT = 60_000_000n;
/** The base fee at genesis (1 gwei): fixed, so every start of a data directory makes the same genesis. */
export const INITIAL_BASE_FEE = 1_000_000_000n;

/** An error answered by the JSON-RPC layer (code and message as the node gave them). */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
}

/** An EIP-1193 provider, reduced to the one method the embedded network uses: `request`. */
export interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}
