/**
 * How `sealpay devnet` answers a transaction or a call that fails: as `hardhat node` does, since it names itself a
 * Hardhat node (`node-identity.ts`) and tools written for Hardhat rely on the answer.
 *
 * `@nomicfoundation/hardhat-ethers` takes a node that answers `hardhat_metadata` for a Hardhat node and then sends
 * every transaction with a fixed gas limit, without estimating it first. A reverting transaction is then only seen
 * as one if the send itself fails, as on Hardhat: with automine, `eth_sendTransaction` and `eth_sendRawTransaction`
 * mine the transaction (it is in a block, reverted, its nonce used) and answer a JSON-RPC error carrying its hash
 * and its return data; `hardhat-chai-matchers` (`revertedWith`, `revertedWithCustomError`, `revertedWithPanic`)
 * read that data. Anvil, underneath, answers the hash. `eth_call` and `eth_estimateGas` answer Hardhat's error too.
 *
 * Hardhat's answers (Hardhat 2.28, compared with a real `hardhat node` in hardhat-reverts.test.ts), for a contract
 * Hardhat has no artifacts of (the devnet has none):
 * - a revert: code -32603, message `Error: VM Exception while processing transaction: reverted with reason string
 *   '…'` (Error(string)), `… reverted with panic code 0x12 (Division or modulo division by zero)` (Panic(uint256)),
 *   `… reverted with an unrecognized custom error (return data: 0x…)`, or `Error: Transaction reverted without a
 *   reason string` (no return data); `data` is `{message, txHash, data}` for a send, `{message, data}` for a call;
 * - an invalid opcode: the same, with `… invalid opcode` and data `0x`;
 * - out of gas: code -32000, `Transaction ran out of gas`, `data` `{message, txHash, data: '0x'}` (`txHash` null for
 *   a call).
 * Other failures anvil reports (a halt of another kind, a refusal before execution) are answered as anvil does.
 */
import { decodeAbiParameters, type Hex } from 'viem';
import { RpcError } from './evm.ts';
import type { RpcFunction } from './jsonrpc.ts';

/** How a transaction or a call failed, as far as Hardhat's answer depends on it. */
export type ExecutionFailure =
  | { kind: 'revert'; returnData: Hex }
  | { kind: 'invalid-opcode' }
  | { kind: 'out-of-gas' };

/** The gas limit `hardhat node` gives a node-signed transaction that names none: the block's, capped by EIP-7825. */
export const HARDHAT_TX_GAS_CAP = 16_777_216n;

const ERROR_SELECTOR = '0x08c379a0';
const PANIC_SELECTOR = '0x4e487b71';
const VM_EXCEPTION = 'VM Exception while processing transaction';

/** Hardhat's words for the panic codes solc emits (`panicErrorCodeToReason`). */
const PANIC_REASONS: Record<string, string> = {
  '1': 'Assertion error',
  '11': 'Arithmetic operation overflowed outside of an unchecked block',
  '12': 'Division or modulo division by zero',
  '21': 'Tried to convert a value into an enum, but the value was too big or negative',
  '22': 'Incorrectly encoded storage byte array',
  '31': '.pop() was called on an empty array',
  '32': 'Array accessed at an out-of-bounds or negative index',
  '41': 'Too much memory was allocated, or an array was created that is too large',
  '51': 'Called a zero-initialized variable of internal function type',
};

/** The one argument of Error(string) or Panic(uint256) return data; null when it does not decode as that type. */
function decodedArgument(type: 'string' | 'uint256', returnData: Hex): unknown {
  try {
    return decodeAbiParameters([{ type }], `0x${returnData.slice(10)}`)[0];
  } catch {
    return null;
  }
}

/** What Hardhat says of a revert with this return data (without the `Error: ` its answer puts first). */
function revertMessage(returnData: Hex): string | null {
  const selector = returnData.slice(0, 10).toLowerCase();
  if (selector === ERROR_SELECTOR) {
    const reason = decodedArgument('string', returnData);
    return typeof reason === 'string' ? `${VM_EXCEPTION}: reverted with reason string '${reason}'` : null;
  }
  const panic = selector === PANIC_SELECTOR ? decodedArgument('uint256', returnData) : null;
  if (typeof panic === 'bigint') {
    const code = panic.toString(16);
    const reason = PANIC_REASONS[code];
    return reason
      ? `${VM_EXCEPTION}: reverted with panic code 0x${code} (${reason})`
      : `${VM_EXCEPTION}: reverted with unknown panic code 0x${code}`;
  }
  if (returnData === '0x') return 'Transaction reverted without a reason string';
  return `${VM_EXCEPTION}: reverted with an unrecognized custom error (return data: ${returnData.toLowerCase()})`;
}

/**
 * Hardhat's JSON-RPC error for a failed execution: of a transaction mined as failed (`txHash` its hash) or of a call
 * or estimate (`txHash` undefined).
 */
export function hardhatExecutionError(failure: ExecutionFailure, txHash?: Hex): RpcError {
  if (failure.kind === 'out-of-gas') {
    const message = 'Transaction ran out of gas';
    return new RpcError(-32000, message, { message, txHash: txHash ?? null, data: '0x' });
  }
  const returnData = failure.kind === 'revert' ? failure.returnData : '0x';
  const said =
    failure.kind === 'invalid-opcode' ? `${VM_EXCEPTION}: invalid opcode` : revertMessage(returnData);
  if (said === null) {
    // Error(string)'s selector over data that is not a string: Hardhat answers the decoding failure alone.
    const message = `Error: ${VM_EXCEPTION}: Expected return data to contain a valid string`;
    return new RpcError(-32603, message, { message });
  }
  const message = `Error: ${said}`;
  return new RpcError(
    -32603,
    message,
    txHash === undefined ? { message, data: returnData } : { message, txHash, data: returnData },
  );
}

const isHex = (value: unknown): value is Hex => typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value);

/** Anvil's halts, as its `eth_call`/`eth_estimateGas` name them (`EVM error <halt>`), that Hardhat answers. */
function haltOf(name: string): ExecutionFailure | null {
  if (/OOG$|^OutOfGas$/.test(name)) return { kind: 'out-of-gas' };
  if (name === 'InvalidFEOpcode' || name === 'OpcodeNotFound') return { kind: 'invalid-opcode' };
  return null;
}

/**
 * How a failed `eth_call` or `eth_estimateGas` failed, from anvil's answer: a revert (code 3, its return data in
 * `data`), a halt (`EVM error …`) or an estimate past the gas cap (-32003); null for any other error.
 */
export function failureOfCallError(error: unknown): ExecutionFailure | null {
  if (!(error instanceof RpcError)) return null;
  if (error.code === 3) return { kind: 'revert', returnData: isHex(error.data) ? error.data : '0x' };
  if (error.code === -32003) return { kind: 'out-of-gas' };
  const halt = /^EVM error (\w+)$/.exec(error.message);
  return halt?.[1] ? haltOf(halt[1]) : null;
}

/** The top call of a `callTracer` trace: its return data and the tracer's (geth's) error words. */
interface TopCall {
  output?: string;
  error?: string;
}

/** How a transaction mined as failed failed, from its `callTracer` trace. */
export function failureOfTrace(trace: TopCall): ExecutionFailure {
  const error = trace.error ?? '';
  if (error.startsWith('out of gas')) return { kind: 'out-of-gas' };
  if (error.startsWith('invalid opcode')) return { kind: 'invalid-opcode' };
  return { kind: 'revert', returnData: isHex(trace.output) ? trace.output : '0x' };
}

interface Receipt {
  status?: string;
}

/**
 * A transaction sent as Hardhat answers it: with automine, once mined, a failed one is Hardhat's error (it stays
 * mined, as on Hardhat); with automine off, or while it waits in the pool (a nonce gap), its hash.
 */
async function sendAsHardhat(
  next: RpcFunction,
  args: { method: string; params?: unknown },
): Promise<unknown> {
  const automine = (await next({ method: 'hardhat_getAutomine' })) === true;
  const hash = await next(args);
  if (!automine || !isHex(hash)) return hash;
  // With automine the chain mines the transaction before it answers (journaled-chain.ts): no wait.
  const receipt = (await next({ method: 'eth_getTransactionReceipt', params: [hash] })) as Receipt | null;
  if (receipt?.status !== '0x0') return hash;
  const trace = (await next({
    method: 'debug_traceTransaction',
    params: [hash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }],
  }).catch(() => ({}))) as TopCall;
  // No trace (a data directory on the EDR engine traces otherwise): still the failed send's error, without data.
  throw hardhatExecutionError(failureOfTrace(trace), hash);
}

/**
 * Wraps the devnet's JSON-RPC function so that failed executions are answered as `hardhat node` answers them (see
 * the top of this file): sends (`eth_sendTransaction`, `eth_sendRawTransaction`), `eth_call` and `eth_estimateGas`.
 */
export function withHardhatReverts(next: RpcFunction): RpcFunction {
  return async (args) => {
    switch (args.method) {
      case 'eth_sendTransaction':
      case 'eth_sendRawTransaction':
        return sendAsHardhat(next, args);
      case 'eth_call':
      case 'eth_estimateGas':
        try {
          return await next(args);
        } catch (error) {
          const failure = failureOfCallError(error);
          throw failure ? hardhatExecutionError(failure) : error;
        }
      default:
        return next(args);
    }
  };
}
