/**
 * The chain follower: money received by any wallet the service knows (custodial or external) becomes a transaction
 * of the receiving account with `direction: "in"`, and money sent from one of them by anyone but the service (a
 * custodial wallet's exported key, an external wallet's owner) a `TRANSFER` with `direction: "out"`. It reads the logs of cSTABLE (`ConfidentialTransfer`) and of the
 * public stablecoin (`Transfer`) block range by block range, behind a cursor kept in the database; a range's rows
 * and the cursor's move commit together, so a restart resumes where the last commit ended (no gap), and the
 * unique indexes on (chain, tx hash, log index, wallet) keep a range read twice from counting twice.
 */
import { type Address, getAddress, type Hex, isAddressEqual, parseAbi } from 'viem';
import { CONFIDENTIAL_TOKEN_SYMBOL, STABLECOIN_SYMBOL } from '../../adapters/chain/contracts.ts';
import type { Network } from '../../adapters/chain/types.ts';
import { SENT_OUTSIDE_STEP, type WalletRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/logger.ts';
import { type DirectedTransaction, insertTransaction } from '../transactions/transactions.repository.ts';
import { openWalletKey } from '../wallets/custody.ts';
import { advanceCursor, readCursor, sentByService, startCursor, walletsAt } from './incoming.repository.ts';

/** Blocks read per round: a node's `eth_getLogs` refuses wide ranges. */
const MAX_BLOCKS_PER_ROUND = 2_000n;

const receivedEvents = parseAbi([
  'event ConfidentialTransfer(address indexed from, address indexed to, bytes32 indexed amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

interface Received {
  to: Address;
  from: Address;
  token: string;
  /** Public transfers carry their amount; confidential ones a handle that only a key holder can decrypt. */
  amount: bigint | null;
  handle: Hex | null;
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hex;
}

async function readReceived(network: Network, fromBlock: bigint, toBlock: bigint): Promise<Received[]> {
  const { confidentialToken, stablecoin } = network.contracts;
  const logs = await network.publicClient.getLogs({
    address: [confidentialToken, stablecoin],
    events: receivedEvents,
    fromBlock,
    toBlock,
    strict: true,
  });
  const received: Received[] = [];
  for (const log of logs) {
    if (log.transactionHash === null || log.logIndex === null || log.blockHash === null) continue;
    const place = {
      from: getAddress(log.args.from),
      to: getAddress(log.args.to),
      txHash: log.transactionHash,
      logIndex: log.logIndex,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
    };
    if (log.eventName === 'ConfidentialTransfer' && isAddressEqual(log.address, confidentialToken)) {
      received.push({ ...place, token: CONFIDENTIAL_TOKEN_SYMBOL, amount: null, handle: log.args.amount });
    } else if (log.eventName === 'Transfer' && isAddressEqual(log.address, stablecoin)) {
      received.push({ ...place, token: STABLECOIN_SYMBOL, amount: log.args.value, handle: null });
    }
  }
  return received;
}

/**
 * The amount moved: in clear for public transfers, decrypted with the wallet's key for custodial ones (the token
 * lets both sides of a confidential transfer read its amount).
 */
async function amountOf(
  deps: Deps,
  network: Network,
  wallet: WalletRow,
  item: Received,
): Promise<bigint | null> {
  if (item.amount !== null) return item.amount;
  if (wallet.type !== 'CUSTODIAL' || !item.handle) return null;
  return network.rail.userDecrypt({
    handle: item.handle,
    contract: network.contracts.confidentialToken,
    privateKey: openWalletKey(deps.keyring, wallet),
  });
}

/**
 * A transfer seen on chain that no row of the service holds, as `wallet`'s row: `CONFIRMED` at once (it is on
 * chain). Money in (`step: received`) has the sender as counterparty; money out that the service did not send
 * (`step: sent-outside`, `metadata.sentOutside`) has the recipient. The amount is in clear, decrypted with a
 * custodial wallet's key (a sender may read what it sent, a recipient what it got), or null for an external
 * wallet's confidential transfer.
 */
function seenTransferRow(
  network: Network,
  wallet: WalletRow,
  item: Received,
  amount: bigint | null,
  direction: 'in' | 'out',
): DirectedTransaction {
  return {
    id: newId(),
    userId: wallet.userId,
    walletId: wallet.id,
    type: 'TRANSFER',
    direction,
    status: 'CONFIRMED',
    step: direction === 'in' ? 'received' : SENT_OUTSIDE_STEP,
    chainId: network.chainId,
    amount: amount === null ? null : amount.toString(),
    token: item.token,
    txHash: item.txHash,
    fromAddress: item.from,
    toAddress: item.to,
    counterparty: direction === 'in' ? item.from : item.to,
    ...(direction === 'out' ? { metadata: { sentOutside: true } } : {}),
    blockNumber: item.blockNumber,
    blockHash: item.blockHash,
    logIndex: item.logIndex,
  };
}

/**
 * One round: records what the wallets received in the next confirmed blocks. Returns how many blocks it read
 * (0 when it is caught up). A fault (the chain, a decryption) leaves the cursor where it was: the next round
 * reads the same blocks again.
 */
export async function followOnce(
  deps: Deps,
  network: Network,
): Promise<{ blocks: number; recorded: number }> {
  const { db } = deps.database;
  const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
  const confirmed = head - BigInt(deps.config.follower.confirmations);
  if (confirmed < 0n) return { blocks: 0, recorded: 0 };
  const cursor = await readCursor(db, network.chainId);
  if (cursor === null) {
    // The first round starts at the chain's present: what wallets received before the follower existed is not
    // replayed (their own operations recorded what the service sent).
    await startCursor(db, network.chainId, confirmed);
    return { blocks: 0, recorded: 0 };
  }
  if (confirmed <= cursor) return { blocks: 0, recorded: 0 };
  const toBlock = confirmed - cursor > MAX_BLOCKS_PER_ROUND ? cursor + MAX_BLOCKS_PER_ROUND : confirmed;
  const received = await readReceived(network, cursor + 1n, toBlock);
  const parties = new Set(received.flatMap((item) => [item.to, item.from]));
  const known = await walletsAt(db, [...parties]);
  const walletByAddress = new Map(known.map((wallet) => [wallet.address.toLowerCase(), wallet]));
  const sent = await sentByService(db, [...new Set(received.map((item) => item.txHash))]);
  const rows: DirectedTransaction[] = [];
  for (const item of received) {
    const hash = item.txHash.toLowerCase();
    const sender = walletByAddress.get(item.from.toLowerCase());
    // Money out of a wallet that no row of the service sent: the holder of an exported key (or an external
    // wallet's owner) moved it. Recorded so the ledger still adds up.
    if (sender && !sent.submitted.has(hash)) {
      const amount = await amountOf(deps, network, sender, item);
      if (amount !== 0n) rows.push(seenTransferRow(network, sender, item, amount, 'out'));
    }
    const wallet = walletByAddress.get(item.to.toLowerCase());
    if (!wallet) continue;
    // The wallet's own operation (a mint, a faucet payment, a payout, a letter's claim or refund) has its row.
    if (sent.own.has(`${hash}:${wallet.id}`)) continue;
    // An ERC-7984 transfer its sender could not cover moves an encrypted zero: the sender's row FAILED, and a
    // custodial recipient decrypts 0. Nothing was received.
    if (sent.movedNothing.has(hash)) continue;
    const amount = await amountOf(deps, network, wallet, item);
    if (amount === 0n) continue;
    rows.push(seenTransferRow(network, wallet, item, amount, 'in'));
  }
  const recorded = await db.transaction(async (tx) => {
    if (!(await advanceCursor(tx, network.chainId, cursor, toBlock))) return 0;
    for (const row of rows) await insertTransaction(tx, row);
    return rows.length;
  });
  return { blocks: Number(toBlock - cursor), recorded };
}

/** Longest wait between rounds while the chain keeps failing (an RPC outage, a setting missing). */
const MAX_FAILURE_WAIT_MS = 60_000;

/**
 * Runs the follower every `config.follower.pollMs` (at once again while it is behind, and backing off up to a
 * minute while rounds fail); returns its stopper.
 */
export function startFollower(deps: Deps, logger: Logger): () => Promise<void> {
  const network = deps.network;
  if (!network) throw new Error('the follower needs the chain');
  const { pollMs } = deps.config.follower;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      let delay = pollMs;
      running = followOnce(deps, network)
        .then(({ blocks, recorded }) => {
          failures = 0;
          if (recorded > 0) logger.info({ blocks, recorded }, 'money moved on chain recorded');
          if (blocks >= Number(MAX_BLOCKS_PER_ROUND)) delay = 0;
        })
        .catch((error: unknown) => {
          failures += 1;
          delay = Math.min(MAX_FAILURE_WAIT_MS, pollMs * 2 ** Math.min(failures, 16));
          logger.warn({ err: error, retryInMs: delay }, 'following the chain failed; will retry');
        })
        .finally(() => {
          if (!stopped) schedule(delay);
        });
    }, delayMs);
    timer.unref();
  };
  schedule(0);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
