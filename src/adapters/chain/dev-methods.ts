/**
 * The development methods of anvil and `hardhat node` as the journaled chain takes them: one name for each (anvil
 * answers several), and their parameters read as anvil reads them.
 */
import { RpcError } from './evm.ts';

/**
 * Other names of one method (anvil's `anvil_*`, `hardhat_*` and `evm_*` aliases): a request is journaled and
 * executed under the name on the right, which anvil answers too.
 */
const CANONICAL_NAMES: Record<string, string> = {
  anvil_setAutomine: 'evm_setAutomine',
  anvil_setIntervalMining: 'evm_setIntervalMining',
  anvil_getAutomine: 'hardhat_getAutomine',
  anvil_mine: 'hardhat_mine',
  anvil_snapshot: 'evm_snapshot',
  anvil_revert: 'evm_revert',
  anvil_increaseTime: 'evm_increaseTime',
  anvil_setNextBlockTimestamp: 'evm_setNextBlockTimestamp',
  anvil_setBalance: 'hardhat_setBalance',
  anvil_setCode: 'hardhat_setCode',
  anvil_setNonce: 'hardhat_setNonce',
  anvil_setStorageAt: 'hardhat_setStorageAt',
  anvil_impersonateAccount: 'hardhat_impersonateAccount',
  anvil_stopImpersonatingAccount: 'hardhat_stopImpersonatingAccount',
  anvil_setCoinbase: 'hardhat_setCoinbase',
  anvil_setMinGasPrice: 'hardhat_setMinGasPrice',
  anvil_setNextBlockBaseFeePerGas: 'hardhat_setNextBlockBaseFeePerGas',
  anvil_dropTransaction: 'hardhat_dropTransaction',
  hardhat_dropAllTransactions: 'anvil_dropAllTransactions',
};

/** The one name a development method is journaled and executed under (its alias resolved, else itself). */
export function canonicalMethod(method: string): string {
  return CANONICAL_NAMES[method] ?? method;
}

/** The JSON-RPC params as an array (missing means none); anything else is an invalid-params RpcError. */
export function asParams(params: unknown): unknown[] {
  if (params === undefined || params === null) return [];
  if (Array.isArray(params)) return params;
  throw new RpcError(-32602, 'Invalid params: expected an array');
}

/**
 * A non-negative safe integer from a number or a decimal/hex string, as anvil reads it; else an invalid-
 * params RpcError.
 */
export function toNumber(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) {
    const parsed = BigInt(value);
    if (parsed <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(parsed);
  }
  if (typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER))
    return Number(value);
  throw new RpcError(-32602, `Invalid params: ${what} must be a quantity`);
}

/** A boolean param; anything else is an invalid-params RpcError naming `what`. */
export function toBoolean(value: unknown, what: string): boolean {
  if (typeof value === 'boolean') return value;
  throw new RpcError(-32602, `Invalid params: ${what} must be a boolean`);
}

/**
 * `evm_mine`'s parameter: nothing, a timestamp, or `{timestamp, blocks?}` (anvil's `MineOptions`, whose object form
 * needs the `timestamp` key, null for none).
 */
export function mineOptions(params: unknown[]): { timestamp: number | null; blocks: number } {
  const [options] = params;
  if (options === undefined || options === null) return { timestamp: null, blocks: 1 };
  if (typeof options === 'object' && !Array.isArray(options)) {
    if (!('timestamp' in options))
      throw new RpcError(-32602, 'Invalid params: evm_mine options need a timestamp (or null)');
    const { timestamp, blocks } = options as { timestamp?: unknown; blocks?: unknown };
    return {
      timestamp: timestamp === undefined || timestamp === null ? null : toNumber(timestamp, 'timestamp'),
      blocks: blocks === undefined || blocks === null ? 1 : toNumber(blocks, 'blocks'),
    };
  }
  return { timestamp: toNumber(options, 'timestamp'), blocks: 1 };
}

/**
 * `anvil_reorg`'s depth: anvil takes its options as `[depth, txBlockPairs]` or `{depth, tx_block_pairs}` (and checks
 * the pairs itself).
 */
export function reorgDepth(params: unknown): number {
  if (Array.isArray(params)) return toNumber(params[0], 'depth');
  if (typeof params === 'object' && params !== null && 'depth' in params) {
    return toNumber((params as { depth: unknown }).depth, 'depth');
  }
  throw new RpcError(-32602, 'Invalid params: anvil_reorg takes [depth, txBlockPairs]');
}

/** A snapshot id as anvil answers it (a quantity, from 0x0). */
export function toQuantity(value: number): string {
  return `0x${value.toString(16)}`;
}
