/**
 * `sealpay repair nonces`: finds and fills nonce gaps.
 *
 * Every nonce the service hands out is in `address_nonces` and, until it is mined, in a stored signed transaction.
 * A gap is a nonce below the counter that the chain has no transaction for, with nothing stored that it would
 * accept: left by a broadcast the chain refused after a later nonce was taken (or by a key used outside the service).
 * Every later transaction of that address waits in the chain's pool behind it.
 *
 * For each address, under its nonce lock (no process allocates meanwhile): from the chain's pending count up to
 * the counter, a stored signature at the missing nonce is broadcast again; if the chain refuses it too, the nonce
 * is filled with a zero-value transfer from the address to itself, and the rows waiting behind it go on (the
 * refused row's worker signs its intent again at a fresh nonce: see `submitOnce`).
 */
import { type Address, getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { broadcastTransaction, signTransaction, waitForReceipt } from '../adapters/chain/tx.ts';
import type { Network } from '../adapters/chain/types.ts';
import type { Deps } from '../deps.ts';
import { findNonceCounter, findSubmissionAt, listNonceCounters } from './submissions.repository.ts';
import { nonceLockKey } from './submissions.ts';

const SELF_TRANSFER_GAS = 21_000n;

export interface NonceRepair {
  address: Address;
  nonce: number;
  action: 'rebroadcast' | 'filled' | 'unfillable';
  txHash?: Hex;
  reason?: string;
}

export interface NonceRepairReport {
  addressesChecked: number;
  repairs: NonceRepair[];
}

/** The service's key of a custodial wallet's address, or null when it holds none (the wallets module answers). */
export type CustodialKeyOf = (deps: Deps, address: Address) => Promise<Hex | null>;

async function keyOf(
  deps: Deps,
  network: Network,
  custodialKey: CustodialKeyOf,
  address: Address,
): Promise<Hex | null> {
  if (getAddress(network.operator.address) === address) return network.operator.privateKey;
  return custodialKey(deps, address);
}

async function pendingCount(network: Network, address: Address): Promise<number> {
  return network.publicClient.getTransactionCount({ address, blockTag: 'pending' });
}

async function fillWithSelfTransfer(network: Network, privateKey: Hex, nonce: number): Promise<Hex> {
  const self = privateKeyToAccount(privateKey).address;
  const signed = await signTransaction(network, {
    privateKey,
    to: self,
    value: 0n,
    gas: SELF_TRANSFER_GAS,
    nonce,
  });
  const hash = await broadcastTransaction(network, signed.serialized);
  await waitForReceipt(network, hash, { timeoutMs: 60_000 });
  return hash;
}

/** Checks every address the service has allocated nonces for; fills what is missing. */
export async function repairNonces(
  deps: Deps,
  network: Network,
  custodialKey: CustodialKeyOf,
): Promise<NonceRepairReport> {
  const counters = await listNonceCounters(deps.database.db);
  const repairs: NonceRepair[] = [];
  for (const counter of counters) {
    const address = getAddress(counter.address);
    await deps.database.withLock(nonceLockKey(address), async (db) => {
      const current = await findNonceCounter(db, counter.address);
      const next = current?.nextNonce ?? counter.nextNonce;
      let key: Hex | null | undefined;
      let pending = await pendingCount(network, address);
      while (pending < next) {
        const nonce = pending;
        const stored = await findSubmissionAt(db, counter.address, nonce);
        let refusal: string | null = null;
        if (stored) {
          try {
            await broadcastTransaction(network, stored.rawTx);
            repairs.push({ address, nonce, action: 'rebroadcast', txHash: stored.txHash });
          } catch (error) {
            refusal =
              error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
          }
        }
        if (!stored || refusal !== null) {
          key ??= await keyOf(deps, network, custodialKey, address);
          if (!key) {
            repairs.push({ address, nonce, action: 'unfillable', reason: 'the service holds no key for it' });
            return;
          }
          try {
            const txHash = await fillWithSelfTransfer(network, key, nonce);
            repairs.push({
              address,
              nonce,
              action: 'filled',
              txHash,
              reason: stored ? `its stored transaction was refused: ${refusal}` : 'nothing was stored for it',
            });
          } catch (error) {
            repairs.push({
              address,
              nonce,
              action: 'unfillable',
              reason: `the fill was refused (${(error as Error).message.split('\n')[0]}); give the address gas and run again`,
            });
            return;
          }
        }
        const after = await pendingCount(network, address);
        if (after <= pending) {
          repairs.push({ address, nonce, action: 'unfillable', reason: 'the chain did not take it' });
          return;
        }
        pending = after;
      }
    });
  }
  return { addressesChecked: counters.length, repairs };
}

/** What the command prints. */
export function describeNonceRepair(report: NonceRepairReport): string {
  if (report.repairs.length === 0) {
    return `nonces: ${report.addressesChecked} address(es) checked, no gap`;
  }
  const lines = report.repairs.map((repair) => {
    switch (repair.action) {
      case 'rebroadcast':
        return `${repair.address} nonce ${repair.nonce}: its stored transaction ${repair.txHash} was not on the chain; broadcast again`;
      case 'filled':
        return `${repair.address} nonce ${repair.nonce}: gap (${repair.reason}); filled with a zero-value self-transfer ${repair.txHash}`;
      default:
        return `${repair.address} nonce ${repair.nonce}: gap NOT filled: ${repair.reason}`;
    }
  });
  const unfilled = report.repairs.filter((repair) => repair.action === 'unfillable').length;
  return [
    `nonces: ${report.addressesChecked} address(es) checked, ${report.repairs.length - unfilled} repaired, ${unfilled} not`,
    ...lines.map((line) => `  ${line}`),
  ].join('\n');
}
