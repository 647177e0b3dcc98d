/**
 * `NETWORK=local`: the embedded network. In-process EDR (chain 31337), the fhEVM host contracts and mock stack,
 * our three contracts deployed by the operator at first start, and a journal that makes it all survive restarts.
 *
 * Data directory layout (`{dataDir}/chain/`):
 * - `operator.key`  the operator's private key (hex, mode 0600), generated on first start;
 * - `state.json`    genesis time, mock KMS/coprocessor signer keys, deployed addresses (mode 0600);
 * - `journal.jsonl` every state-changing request the chain executed, replayed at start (see journal.ts).
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
import { createMockFhevm, deployFhevmHost, type MockSignerKeys } from '../confidential/fhevm-mock.ts';
import { createFhevmRail } from '../confidential/fhevm-rail.ts';
import { isRelayerMethod } from '../confidential/relayer-methods.ts';
import { CONTRACT_NAMES, loadArtifact } from './contracts.ts';
import { createEdrProvider, EMBEDDED_CHAIN_ID } from './edr.ts';
import { Journal, type JournalEntry, readJournal } from './journal.ts';
import { JournaledChain } from './journaled-chain.ts';
import { sendTransactionOrThrow } from './tx.ts';
import type { ContractAddresses, Network } from './types.ts';

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface EmbeddedNetworkOptions {
  dataDir: string;
  logger?: Logger;
}

/** The embedded network, with a few extras for tests and diagnostics. */
export interface EmbeddedNetwork extends Network {
  readonly name: 'local';
  readonly rpc: (args: { method: string; params?: unknown }) => Promise<unknown>;
  /** Start figures: how long the start took, how many journal entries were replayed. */
  readonly startup: {
    durationMs: number;
    replayedEntries: number;
    droppedBytes: number;
    firstStart: boolean;
  };
  /** Number of entries in the journal. */
  journalLength(): number;
}

interface PersistedState {
  version: 1;
  genesisTimestamp: number;
  operatorAddress: Address;
  mockSigners: MockSignerKeys;
  contracts: ContractAddresses | null;
}

/** Gas currency given to the operator at genesis (it funds custodial wallets' gas from there). */
export const OPERATOR_GENESIS_BALANCE = 10n ** 9n * 10n ** 18n;

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

export async function createEmbeddedNetwork(options: EmbeddedNetworkOptions): Promise<EmbeddedNetwork> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const dir = path.join(options.dataDir, 'chain');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLock(dir);
  try {
    return await startEmbeddedNetwork(dir, logger, started, releaseLock);
  } catch (error) {
    releaseLock();
    throw error;
  }
}

async function startEmbeddedNetwork(
  dir: string,
  logger: Logger,
  started: number,
  releaseLock: () => void,
): Promise<EmbeddedNetwork> {
  const operatorKey = loadOrCreateOperatorKey(dir);
  const operatorAddress = privateKeyToAccount(operatorKey).address;
  const stateFile = path.join(dir, 'state.json');
  const journalFile = path.join(dir, 'journal.jsonl');

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
    if (existsSync(journalFile)) rmSync(journalFile);
    state = {
      version: 1,
      genesisTimestamp: state?.genesisTimestamp ?? Math.floor(Date.now() / 1000) - 1,
      operatorAddress,
      mockSigners: state?.mockSigners ?? {
        kmsSignerKey: generatePrivateKey(),
        coprocessorSignerKey: generatePrivateKey(),
      },
      contracts: null,
    };
    writeSecretFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  }
  const firstStart = state.contracts === null;

  const edr = await createEdrProvider({
    genesisTimestamp: BigInt(state.genesisTimestamp),
    fundedAccounts: [{ address: operatorAddress, balance: OPERATOR_GENESIS_BALANCE }],
  });
  const chain = new JournaledChain(edr);
  await chain.init();

  const { entries, droppedBytes } = readJournal(journalFile);
  if (droppedBytes > 0) logger.warn(`chain journal: dropped a torn last line (${droppedBytes} bytes)`);
  const replayedInputs: Extract<JournalEntry, { k: 'input' }>[] = [];
  chain.onInputEntry = async (entry) => {
    replayedInputs.push(entry);
  };
  const replayStarted = performance.now();
  await chain.replay(entries);
  if (entries.length > 0) {
    logger.info(
      `chain journal: replayed ${entries.length} entries in ${Math.round(performance.now() - replayStarted)} ms`,
    );
  }
  const journal = await Journal.open(journalFile, entries.length);
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
    await deployFhevmHost(chain, {
      owner: operatorAddress,
      signers: state.mockSigners,
      sendAsOwner: async (tx) => {
        await sendTransactionOrThrow(access, { privateKey: operatorKey, ...tx });
      },
    });
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
    writeSecretFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    logger.info(
      `embedded chain: fhEVM host contracts and ${Object.values(CONTRACT_NAMES).join(', ')} deployed in ${Math.round(performance.now() - deployStarted)} ms`,
    );
  }

  const mock = await createMockFhevm(chain, {
    signers: state.mockSigners,
    recordInput: (handles, values) => chain.recordInput(handles, values),
  });
  for (const entry of replayedInputs) await mock.insertInputs(entry.handles, entry.values);
  chain.onInputEntry = null;

  const rail = createFhevmRail('mock', async () => mock.instance);
  let closed = false;
  const durationMs = performance.now() - started;
  logger.info(
    `embedded chain ready in ${Math.round(durationMs)} ms (${firstStart ? 'first start' : `${entries.length} journal entries replayed`})`,
  );

  return {
    name: 'local',
    chainId: EMBEDDED_CHAIN_ID,
    chain: embeddedChain,
    publicClient,
    contracts,
    explorerBaseUrl: null,
    upstreamRpcUrl: null,
    operator: { address: operatorAddress, privateKey: operatorKey },
    rail,
    rpc: (args) => {
      if (closed) return Promise.reject(new Error('The embedded network is closed'));
      // The relayer methods answer like `hardhat node` with Zama's plugin: dApps build a MockFhevmInstance on /rpc.
      if (isRelayerMethod(args.method)) return mock.serveRelayer(args.method, args.params);
      return chain.request(args);
    },
    startup: { durationMs, replayedEntries: entries.length, droppedBytes, firstStart },
    journalLength: () => chain.journalLength,
    async ready() {
      if (closed) return { ok: false, detail: 'closed' };
      try {
        await chain.request({ method: 'eth_blockNumber' });
        return { ok: true };
      } catch (error) {
        return { ok: false, detail: (error as Error).message };
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await chain.drain();
      await journal.close();
      releaseLock();
    },
  };
}
