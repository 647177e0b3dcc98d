/**
 * Signing and sending transactions from a key the service holds (the operator or a custodial wallet).
 *
 * Everything goes through `network.publicClient` (on the embedded network its transport is the journaled chain,
 * so whatever is broadcast this way is journaled). For crash safety the worker should:
 *   1. `signTransaction(...)` → store `{serialized, hash, nonce}`;
 *   2. `broadcastTransaction(network, serialized)` (safe to repeat with the same bytes);
 *   3. `waitForReceipt(network, hash)`.
 * `sendTransaction` does the three in a row for callers that need no such care (tests, setup).
 */
import {
  type Address,
  type Hex,
  keccak256,
  type PublicClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Chain as ViemChain,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface ChainAccess {
  readonly publicClient: PublicClient;
  readonly chain: ViemChain;
}

export interface TransactionParams {
  privateKey: Hex;
  /** Omit to deploy a contract (`data` is then its creation code). */
  to?: Address;
  data?: Hex;
  value?: bigint;
  /** Gas limit; estimated (+20 %) when omitted. */
  gas?: bigint;
  /** Nonce; the account's pending nonce when omitted (the worker passes the one it allocated). */
  nonce?: number;
}

export interface SignedTransaction {
  from: Address;
  nonce: number;
  hash: Hex;
  /** The signed raw transaction, to store before broadcasting and to rebroadcast after a crash. */
  serialized: Hex;
}

/** Gas estimate margin: fhEVM calls vary a little with the state they find (the Hardhat plugin uses 120 %). */
const GAS_MARGIN_PERCENT = 120n;

export async function signTransaction(
  network: ChainAccess,
  params: TransactionParams,
): Promise<SignedTransaction> {
  const account = privateKeyToAccount(params.privateKey);
  const client = network.publicClient;
  const nonce =
    params.nonce ?? (await client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
  const gas =
    params.gas ??
    ((await client.estimateGas({
      account: account.address,
      to: params.to,
      data: params.data,
      value: params.value,
    })) *
      GAS_MARGIN_PERCENT) /
      100n;
  const fees = await client.estimateFeesPerGas();
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

export async function waitForReceipt(
  network: ChainAccess,
  hash: Hex,
  options: { timeoutMs?: number; pollMs?: number } = {},
): Promise<TransactionReceipt> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const pollMs = options.pollMs ?? (network.chain.id === 31337 ? 25 : 1000);
  for (;;) {
    try {
      return await network.publicClient.getTransactionReceipt({ hash });
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`No receipt for ${hash} after ${options.timeoutMs ?? 60_000} ms`);
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
