/**
 * `NETWORK=local`: the embedded network. An EVM (chain 31337: anvil in a child process), the fhEVM host contracts
 * and mock stack, our contracts deployed by the operator at first start (the TransferBatcher also into data
 * directories made before it), and a journal and snapshots that make it all survive restarts.
 *
 * Data directory layout (`{dataDir}/chain/`):
 * - `operator.key`  the operator's private key (hex, mode 0600), generated on first start;
 * - `state.json`    genesis time, EVM engine, mock KMS/coprocessor signer keys, deployed addresses, whether the
 *                   devnet's development accounts are funded (mode 0600);
 * - `journal.jsonl` every state-changing request the chain executed (see journal.ts), the source of truth;
 * - `snapshots/`    the chain and the coprocessor's handle database every few hundred journal entries and at a
 *                   graceful stop (see snapshot.ts): a start loads the newest valid one and replays only the journal
 *                   after it, so its cost does not grow with the history.
 *
 * Data directories made before anvil (no `engine` in state.json) keep the EVM they were made with, EDR, in
 * process: anvil would mine the same transactions into blocks with other hashes, and the service keeps block
 * hashes in its receipts. EDR cannot save its state, so those replay their whole journal at every start.
 *
 * A first start that did not finish (no addresses in state.json) is started over from an empty journal.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  type Address,
  createPublicClient,
  custom,
  encodeDeployData,
  getAddress,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { acquirePidLock } from '../../lib/pid-lock.ts';
import { deployFhevmHost, HARDHAT_PLUGIN_MOCK, type MockSignerKeys } from '../confidential/fhevm-host.ts';
import { createMockFhevm } from '../confidential/fhevm-mock.ts';
import { createFhevmRail } from '../confidential/fhevm-rail.ts';
import { isRelayerMethod } from '../confidential/relayer-methods.ts';
import { CONTRACT_NAMES, loadArtifact, TRANSFER_BATCHER_CONTRACT } from './contracts.ts';
import { DEV_ACCOUNT_BALANCE, deriveDevAccounts } from './dev-accounts.ts';
import {
  type Engine,
  type Logger,
  latestBlock,
  OPERATOR_GENESIS_BALANCE,
  startAnvilEngine,
  startEdrEngine,
} from './embedded-engine.ts';
import { EMBEDDED_CHAIN_ID } from './evm.ts';
import { Journal, type JournalEntry } from './journal.ts';
import type { JournaledChain } from './journaled-chain.ts';
import { answerNodeIdentity, NODE_IDENTITY_METHODS } from './node-identity.ts';
import { type ChainSnapshot, Snapshotter } from './snapshot.ts';
import { sendTransactionOrThrow } from './tx.ts';
import type { ContractAddresses, Network } from './types.ts';

export type { Logger } from './embedded-engine.ts';

/** `anvil` for every new data directory; `edr` for those made before it (see the top of this file). */
export type EmbeddedEngine = 'anvil' | 'edr';

/** Where the embedded network keeps its state, how it logs, and how often it takes a snapshot. */
export interface EmbeddedNetworkOptions {
  dataDir: string;
  logger?: Logger;
  /** Journal entries between two snapshots (default `SNAPSHOT_EVERY_ENTRIES`). */
  snapshotEvery?: number;
  /** The engine of a new data directory: `edr` only for tests that need one as earlier versions made it. */
  newDirectoryEngine?: EmbeddedEngine;
  /**
   * Fund the development accounts (`dev-accounts.ts`) once, if this chain has not funded them yet: `sealpay devnet`
   * only, never `npm start`.
   */
  fundDevAccounts?: boolean;
  /** Seconds between blocks (interval mining, automine off), as `anvil --block-time`; default automine. */
  blockTime?: number;
}

/** The embedded network, with a few extras for tests and diagnostics. */
export interface EmbeddedNetwork extends Network {
  readonly name: 'local';
  readonly rpc: (args: { method: string; params?: unknown }) => Promise<unknown>;
  /** Start figures: how long the start took, which snapshot it loaded, how many journal entries it replayed. */
  readonly startup: {
    durationMs: number;
    engine: EmbeddedEngine;
    /** Journal entries covered by the snapshot loaded (null: none, the journal was replayed from genesis). */
    snapshotEntries: number | null;
    replayedEntries: number;
    droppedBytes: number;
    firstStart: boolean;
  };
  /** Number of entries in the journal. */
  journalLength(): number;
  /** Journal entries the newest snapshot covers (0 when there is none). */
  snapshotEntries(): number;
  /** Takes a snapshot now (tests; the network takes them by itself every `snapshotEvery` entries). */
  takeSnapshot(): Promise<void>;
}

interface PersistedState {
  version: 1;
  /** Absent in data directories made before anvil: those are EDR's. */
  engine?: EmbeddedEngine;
  genesisTimestamp: number;
  operatorAddress: Address;
  mockSigners: MockSignerKeys;
  contracts: ContractAddresses | null;
  /** Deployed at the first start that knows it (data directories made before get it then, journaled). */
  transferBatcher?: Address;
  /** Set once the development accounts are funded (at the first start of `sealpay devnet` on this chain). */
  devAccountsFunded?: true;
}

/**
 * Journal entries between snapshots (at least: they are also spaced so that the chain is held still at most a
 * tenth of the time). After kill -9 about this many are replayed, ~3 ms each on anvil (a confidential transfer is
 * two entries: its input, its transaction).
 */
export const SNAPSHOT_EVERY_ENTRIES = 500;

/** The viem chain of the embedded network: hardhat's (chain id 31337), under sealpay's name. */
export const embeddedChain = {
  ...hardhat,
  name: 'Sealpay embedded chain',
} as const;

const silentLogger: Logger = { info() {}, warn() {}, error() {} };

function writeSecretFile(file: string, content: string): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, file);
}

function writeState(dir: string, state: PersistedState): void {
  writeSecretFile(path.join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
}

/** One process per data directory: a second one would append to the same journal. */
function acquireLock(dir: string): () => void {
  return acquirePidLock(path.join(dir, 'lock'), `The embedded chain in ${dir}`);
}

function loadOrCreateOperatorKey(dir: string): Hex {
  const file = path.join(dir, 'operator.key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${file} does not hold a private key`);
    return key as Hex;
  }
  const key = generatePrivateKey();
  writeSecretFile(file, `${key}\n`);
  return key;
}

/**
 * Opens (or creates) the embedded network in `options.dataDir`: starts its engine, loads the newest snapshot and
 * replays the journal after it, sets up the fhEVM host contracts and mock coprocessor, and deploys sealpay's
 * contracts on first start. One process per data directory (a lock refuses a second one).
 */
export async function createEmbeddedNetwork(options: EmbeddedNetworkOptions): Promise<EmbeddedNetwork> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const dir = path.join(options.dataDir, 'chain');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLock(dir);
  try {
    return await startEmbeddedNetwork(dir, options, logger, started, releaseLock);
  } catch (error) {
    releaseLock();
    throw error;
  }
}

async function startEmbeddedNetwork(
  dir: string,
  options: EmbeddedNetworkOptions,
  logger: Logger,
  started: number,
  releaseLock: () => void,
): Promise<EmbeddedNetwork> {
  const operatorKey = loadOrCreateOperatorKey(dir);
  const operatorAddress = privateKeyToAccount(operatorKey).address;
  const stateFile = path.join(dir, 'state.json');
  const journalFile = path.join(dir, 'journal.jsonl');
  const snapshotsDir = path.join(dir, 'snapshots');

  let state: PersistedState | null = existsSync(stateFile)
    ? (JSON.parse(readFileSync(stateFile, 'utf8')) as PersistedState)
    : null;
  if (state && state.operatorAddress !== operatorAddress) {
    throw new Error(
      `${stateFile} belongs to operator ${state.operatorAddress}, operator.key to ${operatorAddress}`,
    );
  }
  if (!state?.contracts) {
    // First start, or a first start that did not finish: begin again from genesis.
    rmSync(journalFile, { force: true });
    rmSync(snapshotsDir, { recursive: true, force: true });
    state = {
      version: 1,
      engine: options.newDirectoryEngine ?? 'anvil',
      genesisTimestamp: state?.genesisTimestamp ?? Math.floor(Date.now() / 1000) - 1,
      operatorAddress,
      // The plugin's development keys, whatever an unfinished first start chose: the chain starts from genesis.
      mockSigners: HARDHAT_PLUGIN_MOCK.signers,
      contracts: null,
    };
    writeState(dir, state);
  }
  const firstStart = state.contracts === null;
  const engineName: EmbeddedEngine = state.engine ?? 'edr';

  let closed = false;
  let engineExit: string | null = null;
  const onEngineExit = (reason: string) => {
    engineExit = reason;
    if (!closed) logger.error(`chain engine (anvil) ${reason}: the chain is unavailable until a restart`);
  };
  const engine: Engine =
    engineName === 'anvil'
      ? await startAnvilEngine(dir, state, journalFile, logger, onEngineExit)
      : await startEdrEngine(state, journalFile);
  try {
    return await openNetwork({
      dir,
      options,
      logger,
      started,
      state,
      firstStart,
      engineName,
      engine,
      operatorKey,
      isClosed: () => closed,
      engineExit: () => engineExit,
      close: async (chain, journal, snapshotter) => {
        closed = true;
        chain.stopMining();
        await chain.drain();
        await snapshotter?.takeFinal();
        await journal.close();
        await engine.anvil?.close();
        releaseLock();
      },
    });
  } catch (error) {
    closed = true;
    await engine.anvil?.close();
    throw error;
  }
}

interface OpenParams {
  dir: string;
  options: EmbeddedNetworkOptions;
  logger: Logger;
  started: number;
  state: PersistedState;
  firstStart: boolean;
  engineName: EmbeddedEngine;
  engine: Engine;
  operatorKey: Hex;
  isClosed: () => boolean;
  engineExit: () => string | null;
  close: (chain: JournaledChain, journal: Journal, snapshotter: Snapshotter | null) => Promise<void>;
}

async function openNetwork(params: OpenParams): Promise<EmbeddedNetwork> {
  const { dir, logger, engine, operatorKey } = params;
  let state = params.state;
  const operatorAddress = state.operatorAddress;
  const journalFile = path.join(dir, 'journal.jsonl');
  const { chain, snapshot } = engine;

  const { entries, droppedBytes, end } = engine.tail;
  if (droppedBytes > 0) logger.warn(`chain journal: dropped a torn last line (${droppedBytes} bytes)`);
  if (params.engineName === 'edr' && entries.length > 0) {
    logger.warn(
      `chain: ${dir} was made before snapshots (EDR engine): its ${entries.length} journal entries are replayed at every start; a new DATA_DIR starts with anvil and snapshots`,
    );
  }
  const replayedInputs: Extract<JournalEntry, { k: 'input' }>[] = [];
  chain.onInputEntry = async (entry) => {
    replayedInputs.push(entry);
  };
  // The lowest block the replay went back to: the coprocessor's handles after it (a snapshot's) are read again.
  let replayRewoundTo: number | null = null;
  chain.onRewind = async (entry) => {
    replayRewoundTo = Math.min(replayRewoundTo ?? entry.block, entry.block);
  };
  const replayStarted = performance.now();
  await chain.replay(entries, snapshot?.journal.entries ?? 0);
  if (entries.length > 0) {
    logger.info(
      `chain journal: replayed ${entries.length} entries${snapshot ? ` after snapshot ${snapshot.journal.entries}` : ''} in ${Math.round(performance.now() - replayStarted)} ms`,
    );
  }
  const journal = await Journal.open(journalFile, end);
  chain.attachJournal(journal);

  const publicClient = createPublicClient({
    chain: embeddedChain,
    transport: custom({ request: (args) => chain.request(args) }, { retryCount: 0 }),
    pollingInterval: 50,
  }) as PublicClient;
  const access = { publicClient, chain: embeddedChain };

  let contracts: ContractAddresses;
  if (state.contracts) {
    contracts = state.contracts;
  } else {
    const deployStarted = performance.now();
    if (engine.anvil) {
      // Anvil has no genesis accounts of ours: the operator's balance is set (and journaled) first.
      await chain.request({
        method: 'hardhat_setBalance',
        params: [operatorAddress, `0x${OPERATOR_GENESIS_BALANCE.toString(16)}`],
      });
    }
    await deployFhevmHost(chain, { signers: state.mockSigners });
    const deploy = async (name: (typeof CONTRACT_NAMES)[keyof typeof CONTRACT_NAMES], args: unknown[]) => {
      const artifact = loadArtifact(name);
      const receipt = await sendTransactionOrThrow(access, {
        privateKey: operatorKey,
        data: encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args }),
      });
      if (!receipt.contractAddress) throw new Error(`Deployment of ${name} returned no address`);
      return getAddress(receipt.contractAddress);
    };
    const stablecoin = await deploy(CONTRACT_NAMES.stablecoin, [operatorAddress]);
    const confidentialToken = await deploy(CONTRACT_NAMES.confidentialToken, [stablecoin]);
    const letterVault = await deploy(CONTRACT_NAMES.letterVault, [confidentialToken, operatorAddress]);
    contracts = { stablecoin, confidentialToken, letterVault };
    state = { ...state, contracts };
    writeState(dir, state);
    logger.info(
      `embedded chain: fhEVM host contracts and ${Object.values(CONTRACT_NAMES).join(', ')} deployed in ${Math.round(performance.now() - deployStarted)} ms`,
    );
  }

  let transferBatcher = state.transferBatcher;
  if (!transferBatcher) {
    const artifact = loadArtifact(TRANSFER_BATCHER_CONTRACT);
    const receipt = await sendTransactionOrThrow(access, {
      privateKey: operatorKey,
      data: encodeDeployData({
        abi: artifact.abi,
        bytecode: artifact.bytecode,
        args: [contracts.confidentialToken, operatorAddress],
      }),
    });
    if (!receipt.contractAddress)
      throw new Error(`Deployment of ${TRANSFER_BATCHER_CONTRACT} returned no address`);
    transferBatcher = getAddress(receipt.contractAddress);
    state = { ...state, transferBatcher };
    writeState(dir, state);
  }

  if (params.options.fundDevAccounts && !state.devAccountsFunded) {
    for (const account of deriveDevAccounts()) {
      await chain.request({
        method: 'hardhat_setBalance',
        params: [account.address, `0x${DEV_ACCOUNT_BALANCE.toString(16)}`],
      });
    }
    state = { ...state, devAccountsFunded: true };
    writeState(dir, state);
  }

  const mock = await createMockFhevm(chain, {
    signers: state.mockSigners,
    recordInput: (handles, values) => chain.recordInput(handles, values),
    ...(snapshot ? { database: snapshot.coprocessor } : {}),
  });
  for (const entry of replayedInputs) await mock.insertInputs(entry.handles, entry.values);
  chain.onInputEntry = null;
  if (replayRewoundTo !== null) await mock.rewind(replayRewoundTo);

  let snapshotter: Snapshotter | null = null;
  const anvil = engine.anvil;
  if (anvil) {
    snapshotter = new Snapshotter({
      dir: path.join(dir, 'snapshots'),
      every: params.options.snapshotEvery ?? SNAPSHOT_EVERY_ENTRIES,
      coveredEntries: snapshot?.journal.entries ?? 0,
      coveredHead: snapshot?.head.number ?? -1,
      journalEntries: () => journal.count,
      // Most of the coprocessor's reading is done before the chain is held still.
      prepare: () => mock.catchUp(),
      capture: () =>
        chain.whileIdle(async () => {
          const position = journal.position;
          if (position.entries === snapshotter?.coveredEntries) return null;
          const head = await latestBlock(anvil);
          const chainState = await anvil.dumpState();
          const node = await chain.captureExtras();
          const coprocessor = await mock.saveDatabase();
          return {
            version: 1,
            journal: position,
            head,
            clockOffset: chain.clockOffset,
            chain: chainState,
            node,
            coprocessor,
          } satisfies ChainSnapshot;
        }),
      log: logger,
    });
    const taker = snapshotter;
    chain.onJournaled = () => taker.onJournaled();

    // A start that replayed journal entries saves the result, so the next start does not replay them again.
    if (entries.length > 0) taker.takeInBackground();
  }

  // The coprocessor follows the chain back; the newest snapshot may no longer start the journal.
  chain.onRewind = async (entry) => {
    await mock.rewind(entry.block);
    snapshotter?.onRewind(entry);
  };
  if (params.options.blockTime) await chain.startIntervalMining(params.options.blockTime);

  const rail = createFhevmRail('mock', async () => mock.instance);
  const durationMs = performance.now() - params.started;
  logger.info(
    `embedded chain ready in ${Math.round(durationMs)} ms (${params.firstStart ? 'first start' : `${snapshot ? `snapshot of ${snapshot.journal.entries} entries, then ` : ''}${entries.length} journal entries replayed`})`,
  );

  return {
    name: 'local',
    chainId: EMBEDDED_CHAIN_ID,
    chain: embeddedChain,
    publicClient,
    contracts,
    transferBatcher,
    explorerBaseUrl: null,
    upstreamRpcUrl: null,
    operator: { address: operatorAddress, privateKey: operatorKey },
    rail,
    rpc: (args) => {
      if (params.isClosed()) return Promise.reject(new Error('The embedded network is closed'));
      // The relayer methods answer like `hardhat node` with Zama's plugin: dApps build a MockFhevmInstance on /rpc.
      if (isRelayerMethod(args.method)) return mock.serveRelayer(args.method, args.params);
      if (NODE_IDENTITY_METHODS.has(args.method)) return answerNodeIdentity(args.method, chain);
      return chain.request(args);
    },
    startup: {
      durationMs,
      engine: params.engineName,
      snapshotEntries: snapshot?.journal.entries ?? null,
      replayedEntries: entries.length,
      droppedBytes,
      firstStart: params.firstStart,
    },
    journalLength: () => chain.journalLength,
    snapshotEntries: () => snapshotter?.coveredEntries ?? 0,
    async takeSnapshot() {
      if (!snapshotter) throw new Error('This data directory takes no snapshots (EDR engine)');
      await snapshotter.takeFinal();
    },
    async ready() {
      if (params.isClosed()) return { ok: false, detail: 'closed' };
      const exit = params.engineExit();
      if (exit) return { ok: false, detail: `chain engine (anvil) ${exit}` };
      try {
        await chain.request({ method: 'eth_blockNumber' });
        return { ok: true };
      } catch (error) {
        return { ok: false, detail: (error as Error).message };
      }
    },
    async close() {
      if (params.isClosed()) return;
      await params.close(chain, journal, snapshotter);
    },
  };
}
