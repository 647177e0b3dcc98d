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
 * `isRevert`, `isInsufficientFunds`), and from the shape of a Hardhat node's answer, never from their messages.
 */
import {
  type Address,
  BaseError,
  ExecutionRevertedError,
  FeeCapTooLowError,
  type Hex,
  InsufficientFundsError,
  InvalidInputRpcError,
  InvalidParamsRpcError,
  keccak256,
  type PublicClient,
  RpcRequestError,
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

/** The EIP-1559 fee caps a transaction is signed with. */
export interface FeeEstimate {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What to sign: the key, the call (or creation code) and its gas, nonce and fees. */
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

/** A transaction signed locally: its sender, nonce, hash and the raw bytes to broadcast. */
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

/** How often a receipt is looked for: 25 ms on the embedded chain (it mines at once), else a second. */
export function receiptPollMs(network: ChainAccess): number {
  return network.chain.id === 31337 ? 25 : 1000;
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
  const pollMs = options.pollMs ?? receiptPollMs(network);
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

/**
 * A Hardhat node's answer for a call that fails, which viem types as nothing in particular: a JSON-RPC error (-32603,
 * or -32000 when out of gas) whose `data` carries the return data. `hardhat node` answers so, and `sealpay devnet`,
 * which answers as one (hardhat-reverts.ts).
 */
function isHardhatExecutionError(cause: unknown): boolean {
  if (!(cause instanceof RpcRequestError) || (cause.code !== -32603 && cause.code !== -32000)) return false;
  const data = cause.data as { data?: unknown } | null | undefined;
  return typeof data?.data === 'string' && data.data.startsWith('0x');
}

/** The call would revert (an estimate or a simulation said so, as geth and anvil or as Hardhat words it). */
export function isRevert(error: unknown): boolean {
  return (
    causedBy(error, [ExecutionRevertedError]) ||
    (error instanceof BaseError && error.walk(isHardhatExecutionError) !== null)
  );
}

/**
 * What nodes answer when a transaction is refused for its price alone: a fee cap below the base fee, "underpriced"
 * (a full pool, a floor) and "replacement transaction underpriced", a tip below the node's minimum (geth, anvil,
 * reth, erigon, nethermind, besu). viem types only the first (`FeeCapTooLowError`, and only from `sendTransaction`,
 * never from `sendRawTransaction`), so the node's own words are read here and nowhere else.
 */
const PRICE_REFUSAL =
  /underpriced|less than (the )?block base ?fee|fee ?cap (is )?too low|fee ?too ?low|pricing is too low|gas[ _]price[ _](is )?(too[ _]low|below)|tip (needed|below|too low)|priority fee (is )?(too low|below)|below (the )?minimum/i;

/**
 * The node refused the transaction for its price only (see `PRICE_REFUSAL`): never a failure of what it does, it is
 * signed again higher at the same nonce.
 */
export function isPriceRefusal(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return (
    error.walk((cause) => {
      if (cause instanceof FeeCapTooLowError) return true;
      if (!(cause instanceof Error)) return false;
      const details = cause instanceof BaseError ? cause.details : '';
      return PRICE_REFUSAL.test(details) || PRICE_REFUSAL.test(cause.message);
    }) !== null
  );
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** What the chain asks now: the next block's base fee and the priority fee the node suggests. */
export interface FeeQuote {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Asks the chain for the next block's base fee (pending or latest, the higher) and the node's priority fee. */
export async function quoteFees(network: ChainAccess): Promise<FeeQuote> {
  const client = network.publicClient;
  // The pending block carries the next block's base fee where the node has one (geth, anvil); else the latest.
  const [pending, latest, maxPriorityFeePerGas] = await Promise.all([
    client.getBlock({ blockTag: 'pending' }).catch(() => null),
    client.getBlock({ blockTag: 'latest' }),
    client.estimateMaxPriorityFeePerGas(),
  ]);
  const baseFeePerGas = max(pending?.baseFeePerGas ?? 0n, latest.baseFeePerGas ?? 0n);
  return { baseFeePerGas, maxPriorityFeePerGas };
}

/** The fee policy: the base fee × `multiplierPercent`/100 plus the tip, never above `maxFeePerGas` (wei). */
export interface FeePolicy {
  multiplierPercent: bigint;
  maxFeePerGas: bigint;
}

function policyFee(quote: FeeQuote, policy: FeePolicy, tip: bigint): bigint {
  return (quote.baseFeePerGas * policy.multiplierPercent) / 100n + tip;
}

/** The fees of a first signature: the policy's, capped. */
export function initialFees(quote: FeeQuote, policy: FeePolicy): FeeEstimate {
  const maxFeePerGas = min(policyFee(quote, policy, quote.maxPriorityFeePerGas), policy.maxFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas: min(quote.maxPriorityFeePerGas, maxFeePerGas) };
}

/** At least 12.5 % more (rounded up, and at least 1 wei more): what every node takes as a replacement. */
export function bumped(fee: bigint): bigint {
  return fee + max(1n, (fee * 125n + 999n) / 1000n);
}

/**
 * The fees of a replacement of an attempt signed at `previous`: each raised by at least 12.5 %, the max fee to at
 * least what the policy asks now, and doubled after a price refusal (the bytes were not taken, so the pool's
 * replacement rule does not bind, and the node said the price is short). Null at the cap: no replacement can raise
 * both fees by 12.5 % any more.
 */
export function replacementFees(
  previous: FeeEstimate,
  quote: FeeQuote,
  policy: FeePolicy,
  options: { refused?: boolean } = {},
): FeeEstimate | null {
  const tip = max(bumped(previous.maxPriorityFeePerGas), quote.maxPriorityFeePerGas);
  let maxFeePerGas = max(bumped(previous.maxFeePerGas), policyFee(quote, policy, tip));
  if (options.refused) maxFeePerGas = max(maxFeePerGas, previous.maxFeePerGas * 2n);
  maxFeePerGas = min(maxFeePerGas, policy.maxFeePerGas);
  const maxPriorityFeePerGas = min(tip, maxFeePerGas);
  if (
    maxFeePerGas < bumped(previous.maxFeePerGas) ||
    maxPriorityFeePerGas < bumped(previous.maxPriorityFeePerGas)
  ) {
    return null;
  }
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** The sender cannot pay for the gas (and value) of the call. */
export function isInsufficientFunds(error: unknown): boolean {
  return causedBy(error, [InsufficientFundsError]);
}
