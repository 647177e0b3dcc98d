/**
 * The EVM under the embedded network: anvil in a child process, started on its newest usable snapshot, or EDR in
 * this process for data directories made before anvil (see embedded.ts).
 */

import path from 'node:path';
import type { Address } from 'viem';
import { type AnvilProcess, startAnvil } from './anvil.ts';
import { createEdrProvider } from './edr.ts';
import { type Eip1193, EMBEDDED_BLOCK_GAS_LIMIT, EMBEDDED_CHAIN_ID, INITIAL_BASE_FEE } from './evm.ts';
import { JOURNAL_START, type JournalReadResult, journalHolds, readJournal } from './journal.ts';
import { JournaledChain } from './journaled-chain.ts';
import {
  type ChainSnapshot,
  listSnapshots,
  readSnapshot,
  removeTornSnapshotWrites,
  rewindsPast,
} from './snapshot.ts';

/** Where the embedded network reports its start, replay and snapshots (the service's logger, or silence). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Gas currency given to the operator at genesis (it funds custodial wallets' gas from there). */
export const OPERATOR_GENESIS_BALANCE = 10n ** 9n * 10n ** 18n;

/** What an engine needs of the data directory's persisted state to start the same genesis again. */
export interface EngineGenesis {
  genesisTimestamp: number;
  operatorAddress: Address;
}

/**
 * The EVM started under the embedded network: its journaled front, and the anvil process and snapshot it
 * started from.
 */
export interface Engine {
  /** The journaled front of the EVM, its state loaded from `snapshot` when there is one. */
  chain: JournaledChain;
  /** The anvil process (null on EDR, which runs in this process and cannot save its state). */
  anvil: AnvilProcess | null;
  snapshot: ChainSnapshot | null;
  /** The journal after `snapshot` (all of it without one), to replay. */
  tail: JournalReadResult;
}

interface LatestBlock {
  number: string;
  hash: string;
}

/** The chain's latest block number and hash (to check a loaded snapshot or a replay against). */
export async function latestBlock(evm: Eip1193): Promise<{ number: number; hash: string }> {
  const block = (await evm.request({
    method: 'eth_getBlockByNumber',
    params: ['latest', false],
  })) as LatestBlock;
  return { number: Number(BigInt(block.number)), hash: block.hash };
}

/**
 * Starts anvil on the newest snapshot that is whole, matches the journal, can start the journal after it (no entry
 * after it goes back past it: `rewindsPast`) and loads to the block it was taken at; on a fresh genesis when there
 * is none (the whole journal is then replayed).
 */
export async function startAnvilEngine(
  dir: string,
  state: EngineGenesis,
  journalFile: string,
  logger: Logger,
  onExit: (reason: string) => void,
): Promise<Engine> {
  const snapshotsDir = path.join(dir, 'snapshots');
  removeTornSnapshotWrites(snapshotsDir);
  // The first read cuts a torn last line: what it dropped is reported whichever start is chosen.
  let droppedBytes: number | null = null;
  const readTail = (from: ChainSnapshot['journal']): JournalReadResult => {
    const tail = readJournal(journalFile, from);
    droppedBytes ??= tail.droppedBytes;
    return { ...tail, droppedBytes };
  };
  // Said once, however many snapshots are tried.
  let unisolatedSaid = false;
  const start = (chainState?: string) =>
    startAnvil({
      genesisTimestamp: state.genesisTimestamp,
      chainId: EMBEDDED_CHAIN_ID,
      blockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT,
      baseFeePerGas: INITIAL_BASE_FEE,
      runDir: path.join(dir, 'anvil'),
      state: chainState,
      onExit,
      onUnisolated: (warning) => {
        if (!unisolatedSaid) logger.warn(warning);
        unisolatedSaid = true;
      },
    });
  for (const candidate of listSnapshots(snapshotsDir)) {
    const name = path.basename(candidate.file);
    let snapshot: ChainSnapshot;
    try {
      snapshot = readSnapshot(candidate.file);
    } catch (error) {
      logger.warn(`chain snapshot ${name} not used: ${(error as Error).message}`);
      continue;
    }
    if (!journalHolds(journalFile, snapshot.journal)) {
      logger.warn(`chain snapshot ${name} not used: the journal does not hold the entries it covers`);
      continue;
    }
    const cover = { entries: snapshot.journal.entries, headNumber: snapshot.head.number };
    const tail = readTail(snapshot.journal);
    const rewind = tail.entries.findIndex((entry) => rewindsPast(entry, cover));
    if (rewind !== -1) {
      logger.warn(
        `chain snapshot ${name} not used: journal entry ${cover.entries + rewind} goes back past it (evm_revert, anvil_rollback or anvil_reorg)`,
      );
      continue;
    }
    let anvil: AnvilProcess | null = null;
    try {
      anvil = await start(snapshot.chain);
      const head = await latestBlock(anvil);
      if (head.number !== snapshot.head.number || head.hash !== snapshot.head.hash) {
        throw new Error(
          `it loads to block ${head.number} (${head.hash}), it was taken at block ${snapshot.head.number} (${snapshot.head.hash})`,
        );
      }
      const chain = new JournaledChain(anvil, { clockOffset: snapshot.clockOffset, rewrites: true });
      await chain.init();
      await chain.restoreExtras(snapshot.node);
      return { chain, anvil, snapshot, tail };
    } catch (error) {
      await anvil?.close();
      logger.warn(`chain snapshot ${name} not used: ${(error as Error).message}`);
    }
  }
  const anvil = await start();
  const chain = new JournaledChain(anvil, { rewrites: true });
  await chain.init();
  return { chain, anvil, snapshot: null, tail: readTail(JOURNAL_START) };
}

/**
 * Starts EDR for a data directory made before anvil: it cannot load a snapshot, so the whole journal is
 * replayed.
 */
export async function startEdrEngine(state: EngineGenesis, journalFile: string): Promise<Engine> {
  const edr = await createEdrProvider({
    genesisTimestamp: BigInt(state.genesisTimestamp),
    fundedAccounts: [{ address: state.operatorAddress, balance: OPERATOR_GENESIS_BALANCE }],
  });
  const chain = new JournaledChain(edr);
  await chain.init();
  return { chain, anvil: null, snapshot: null, tail: readJournal(journalFile) };
}
