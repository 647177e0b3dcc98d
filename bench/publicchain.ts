/**
 * Part `publicchain` (issue 27, item 6; `npm run bench -- publicchain`): the worker under a fee spike, on
 * `sealpay devnet --block-time 1` (a block each second, as a public chain) with `node src/main.ts start` on it
 * (NETWORK=devnet: API and worker in one process).
 *
 * 1. Calm: the base fee held at 1 gwei; 100 confidential transfers (10 wallets × 10) queued at once, polled to the
 *    end: how many CONFIRMED within 60 s, gas used and fee paid per transfer.
 * 2. Spike: mining stopped after the calm run's blocks at 1 gwei, the same 100 transfers queued and signed (each in
 *    the pool at the calm price), then from the next block the base fee held at 10 gwei for 60 s: the share
 *    CONFIRMED within the spike (target ≥ 90 %), and gas used and fee paid per transfer against the calm run's.
 * 3. Alone: the service restarted with WORKER_BATCH_MAX=1, 20 transfers one per transaction: gas per confidential
 *    transfer batched (the calm run's batches) against alone (target: batched ≤ ⅓).
 *
 * Gas is read from the receipts of the transactions the transfers' hashes name (a batch's legs share one).
 */
import { randomBytes } from 'node:crypto';
import {
  type Address,
  createPublicClient,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseGwei,
} from 'viem';
import { confidentialTokenAbi, transferBatcherAbi } from '../src/adapters/chain/contracts.ts';
import { devnetChain } from '../src/adapters/chain/remote.ts';
import { hostArtifact, resolveHostAddresses } from '../src/adapters/confidential/fhevm-host.ts';
import {
  type Client,
  createWallet,
  freshDataDir,
  kill9,
  LOAD_ENV,
  listAll,
  readDevnetEnv,
  type ServiceProcess,
  signupWithKey,
  sleep,
  spawnService,
  stopGracefully,
  TERMINAL,
  waitForOutput,
  waitReady,
  waitTerminal,
} from '../test/faults/service.ts';
import { gasProfile, type NamedContract } from './gas-profile.ts';
import { post } from './startup.ts';

const WALLETS = 10;
const PER_WALLET = 10;
const SPIKE_MS = 60_000;
const ALONE = 20;
const CALM_FEE = parseGwei('1');
const SPIKE_FEE = 10n * CALM_FEE;

export interface PhaseFigures {
  transfers: number;
  confirmedWithin60s: number;
  confirmed: number;
  failed: number;
  /** Transactions the confirmed transfers took (a batch is one). */
  transactions: number;
  gasPerTransfer: number;
  /** gasUsed × effectiveGasPrice per confirmed transfer, in gwei. */
  feeGweiPerTransfer: number;
}

export interface PublicChainResult {
  calm: PhaseFigures;
  spike: PhaseFigures;
  alone: PhaseFigures;
  /** Confirmed within the 60 s spike / queued. */
  shareWithinSpike: number;
  shareTarget: number;
  /** Spike / calm, per transfer. */
  gasRatioSpikeToCalm: number;
  feeRatioSpikeToCalm: number;
  /** Gas per transfer batched (calm) / alone. */
  batchedToAlone: number;
  batchedTarget: number;
  /**
   * Where the gas of a transfer goes (`debug_traceTransaction`): one batch transaction of the calm run divided by its
   * legs, beside one transfer sent alone; by `Contract.function`, largest first.
   */
  profile: { part: string; batchedPerTransfer: number; alone: number }[];
  /** Legs of the batch transaction profiled. */
  profiledLegs: number;
  notes: string[];
}

interface Wallet {
  client: Client;
  wallet: { id: string; address: string };
}

export async function runPublicChainBench(): Promise<PublicChainResult> {
  const running: ServiceProcess[] = [];
  const devnet = await spawnService({
    command: 'devnet',
    args: ['--block-time', '1'],
    dataDir: freshDataDir('sealpay-bench-publicchain-devnet-'),
  });
  running.push(devnet);
  try {
    // A fresh devnet deploys the fhEVM host and the contracts: minutes on a loaded 2-core machine.
    await waitForOutput(devnet, /sealpay devnet: JSON-RPC/, 300_000);
    const settings = readDevnetEnv(devnet.dataDir);
    const chain = createPublicClient({ chain: devnetChain, transport: http(settings.RPC_URL as string) });
    const holdBaseFee = async (fee: bigint, until: number) => {
      while (Date.now() < until) {
        await chain.request({
          method: 'anvil_setNextBlockBaseFeePerGas' as never,
          params: [`0x${fee.toString(16)}`] as never,
        });
        await sleep(200);
      }
    };
    const dataDir = freshDataDir('sealpay-bench-publicchain-');
    const env = {
      ...LOAD_ENV,
      ...settings,
      MASTER_KEY: randomBytes(32).toString('hex'),
      // Enough gas for a transfer at ten times the calm price.
      FAUCET_GAS_TOP_UP: '1',
    };
    const startService = async (extra: Record<string, string> = {}) => {
      const service = await spawnService({ dataDir, env: { ...env, ...extra } });
      running.push(service);
      await waitReady(service, 300_000);
      return service;
    };
    let service = await startService();

    const wallets: Wallet[] = [];
    for (let i = 0; i < WALLETS; i++) {
      const client = await signupWithKey(service.baseUrl);
      wallets.push({ client, wallet: await createWallet(service.baseUrl, client) });
    }
    await Promise.all(
      wallets.map(async ({ client, wallet }) => {
        for (const path of ['/fund', '/mint']) {
          const id = await post(service, client, path, { walletId: wallet.id, amount: '100' });
          const done = await waitTerminal(service.baseUrl, client, id, 120_000);
          if (done.status !== 'CONFIRMED') throw new Error(`${path}: ${done.status} ${done.errorCode}`);
        }
      }),
    );

    /** Queues `perWallet` transfers from each wallet to the next one; answers their ids. */
    const queue = async (perWallet: number, count = wallets.length) => {
      const ids = await Promise.all(
        Array.from({ length: count * perWallet }, (_, n) => {
          const i = n % count;
          const from = wallets[i] as Wallet;
          const to = wallets[(i + 1) % wallets.length] as Wallet;
          return post(service, from.client, '/transfer', {
            walletId: from.wallet.id,
            to: to.wallet.address,
            amount: '0.25',
          });
        }),
      );
      return new Set(ids);
    };
    const read = async (ids: Set<string>) =>
      (await Promise.all(wallets.map((w) => listAll(service.baseUrl, w.client))))
        .flat()
        .filter((t) => ids.has(t.id));
    /** Polls until every transfer is terminal or `deadline`; counts those CONFIRMED by `checkpoint`. */
    const follow = async (ids: Set<string>, checkpoint: number, deadline: number) => {
      let confirmedAtCheckpoint: number | null = null;
      for (;;) {
        const transfers = await read(ids);
        const confirmed = transfers.filter((t) => t.status === 'CONFIRMED').length;
        const finished = transfers.length === ids.size && transfers.every((t) => TERMINAL.has(t.status));
        // The first poll at the checkpoint, or the end if everything ended before it.
        if (confirmedAtCheckpoint === null && (Date.now() >= checkpoint || finished)) {
          confirmedAtCheckpoint = confirmed;
        }
        if (finished || Date.now() > deadline) {
          return { transfers, confirmedAtCheckpoint: confirmedAtCheckpoint ?? confirmed };
        }
        await sleep(500);
      }
    };
    const figures = async (
      ids: Set<string>,
      outcome: Awaited<ReturnType<typeof follow>>,
    ): Promise<PhaseFigures> => {
      const confirmed = outcome.transfers.filter((t) => t.status === 'CONFIRMED' && t.txHash);
      const hashes = [...new Set(confirmed.map((t) => t.txHash as Hex))];
      let gas = 0n;
      let fee = 0n;
      for (const hash of hashes) {
        const receipt = await chain.getTransactionReceipt({ hash });
        gas += receipt.gasUsed;
        fee += receipt.gasUsed * receipt.effectiveGasPrice;
      }
      const per = (value: bigint) => (confirmed.length ? Number(value) / confirmed.length : 0);
      return {
        transfers: ids.size,
        confirmedWithin60s: outcome.confirmedAtCheckpoint,
        confirmed: confirmed.length,
        failed: outcome.transfers.filter((t) => t.status === 'FAILED').length,
        transactions: hashes.length,
        gasPerTransfer: Math.round(per(gas)),
        feeGweiPerTransfer: Math.round((per(fee) / 1e9) * 1000) / 1000,
      };
    };

    // 1. Calm.
    let holding = true;
    const calmHolder = (async () => {
      while (holding) await holdBaseFee(CALM_FEE, Date.now() + 1000);
    })();
    await sleep(3000);
    let ids = await queue(PER_WALLET);
    let started = Date.now();
    const calmOutcome = await follow(ids, started + SPIKE_MS, started + 180_000);
    const calm = await figures(ids, calmOutcome);
    const profileNotes: string[] = [];
    const named = await namedContracts(chain as PublicClient, settings);
    const calmTrace = await traceNow(chain as PublicClient, named, calmOutcome.transfers, profileNotes);

    // 2. Spike: queued and signed at the calm price while no block is mined (so that none is mined before the
    // spike, however slow the machine), then ten times that price from the next block, for 60 s.
    holding = false;
    await calmHolder;
    await chain.request({ method: 'evm_setIntervalMining' as never, params: [0] as never });
    ids = await queue(PER_WALLET);
    const signedBy = Date.now() + 60_000;
    while (Date.now() < signedBy) {
      const transfers = await read(ids);
      if (transfers.every((t) => t.status === 'PENDING' && t.txHash)) break;
      await sleep(500);
    }
    await chain.request({
      method: 'anvil_setNextBlockBaseFeePerGas' as never,
      params: [`0x${SPIKE_FEE.toString(16)}`] as never,
    });
    await chain.request({ method: 'evm_setIntervalMining' as never, params: [1] as never });
    started = Date.now();
    const spikeHolder = holdBaseFee(SPIKE_FEE, started + SPIKE_MS);
    const spikeOutcome = await follow(ids, started + SPIKE_MS, started + SPIKE_MS + 120_000);
    await spikeHolder;
    const spike = await figures(ids, spikeOutcome);

    // 3. Alone: one transfer per transaction.
    await stopGracefully(service);
    service = await startService({ WORKER_BATCH_MAX: '1' });
    holding = true;
    const aloneHolder = (async () => {
      while (holding) await holdBaseFee(CALM_FEE, Date.now() + 1000);
    })();
    ids = await queue(ALONE / WALLETS);
    started = Date.now();
    const aloneOutcome = await follow(ids, started + SPIKE_MS, started + 180_000);
    const alone = await figures(ids, aloneOutcome);
    holding = false;
    await aloneHolder;

    const aloneTrace = await traceNow(chain as PublicClient, named, aloneOutcome.transfers, profileNotes);
    const profile = profileOf(calmTrace, aloneTrace);
    const profiledLegs = profile.length > 0 ? (calmTrace?.legs ?? 0) : 0;
    const round = (value: number) => Math.round(value * 1000) / 1000;
    return {
      calm,
      spike,
      alone,
      shareWithinSpike: round(spike.confirmedWithin60s / spike.transfers),
      shareTarget: 0.9,
      gasRatioSpikeToCalm: calm.gasPerTransfer ? round(spike.gasPerTransfer / calm.gasPerTransfer) : 0,
      feeRatioSpikeToCalm: calm.feeGweiPerTransfer
        ? round(spike.feeGweiPerTransfer / calm.feeGweiPerTransfer)
        : 0,
      batchedToAlone: alone.gasPerTransfer ? round(calm.gasPerTransfer / alone.gasPerTransfer) : 0,
      batchedTarget: round(1 / 3),
      profile,
      profiledLegs,
      notes: [
        `base fee held at ${CALM_FEE / 10n ** 9n} gwei (calm, alone) and ${SPIKE_FEE / 10n ** 9n} gwei (spike, ${SPIKE_MS / 1000} s from the block after the transfers were queued)`,
        `the calm run's transfers went in ${calm.transactions} transactions; alone, ${alone.transactions} for ${alone.confirmed}`,
        'fee = gasUsed × effectiveGasPrice of each transaction, per confirmed transfer',
        ...profileNotes,
      ],
    };
  } finally {
    for (const process of running.reverse()) await kill9(process).catch(() => undefined);
  }
}

/** The contracts a gas profile names: the token, the batcher and the fhEVM host contracts. */
async function namedContracts(
  chain: PublicClient,
  settings: Record<string, string>,
): Promise<Map<Address, NamedContract>> {
  const host = await resolveHostAddresses(chain);
  return new Map<Address, NamedContract>([
    [
      getAddress(settings.CONFIDENTIAL_TOKEN_ADDRESS as string),
      { name: 'cSTABLE', abi: confidentialTokenAbi },
    ],
    [
      getAddress(settings.TRANSFER_BATCHER_ADDRESS as string),
      { name: 'TransferBatcher', abi: transferBatcherAbi },
    ],
    [getAddress(host.executor), { name: 'FHEVMExecutor', abi: hostArtifact('FHEVMExecutor').abi }],
    [getAddress(host.acl), { name: 'ACL', abi: hostArtifact('ACL').abi }],
    [getAddress(host.inputVerifier), { name: 'InputVerifier', abi: hostArtifact('InputVerifier').abi }],
    [getAddress(host.hcuLimit), { name: 'HCULimit', abi: hostArtifact('HCULimit').abi }],
    [getAddress(host.kmsVerifier), { name: 'KMSVerifier', abi: hostArtifact('KMSVerifier').abi }],
  ]);
}

/** The confirmed transfers' transaction with the most of them (a batch's legs share one), and how many. */
function biggestTransaction(transfers: { status: string; txHash?: string | null }[]): [Hex, number] | null {
  const legs = new Map<Hex, number>();
  for (const transfer of transfers) {
    if (transfer.status !== 'CONFIRMED' || !transfer.txHash) continue;
    const hash = transfer.txHash as Hex;
    legs.set(hash, (legs.get(hash) ?? 0) + 1);
  }
  return [...legs].sort((a, b) => b[1] - a[1])[0] ?? null;
}

/**
 * Traces the phase's biggest transaction at once (the devnet keeps the state of recent blocks only: a trace minutes
 * later answers "resource not found"); null, with the reason in `notes`, when it cannot.
 */
async function traceNow(
  chain: PublicClient,
  named: Map<Address, NamedContract>,
  transfers: { status: string; txHash?: string | null }[],
  notes: string[],
): Promise<{ parts: Map<string, bigint>; legs: number } | null> {
  const biggest = biggestTransaction(transfers);
  if (!biggest) return null;
  try {
    return { parts: await gasProfile(chain, biggest[0], named), legs: biggest[1] };
  } catch (error) {
    notes.push(
      `no gas profile: debug_traceTransaction ${biggest[0]} failed (${(error as Error).message.split('\n')[0]})`,
    );
    return null;
  }
}

/** The batched profile per leg beside the alone one, by `Contract.function`, largest alone first. */
function profileOf(
  batched: { parts: Map<string, bigint>; legs: number } | null,
  alone: { parts: Map<string, bigint>; legs: number } | null,
): PublicChainResult['profile'] {
  if (!batched || !alone) return [];
  const parts = new Set([...batched.parts.keys(), ...alone.parts.keys()]);
  return [...parts]
    .map((part) => ({
      part,
      batchedPerTransfer: Math.round(Number(batched.parts.get(part) ?? 0n) / batched.legs),
      alone: Number(alone.parts.get(part) ?? 0n),
    }))
    .sort((a, b) => b.alone - a.alone || b.batchedPerTransfer - a.batchedPerTransfer);
}
