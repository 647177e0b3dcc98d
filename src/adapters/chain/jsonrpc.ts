/**
 * JSON-RPC 2.0 over the embedded chain, for `POST /rpc` (wallets, viem, tools).
 *
 * `handleJsonRpcBody(rpc, body)` turns a parsed request body (one request or a batch) into the response body:
 * a response object, an array of them, or `null` when nothing is to be answered (only notifications: HTTP 204).
 * By default only the methods a wallet needs are served (`eth_*`, `net_*`, `web3_*`, minus the ones that would
 * sign with node-held keys, and the fhEVM relayer methods); `isDevnetRpcMethod` adds the development methods.
 */
import { isRelayerMethod } from '../confidential/relayer-methods.ts';
import { RpcError } from './evm.ts';

/** A JSON-RPC 2.0 request id, echoed in its answer (null for a request that could not be read). */
export type JsonRpcId = string | number | null;

/** A JSON-RPC 2.0 answer carrying a result. */
export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

/** A JSON-RPC 2.0 answer carrying an error (the code and message the node, or this layer, gave). */
export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}

/** One JSON-RPC 2.0 answer, a success or a failure. */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

/** What serves a JSON-RPC method: an EIP-1193 `request`, resolving to the result or throwing an RpcError. */
export type RpcFunction = (args: { method: string; params?: unknown }) => Promise<unknown>;

/** Which methods the JSON-RPC endpoint serves and how large a batch it takes. */
export interface JsonRpcOptions {
  /** Which methods are served; default `isPublicRpcMethod`. */
  allowMethod?: (method: string) => boolean;
  /** Largest batch accepted (default 100). */
  maxBatch?: number;
}

const NODE_SIGNING_METHODS = new Set([
  'eth_sendTransaction',
  'eth_sendTransactionSync',
  'eth_sendUnsignedTransaction',
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
  'personal_sign',
]);

/**
 * Methods a public wallet endpoint serves: reads, `eth_sendRawTransaction` and the fhEVM relayer methods (input
 * proofs, decryptions the ACL allows), nothing that rewrites the chain or reveals a cleartext.
 */
export function isPublicRpcMethod(method: string): boolean {
  if (NODE_SIGNING_METHODS.has(method)) return false;
  if (isRelayerMethod(method)) return true;
  return method.startsWith('eth_') || method.startsWith('net_') || method.startsWith('web3_');
}

/**
 * What `sealpay devnet` serves: the public methods plus the chain's development methods (mining, time, balances),
 * as `hardhat node` and `anvil` do, and node-side signing, which it answers for the test mnemonic's accounts only
 * (`dev-accounts.ts`). Of the `fhevm_*` methods only the relayer's.
 */
export function isDevnetRpcMethod(method: string): boolean {
  if (method.startsWith('fhevm_')) return isRelayerMethod(method);
  return true;
}

function failure(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

function isValidId(id: unknown): id is JsonRpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

async function handleOne(
  rpc: RpcFunction,
  request: unknown,
  allowMethod: (method: string) => boolean,
): Promise<JsonRpcResponse | null> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return failure(null, -32600, 'Invalid Request');
  }
  const { jsonrpc, method, params } = request as Record<string, unknown>;
  const hasId = 'id' in request;
  const rawId = (request as Record<string, unknown>).id;
  const id: JsonRpcId = isValidId(rawId) ? rawId : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || (hasId && !isValidId(rawId))) {
    return failure(id, -32600, 'Invalid Request');
  }
  if (params !== undefined && typeof params !== 'object') return failure(id, -32602, 'Invalid params');
  let response: JsonRpcResponse;
  if (!allowMethod(method)) {
    response = failure(id, -32601, `Method ${method} is not available on this endpoint`);
  } else {
    try {
      const result = await rpc({ method, params: params ?? [] });
      response = { jsonrpc: '2.0', id, result: result === undefined ? null : result };
    } catch (error) {
      if (error instanceof RpcError) response = failure(id, error.code, error.message, error.data);
      else response = failure(id, -32603, error instanceof Error ? error.message : 'Internal error');
    }
  }
  return hasId ? response : null;
}

/** Answers a parsed JSON-RPC body (single or batch). `null` means "no content" (notifications only). */
export async function handleJsonRpcBody(
  rpc: RpcFunction,
  body: unknown,
  options: JsonRpcOptions = {},
): Promise<JsonRpcResponse | JsonRpcResponse[] | null> {
  const allowMethod = options.allowMethod ?? isPublicRpcMethod;
  if (Array.isArray(body)) {
    if (body.length === 0) return failure(null, -32600, 'Invalid Request: empty batch');
    if (body.length > (options.maxBatch ?? 100)) {
      return failure(null, -32600, `Invalid Request: batch larger than ${options.maxBatch ?? 100}`);
    }
    // In order: a batch's writes keep the order the client gave (the chain serializes them anyway).
    const responses: JsonRpcResponse[] = [];
    for (const request of body) {
      const response = await handleOne(rpc, request, allowMethod);
      if (response) responses.push(response);
    }
    return responses.length > 0 ? responses : null;
  }
  return handleOne(rpc, body, allowMethod);
}

/** For a body that failed to parse as JSON. */
export function jsonRpcParseError(): JsonRpcFailure {
  return failure(null, -32700, 'Parse error');
}
