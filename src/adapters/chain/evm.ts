/**
 * What the embedded network needs of an EVM engine, whichever runs it (anvil for every new data directory, EDR for
 * those made before it): EIP-1193 requests, the chain's parameters, and the JSON-RPC error type.
 */

export const EMBEDDED_CHAIN_ID = 31337;
export const EMBEDDED_HARDFORK = 'Cancun';
export const EMBEDDED_BLOCK_GAS_LIMIT = 60_000_000n;
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

export interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}
