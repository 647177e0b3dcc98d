/**
 * Helpers over a `Network` that every module uses: balances, call data of the token and vault operations, and
 * verification of confidential amounts.
 *
 * Silent zero: an ERC-7984 transfer that the sender cannot cover does not revert, it moves an encrypted zero.
 * A mined, successful receipt therefore proves nothing about the amount: decrypt the transferred handle of the
 * `ConfidentialTransfer` event (the token grants the sender and the recipient ACL on it) and compare.
 */
import {
  type Address,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  keccak256,
  parseEventLogs,
  type TransactionReceipt,
  toHex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  confidentialTokenAbi,
  letterVaultAbi,
  stablecoinAbi,
  transferBatcherAbi,
} from '../chain/contracts.ts';
import type { EncryptedAmount, Network } from '../chain/types.ts';

type NetworkReads = Pick<Network, 'publicClient' | 'contracts'>;

// ---------------------------------------------------------------------------------------------------------------
// Balances. Async functions on purpose: a missing setting throws from a getter (`network.contracts.stablecoin`),
// and inside an async function that is a rejection, never a synchronous throw that leaves a sibling promise of a
// `Promise.all` rejected and unhandled (which once took the process down).

/** Gas currency balance (wei, 18 decimals). */
export async function getGasBalance(
  network: Pick<Network, 'publicClient'>,
  address: Address,
): Promise<bigint> {
  return network.publicClient.getBalance({ address });
}

/** Public stablecoin balance (base units, 6 decimals). */
export async function getStablecoinBalance(network: NetworkReads, address: Address): Promise<bigint> {
  return network.publicClient.readContract({
    address: network.contracts.stablecoin,
    abi: stablecoinAbi,
    functionName: 'balanceOf',
    args: [address],
  });
}

/** The handle of an address's confidential balance (the zero handle when it never held cSTABLE). */
export async function getConfidentialBalanceHandle(network: NetworkReads, address: Address): Promise<Hex> {
  return network.publicClient.readContract({
    address: network.contracts.confidentialToken,
    abi: confidentialTokenAbi,
    functionName: 'confidentialBalanceOf',
    args: [address],
  });
}

/** The confidential balance of the key's address, decrypted with that key (base units). */
export async function decryptConfidentialBalance(
  network: NetworkReads & Pick<Network, 'rail'>,
  privateKey: Hex,
): Promise<bigint> {
  const address = privateKeyToAccount(privateKey).address;
  const handle = await getConfidentialBalanceHandle(network, address);
  return network.rail.userDecrypt({ handle, contract: network.contracts.confidentialToken, privateKey });
}

// ---------------------------------------------------------------------------------------------------------------
// Call data

/** The vault's letter id for a service letter id (any string, e.g. a cuid): keccak256 of its UTF-8 bytes. */
export function letterIdToBytes32(letterId: string): Hex {
  return keccak256(toHex(letterId));
}

/** `stablecoin.mint(to, amount)`, operator only (faucet). */
export function encodeMint(to: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: stablecoinAbi, functionName: 'mint', args: [to, amount] });
}

/** `stablecoin.approve(spender, amount)` (before `wrap`, the token pulls the public amount). */
export function encodeApprove(spender: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: stablecoinAbi, functionName: 'approve', args: [spender, amount] });
}

/** `stablecoin.transfer(to, amount)`. */
export function encodeStablecoinTransfer(to: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: stablecoinAbi, functionName: 'transfer', args: [to, amount] });
}

/** `cSTABLE.wrap(to, amount)`: mints `amount` confidential units to `to` from the caller's approved public units. */
export function encodeWrap(to: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: confidentialTokenAbi, functionName: 'wrap', args: [to, amount] });
}

/** `cSTABLE.confidentialTransfer(to, handle, proof)`; encrypt for (confidentialToken, sender). */
export function encodeConfidentialTransfer(to: Address, encrypted: EncryptedAmount): Hex {
  return encodeFunctionData({
    abi: confidentialTokenAbi,
    functionName: 'confidentialTransfer',
    args: [to, encrypted.handle, encrypted.inputProof],
  });
}

/** `cSTABLE.setOperator(operator, until)`: the sender lets `operator` move its funds until `until` (unix seconds). */
export function encodeSetOperator(operator: Address, until: number): Hex {
  return encodeFunctionData({
    abi: confidentialTokenAbi,
    functionName: 'setOperator',
    args: [operator, until],
  });
}

/** `batcher.batchTransfer(from[], to[], handles, proof)`; encrypt every amount at once for (batcher, its owner). */
export function encodeBatchTransfer(
  legs: readonly { from: Address; to: Address }[],
  encrypted: { handles: readonly Hex[]; inputProof: Hex },
): Hex {
  return encodeFunctionData({
    abi: transferBatcherAbi,
    functionName: 'batchTransfer',
    args: [
      legs.map((leg) => leg.from),
      legs.map((leg) => leg.to),
      [...encrypted.handles],
      encrypted.inputProof,
    ],
  });
}

/** Until when (unix seconds) an `OperatorSet(holder, operator, until)` of the token in the receipt grants, or null. */
export function findOperatorGrant(
  receipt: Pick<TransactionReceipt, 'logs'>,
  params: { token: Address; holder: Address; operator: Address },
): number | null {
  const logs = parseEventLogs({ abi: confidentialTokenAbi, eventName: 'OperatorSet', logs: receipt.logs });
  const log = logs.find(
    (l) =>
      isAddressEqual(l.address, params.token) &&
      isAddressEqual(l.args.holder, params.holder) &&
      isAddressEqual(l.args.operator, params.operator),
  );
  return log ? Number(log.args.until) : null;
}

/**
 * The token's `ConfidentialTransfer` events of a receipt, in log order: a batch's legs each emit one, in the
 * order of the legs.
 */
export function listConfidentialTransfers(
  receipt: Pick<TransactionReceipt, 'logs'>,
  token: Address,
): { from: Address; to: Address; handle: Hex; logIndex: number }[] {
  return parseEventLogs({ abi: confidentialTokenAbi, eventName: 'ConfidentialTransfer', logs: receipt.logs })
    .filter((log) => isAddressEqual(log.address, token))
    .map((log) => ({
      from: log.args.from,
      to: log.args.to,
      handle: log.args.amount,
      logIndex: log.logIndex,
    }));
}

/**
 * The escrow of a letter, sent by the sender's wallet to the confidential token:
 * `cSTABLE.confidentialTransferAndCall(vault, handle, proof, abi.encode(letterId))`; encrypt for
 * (confidentialToken, sender). The vault records the transferred handle for the letter (reverts if the id is taken).
 */
export function encodeLetterEscrow(params: {
  vault: Address;
  letterId: Hex;
  encrypted: EncryptedAmount;
}): Hex {
  return encodeFunctionData({
    abi: confidentialTokenAbi,
    functionName: 'confidentialTransferAndCall',
    args: [
      params.vault,
      params.encrypted.handle,
      params.encrypted.inputProof,
      encodeAbiParameters([{ type: 'bytes32' }], [params.letterId]),
    ],
  });
}

/** `vault.release(letterId, to)`, sent by the operator (claim). */
export function encodeLetterRelease(letterId: Hex, to: Address): Hex {
  return encodeFunctionData({ abi: letterVaultAbi, functionName: 'release', args: [letterId, to] });
}

/** `vault.refund(letterId)`, sent by the operator (void, expiry). */
export function encodeLetterRefund(letterId: Hex): Hex {
  return encodeFunctionData({ abi: letterVaultAbi, functionName: 'refund', args: [letterId] });
}

/** `cSTABLE.unwrap(from, to, handle, proof)`: burns and requests the public decryption (encrypt for token, caller). */
export function encodeUnwrap(from: Address, to: Address, encrypted: EncryptedAmount): Hex {
  return encodeFunctionData({
    abi: confidentialTokenAbi,
    functionName: 'unwrap',
    args: [from, to, encrypted.handle, encrypted.inputProof],
  });
}

/** `cSTABLE.finalizeUnwrap(requestId, cleartext, proof)` after `rail.publicDecrypt([requestId])`. Anyone may send it. */
export function encodeFinalizeUnwrap(requestId: Hex, cleartext: bigint, decryptionProof: Hex): Hex {
  return encodeFunctionData({
    abi: confidentialTokenAbi,
    functionName: 'finalizeUnwrap',
    args: [requestId, cleartext, decryptionProof],
  });
}

/** The unwrap request of an `unwrap` receipt (its id is also the burnt amount's handle), or null. */
export function findUnwrapRequest(
  receipt: Pick<TransactionReceipt, 'logs'>,
  token: Address,
): { requestId: Hex; receiver: Address } | null {
  const logs = parseEventLogs({
    abi: confidentialTokenAbi,
    eventName: 'UnwrapRequested',
    logs: receipt.logs,
  });
  const log = logs.find((l) => isAddressEqual(l.address, token));
  return log ? { requestId: log.args.unwrapRequestId, receiver: log.args.receiver } : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Verification

/** The transferred-amount handle of the first `ConfidentialTransfer(from, to)` the token emitted, or null. */
export function findConfidentialTransfer(
  receipt: Pick<TransactionReceipt, 'logs'>,
  params: { token: Address; from: Address; to: Address },
): Hex | null {
  const logs = parseEventLogs({
    abi: confidentialTokenAbi,
    eventName: 'ConfidentialTransfer',
    logs: receipt.logs,
  });
  const log = logs.find(
    (l) =>
      isAddressEqual(l.address, params.token) &&
      isAddressEqual(l.args.from, params.from) &&
      isAddressEqual(l.args.to, params.to),
  );
  return log ? log.args.amount : null;
}

/**
 * What a receipt shows of one confidential transfer: its handle, what moved, and whether it was the
 * expected amount.
 */
export interface TransferVerification {
  /** The transferred-amount handle (null when the receipt holds no such transfer). */
  handle: Hex | null;
  /** What actually moved (0n for a silent zero, or when no transfer is found). */
  transferred: bigint;
  /** True only when the receipt succeeded and exactly `expectedAmount` moved. */
  ok: boolean;
}

/**
 * Verifies a confidential transfer's amount: finds the `ConfidentialTransfer(from, to)` handle in the receipt and
 * decrypts it with `decryptAs` (the sender's or the recipient's key: the token grants both ACL on it).
 */
export async function verifyConfidentialTransfer(params: {
  network: Pick<Network, 'rail' | 'contracts'>;
  receipt: Pick<TransactionReceipt, 'logs' | 'status'>;
  /** Default: the network's confidential token. */
  token?: Address;
  from: Address;
  to: Address;
  expectedAmount: bigint;
  decryptAs: Hex;
}): Promise<TransferVerification> {
  const token = getAddress(params.token ?? params.network.contracts.confidentialToken);
  if (params.receipt.status !== 'success') return { handle: null, transferred: 0n, ok: false };
  const handle = findConfidentialTransfer(params.receipt, { token, from: params.from, to: params.to });
  if (!handle) return { handle: null, transferred: 0n, ok: false };
  const transferred = await params.network.rail.userDecrypt({
    handle,
    contract: token,
    privateKey: params.decryptAs,
  });
  return { handle, transferred, ok: transferred === params.expectedAmount };
}

/** A step of a letter in the vault: escrowed, released to a claimer, or refunded to the sender. */
export type LetterLeg = 'escrow' | 'release' | 'refund';

const LEG_EVENTS = {
  escrow: 'LetterEscrowed',
  release: 'LetterReleased',
  refund: 'LetterRefunded',
} as const;

/** The vault event of a letter leg in a receipt: the handle it moved and the counterparty, or null. */
export function findLetterEvent(
  receipt: Pick<TransactionReceipt, 'logs'>,
  params: { vault: Address; letterId: Hex; leg: LetterLeg },
): { handle: Hex; party: Address } | null {
  const logs = parseEventLogs({ abi: letterVaultAbi, eventName: LEG_EVENTS[params.leg], logs: receipt.logs });
  for (const log of logs) {
    if (!isAddressEqual(log.address, params.vault) || log.args.letterId !== params.letterId) continue;
    const args = log.args as { amount: Hex; sender?: Address; to?: Address };
    const party = args.to ?? args.sender;
    if (party) return { handle: args.amount, party };
  }
  return null;
}

/**
 * Verifies a letter leg (escrow, release or refund) by decrypting the handle of the vault's event as the operator
 * (the vault grants its owner ACL on every such handle). `ok` needs a non-zero amount equal to `expectedAmount`
 * when given; a letter holding an encrypted zero gives `amount: 0n, ok: false`.
 */
export async function verifyLetterLeg(params: {
  network: Pick<Network, 'rail' | 'contracts' | 'operator'>;
  receipt: Pick<TransactionReceipt, 'logs' | 'status'>;
  letterId: Hex;
  leg: LetterLeg;
  expectedAmount?: bigint;
}): Promise<{ handle: Hex | null; party: Address | null; amount: bigint; ok: boolean }> {
  const vault = params.network.contracts.letterVault;
  if (params.receipt.status !== 'success') return { handle: null, party: null, amount: 0n, ok: false };
  const event = findLetterEvent(params.receipt, { vault, letterId: params.letterId, leg: params.leg });
  if (!event) return { handle: null, party: null, amount: 0n, ok: false };
  const amount = await params.network.rail.userDecrypt({
    handle: event.handle,
    contract: params.network.contracts.confidentialToken,
    privateKey: params.network.operator.privateKey,
  });
  const ok = amount > 0n && (params.expectedAmount === undefined || amount === params.expectedAmount);
  return { handle: event.handle, party: event.party, amount, ok };
}

/** The vault's record of a letter: sender, state (see LETTER_STATE) and amount handle. */
export async function readLetter(
  network: NetworkReads,
  letterId: Hex,
): Promise<{ sender: Address; state: number; amount: Hex }> {
  const [sender, state, amount] = await network.publicClient.readContract({
    address: network.contracts.letterVault,
    abi: letterVaultAbi,
    functionName: 'letterOf',
    args: [letterId],
  });
  return { sender, state, amount };
}
