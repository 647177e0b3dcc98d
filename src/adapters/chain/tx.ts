/**
 * Signing and sending transactions from a key the service holds (the operator or a custodial wallet): the one
 * signing path of the service, the worker's included.
 *
 * Everything goes through `network.publicClient` (on the embedded network its transport is the journaled chain,
 * so whatever is broadcast this way is journaled). For crash safety the worker:
 *   1. `signTransaction(...)` with the nonce it allocated → stores `{serialized, hash, nonce}`;
 *   2. `broadcastTransaction(network, serialized)` (safe to repeat with the same bytes);
 *   3. `waitForReceipt(network, hash)`.
 * `sendTransaction` does the three in a row for callers that need no such care (tests, setup).
 *
 * What the chain answered is read from viem's typed errors, walked through their causes (`isRefusedByNode`,
 * `isRevert`, `isInsufficientFunds`), never from their messages.
 */
import {
  type Address,
  BaseError,
  ExecutionRevertedError,
  type Hex,
  InsufficientFundsError,
  InvalidInputRpcError,
  InvalidParamsRpcError,
  keccak256,
  type PublicClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  TransactionRejectedRpcError,
  type Chain as ViemChain,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** A chain to sign for and send to: a `Network`, or the bare client and chain (the devnet, tests). */
export interface ChainAccess {
  readonly publicClient: PublicClient;
  readonly chain: ViemChain;
}

export interface FeeEstimate {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface TransactionParams {
  privateKey: Hex;
  /** Omit to deploy a contract (`data` is then its creation code). */
  to?: Address;
  data?: Hex;
  value?: bigint;
  /** Gas limit; estimated (plus GAS_MARGIN_PERCENT) when omitted. */
  gas?: bigint;
  /** Nonce; the account's pending nonce when omitted (the worker passes the one it allocated). */
  nonce?: number;
  /** EIP-1559 fees; estimated when omitted (the worker passes its cached estimate). */
  fees?: FeeEstimate;
}

export interface SignedTransaction {
  from: Address;
  nonce: number;
  hash: Hex;
  /** The signed raw transaction, to store before broadcasting and to rebroadcast after a crash. */
  serialized: Hex;
}

/**
 * Gas limit over the estimate: fhEVM calls vary a little with the state they find (the Hardhat plugin uses 120 %;
 * the worker has always signed with 130 %, and so does everything now).
 */
export const GAS_MARGIN_PERCENT = 130n;

/** The gas limit of a call: the chain's estimate plus the margin. Throws viem's estimate error as it is. */
export async function estimateGasLimit(
  network: ChainAccess,
  from: Address,
  call: { to?: Address; data?: Hex; value?: bigint },
): Promise<bigint> {
  const estimate = await network.publicClient.estimateGas({
    account: from,
    to: call.to,
    data: call.data,
    value: call.value,
  });
  return (estimate * GAS_MARGIN_PERCENT) / 100n;
}

/** Signs an EIP-1559 transaction with `privateKey`; what is not given (nonce, gas, fees) is asked of the chain. */
export async function signTransaction(
  network: ChainAccess,
  params: TransactionParams,
): Promise<SignedTransaction> {
  const account = privateKeyToAccount(params.privateKey);
  const client = network.publicClient;
  const nonce =
    params.nonce ?? (await client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
  const gas = params.gas ?? (await estimateGasLimit(network, account.address, params));
  const fees = params.fees ?? (await client.estimateFeesPerGas());
  const serialized = await account.signTransaction({
    type: 'eip1559',
    chainId: network.chain.id,
    nonce,
    gas,
    to: params.to ?? null,
    data: params.data,
    value: params.value ?? 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  return { from: account.address, nonce, hash: keccak256(serialized), serialized };
}

/** Broadcasts signed bytes; a repeat of bytes the chain already has is not an error. */
export async function broadcastTransaction(network: ChainAccess, serialized: Hex): Promise<Hex> {
  const hash = keccak256(serialized);
  try {
    return await network.publicClient.sendRawTransaction({ serializedTransaction: serialized });
  } catch (error) {
    // Already mined or already in the pool: the same bytes, so the same transaction.
    const known = await network.publicClient.getTransaction({ hash }).catch(() => null);
    if (known) return hash;
    throw error;
  }
}

/**
 * The receipt of exactly this hash, polled every `pollMs` (25 ms on the embedded chain) for up to `timeoutMs`; an
 * RPC failure is thrown at once (the worker retries the step), only a missing receipt is waited out.
 *
 * Not viem's `waitForTransactionReceipt`, which is not the same wait: after a first look it looks again only when a
 * new block appears, and it swallows that first look's failure. The embedded chain mines only when a transaction
 * arrives, so a wait whose first look failed (a transient RPC fault) waits its whole timeout for a block that may
 * not come; and concurrent waits for one hash share a poller that the first wait's timeout stops. Under the
 * injected-fault test (test/faults/injected.test.ts, seeds 1759443331 and 1198458756) rows stalled 30 s a wait
 * and the run did not finish; with this loop it finishes in about 15 s.
 */
export async function waitForReceipt(
  network: ChainAccess,
  hash: Hex,
  options: { timeoutMs?: number; pollMs?: number } = {},
): Promise<TransactionReceipt> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  const pollMs = options.pollMs ?? (network.chain.id === 31337 ? 25 : 1000);
  for (;;) {
    try {
      return await network.publicClient.getTransactionReceipt({ hash });
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
    if (Date.now() > deadline) throw new Error(`No receipt for ${hash} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Signs, broadcasts and waits. Returns the receipt whatever its status (check `receipt.status`). */
export async function sendTransaction(
  network: ChainAccess,
  params: TransactionParams,
): Promise<TransactionReceipt> {
  const signed = await signTransaction(network, params);
  await broadcastTransaction(network, signed.serialized);
  return waitForReceipt(network, signed.hash);
}

/** As `sendTransaction`, but a reverted transaction is an error. */
export async function sendTransactionOrThrow(
  network: ChainAccess,
  params: TransactionParams,
): Promise<TransactionReceipt> {
  const receipt = await sendTransaction(network, params);
  if (receipt.status !== 'success') throw new Error(`Transaction ${receipt.transactionHash} reverted`);
  return receipt;
}

function causedBy(error: unknown, kinds: readonly (abstract new (...args: never[]) => Error)[]): boolean {
  return (
    error instanceof BaseError && error.walk((cause) => kinds.some((kind) => cause instanceof kind)) !== null
  );
}

/**
 * The node refused the transaction itself (its nonce, funds, gas, fees, signature or chain): the same bytes can
 * never be accepted, unlike after a transport or server failure, which is worth retrying.
 */
export function isRefusedByNode(error: unknown): boolean {
  return causedBy(error, [InvalidInputRpcError, TransactionRejectedRpcError, InvalidParamsRpcError]);
}

/** The call would revert (an estimate or a simulation said so). */
export function isRevert(error: unknown): boolean {
  return causedBy(error, [ExecutionRevertedError]);
}

/** The sender cannot pay for the gas (and value) of the call. */
export function isInsufficientFunds(error: unknown): boolean {
  return causedBy(error, [InsufficientFundsError]);
}
