/**
 * Test helpers for the embedded network and the devnet: wallets, money moves, and a view of the chain
 * to compare before and after a restart. Shared by the tests and their crash children (processes killed with
 * SIGKILL).
 */
import { type Address, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { sendTransactionOrThrow } from '../../src/adapters/chain/tx.ts';
import type { Network } from '../../src/adapters/chain/types.ts';
import {
  decryptConfidentialBalance,
  encodeApprove,
  encodeConfidentialTransfer,
  encodeFinalizeUnwrap,
  encodeMint,
  encodeUnwrap,
  encodeWrap,
  findUnwrapRequest,
  getConfidentialBalanceHandle,
  getGasBalance,
  getStablecoinBalance,
} from '../../src/adapters/confidential/helpers.ts';

/** A test wallet: an address and its private key. */
export interface Wallet {
  address: Address;
  privateKey: Hex;
}

/** A wallet from `privateKey`, or from a fresh random key. */
export function newWallet(privateKey: Hex = generatePrivateKey()): Wallet {
  return { address: privateKeyToAccount(privateKey).address, privateKey };
}

/** Gas, then `confidential` base units minted, approved and wrapped into the confidential token. */
export async function fund(network: Network, wallet: Wallet, confidential: bigint): Promise<void> {
  const op = network.operator.privateKey;
  const { stablecoin, confidentialToken } = network.contracts;
  await sendTransactionOrThrow(network, { privateKey: op, to: wallet.address, value: parseEther('1') });
  await sendTransactionOrThrow(network, {
    privateKey: op,
    to: stablecoin,
    data: encodeMint(wallet.address, confidential),
  });
  await sendTransactionOrThrow(network, {
    privateKey: wallet.privateKey,
    to: stablecoin,
    data: encodeApprove(confidentialToken, confidential),
  });
  await sendTransactionOrThrow(network, {
    privateKey: wallet.privateKey,
    to: confidentialToken,
    data: encodeWrap(wallet.address, confidential),
  });
}

/**
 * Sends `amount` of the confidential token from `from` to `to`, encrypted through the network's rail; for
 * tests.
 */
export async function confidentialTransfer(network: Network, from: Wallet, to: Address, amount: bigint) {
  const encrypted = await network.rail.encryptAmount({
    contract: network.contracts.confidentialToken,
    caller: from.address,
    amount,
  });
  return sendTransactionOrThrow(network, {
    privateKey: from.privateKey,
    to: network.contracts.confidentialToken,
    data: encodeConfidentialTransfer(to, encrypted),
  });
}

/**
 * A redeem as the worker drives it: `unwrap` as the wallet, public decryption of the request, `finalizeUnwrap` as
 * the operator (the token checks the KMS proof on chain).
 */
export async function redeem(network: Network, wallet: Wallet, amount: bigint) {
  const token = network.contracts.confidentialToken;
  const encrypted = await network.rail.encryptAmount({ contract: token, caller: wallet.address, amount });
  const unwrap = await sendTransactionOrThrow(network, {
    privateKey: wallet.privateKey,
    to: token,
    data: encodeUnwrap(wallet.address, wallet.address, encrypted),
  });
  const request = findUnwrapRequest(unwrap, token);
  if (!request) throw new Error('no unwrap request');
  const decryption = await network.rail.publicDecrypt([request.requestId]);
  await sendTransactionOrThrow(network, {
    privateKey: network.operator.privateKey,
    to: token,
    data: encodeFinalizeUnwrap(request.requestId, decryption.cleartexts[0] ?? 0n, decryption.decryptionProof),
  });
  return { request, decryption };
}

/** What must be identical across restarts: every block's hash, and each wallet's balances, handle and decryption. */
export interface ChainView {
  blockNumber: bigint;
  blockHashes: Hex[];
  wallets: { gas: bigint; stable: bigint; handle: Hex; confidential: bigint }[];
}

/** Reads the chain's blocks and the wallets' balances, to compare a network before and after a restart. */
export async function chainView(network: Network, wallets: Wallet[]): Promise<ChainView> {
  // Not viem's cached block number (a client over HTTP keeps it for 4 s).
  const blockNumber = await network.publicClient.getBlockNumber({ cacheTime: 0 });
  const blockHashes: Hex[] = [];
  for (let n = 0n; n <= blockNumber; n++) {
    blockHashes.push((await network.publicClient.getBlock({ blockNumber: n })).hash);
  }
  const rows = [];
  for (const wallet of wallets) {
    rows.push({
      gas: await getGasBalance(network, wallet.address),
      stable: await getStablecoinBalance(network, wallet.address),
      handle: await getConfidentialBalanceHandle(network, wallet.address),
      confidential: await decryptConfidentialBalance(network, wallet.privateKey),
    });
  }
  return { blockNumber, blockHashes, wallets: rows };
}
