/**
 * Part d (`npm run bench -- scaleout`): the production topology on one machine.
 *
 * 1. Confidential transfers per second through the API: `sealpay devnet`, one `serve` and one `worker` on a fresh
 *    PostgreSQL database, 200 transfers (4 senders × 50) all in flight, polled to CONFIRMED; then two more workers
 *    join and the same 200 transfers run again (same run, same devnet, same API process).
 * 2. Restart after 50 and after 2,000 confidential transfers (sent straight to the chain with the relayer methods,
 *    as a dApp would) of the devnet and of `npm start` (its `/rpc`): SIGTERM, then start to serving (the devnet's
 *    JSON-RPC listening; `npm start`'s GET /readyz 200), and start to the first decryption answered; three restarts
 *    each, medians.
 *
 * Needs PostgreSQL: DATABASE_URL (a server it may create a database on), default postgres://postgres@127.0.0.1:5432/postgres.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createRemoteNetwork } from '../src/adapters/chain/remote.ts';
import { sendTransactionOrThrow } from '../src/adapters/chain/tx.ts';
import type { Network } from '../src/adapters/chain/types.ts';
import {
  decryptConfidentialBalance,
  encodeApprove,
  encodeConfidentialTransfer,
  encodeMint,
  encodeWrap,
} from '../src/adapters/confidential/helpers.ts';
import {
  devnetNetwork,
  freshDataDir,
  kill9,
  LOAD_ENV,
  readDevnetEnv,
  type ServiceProcess,
  spawnService,
  stopGracefully,
  waitForOutput,
  waitReady,
} from '../test/faults/service.ts';
import {
  type LatencyFigures,
  PER_SENDER,
  percentile,
  runApiTransfers,
  runDirectTransfersOn,
  SENDERS,
} from './transfers.ts';

export interface ScaleoutResult {
  transfers: number;
  oneWorker: LatencyFigures & { confirmed: number; failed: number };
  threeWorkers: LatencyFigures & { confirmed: number; failed: number };
  /** The same 200 transfers straight to the same devnet with viem, after the API runs. */
  direct: LatencyFigures;
  /** API (one worker) / direct, and API (three workers) / direct: issue 15's ≤ 1.25 on the devnet with PostgreSQL. */
  ratioOneWorker: number;
  ratioThreeWorkers: number;
  restart: RestartFigures[];
  /** Restart after 2,000 / restart after 50, the worst of the four (devnet, npm start; serving, first decryption). */
  restartRatio: number;
  restartTarget: number;
  notes: string[];
}

export interface RestartFigures {
  process: 'sealpay devnet' | 'npm start';
  after: number;
  /** Medians of `RESTARTS` restarts. */
  servingMs: number;
  firstDecryptionMs: number;
  /** Every restart measured, `serving/first decryption` ms. */
  samples: string;
}

const DEVNET_READY = /sealpay devnet: JSON-RPC/;

async function startDevnet(dataDir: string, port?: number): Promise<ServiceProcess> {
  const devnet = await spawnService({ command: 'devnet', dataDir, ...(port ? { port } : {}) });
  await waitForOutput(devnet, DEVNET_READY);
  return devnet;
}

/** `count` confidential transfers straight to the devnet (8 senders in parallel); returns one sender's key. */
async function sendConfidentialTransfers(network: Network, count: number): Promise<Hex> {
  const operator = network.operator.privateKey;
  const token = network.contracts.confidentialToken;
  const senders = Array.from({ length: 8 }, () => generatePrivateKey());
  // The operator's sends one after the other (one nonce sequence), the senders' own in parallel.
  for (const key of senders) {
    const address = privateKeyToAccount(key).address;
    await sendTransactionOrThrow(network, { privateKey: operator, to: address, value: 10n ** 18n });
    await sendTransactionOrThrow(network, {
      privateKey: operator,
      to: network.contracts.stablecoin,
      data: encodeMint(address, 10n ** 12n),
    });
  }
  await Promise.all(
    senders.map(async (key) => {
      const address = privateKeyToAccount(key).address;
      await sendTransactionOrThrow(network, {
        privateKey: key,
        to: network.contracts.stablecoin,
        data: encodeApprove(token, 10n ** 12n),
      });
      await sendTransactionOrThrow(network, {
        privateKey: key,
        to: token,
        data: encodeWrap(address, 10n ** 12n),
        gas: 600_000n,
      });
    }),
  );
  let next = 0;
  await Promise.all(
    senders.map(async (key, i) => {
      const from = privateKeyToAccount(key).address;
      const to = privateKeyToAccount(senders[(i + 1) % senders.length] as Hex).address;
      while (next < count) {
        next += 1;
        const encrypted = await network.rail.encryptAmount({ contract: token, caller: from, amount: 1_000n });
        await sendTransactionOrThrow(network, {
          privateKey: key,
          to: token,
          data: encodeConfidentialTransfer(to, encrypted),
          gas: 1_000_000n,
        });
      }
    }),
  );
  return senders[0] as Hex;
}

/** Restarts measured per case; the median is reported (the machine may be shared). */
const RESTARTS = 3;

function median(values: number[]): number {
  return Math.round(percentile(values, 50));
}

/** The medians of `RESTARTS` runs of `restart` (each a stop with SIGTERM, then a start measured). */
async function medianRestart(
  restart: () => Promise<{ servingMs: number; firstDecryptionMs: number }>,
): Promise<{ servingMs: number; firstDecryptionMs: number; samples: string }> {
  const runs = [];
  for (let n = 0; n < RESTARTS; n++) runs.push(await restart());
  return {
    servingMs: median(runs.map((r) => r.servingMs)),
    firstDecryptionMs: median(runs.map((r) => r.firstDecryptionMs)),
    samples: runs.map((r) => `${Math.round(r.servingMs)}/${Math.round(r.firstDecryptionMs)}`).join(', '),
  };
}

/** A devnet with `count` confidential transfers, stopped with SIGTERM and started again: what the start costs. */
export async function measureDevnetRestart(count: number): Promise<RestartFigures> {
  const dataDir = freshDataDir('sealpay-bench-devnet-');
  let devnet = await startDevnet(dataDir);
  const key = await sendConfidentialTransfers(devnetNetwork(readDevnetEnv(dataDir)), count);
  const figures = await medianRestart(async () => {
    await stopGracefully(devnet);
    devnet = await startDevnet(dataDir, devnet.port);
    const servingMs = performance.now() - devnet.spawnedAt;
    // The mock coprocessor must know every handle before it can answer: a decryption after the start shows it.
    await decryptConfidentialBalance(devnetNetwork(readDevnetEnv(dataDir)), key);
    return { servingMs, firstDecryptionMs: performance.now() - devnet.spawnedAt };
  });
  await stopGracefully(devnet);
  return { process: 'sealpay devnet', after: count, ...figures };
}

/** `npm start`'s embedded chain through its `/rpc` (relayer methods included), with the operator of its data directory. */
function embeddedNetworkOf(service: ServiceProcess): Network {
  const chainDir = join(service.dataDir, 'chain');
  const state = JSON.parse(readFileSync(join(chainDir, 'state.json'), 'utf8')) as {
    contracts: { stablecoin: Address; confidentialToken: Address; letterVault: Address };
  };
  return createRemoteNetwork({
    network: 'devnet',
    rpcUrl: `${service.baseUrl}/rpc`,
    operatorPrivateKey: readFileSync(join(chainDir, 'operator.key'), 'utf8').trim(),
    contracts: state.contracts,
  });
}

/** The same for `npm start`: serving = GET /readyz 200. */
export async function measureServiceRestart(count: number): Promise<RestartFigures> {
  const dataDir = freshDataDir('sealpay-bench-start-');
  let service = await spawnService({ dataDir, env: LOAD_ENV });
  await waitReady(service);
  const key = await sendConfidentialTransfers(embeddedNetworkOf(service), count);
  try {
    const figures = await medianRestart(async () => {
      await stopGracefully(service);
      service = await spawnService({ dataDir, env: LOAD_ENV, port: service.port });
      const servingMs = await waitReady(service);
      await decryptConfidentialBalance(embeddedNetworkOf(service), key);
      return { servingMs, firstDecryptionMs: performance.now() - service.spawnedAt };
    });
    return { process: 'npm start', after: count, ...figures };
  } finally {
    await stopGracefully(service);
  }
}

/** Restart after 2,000 / restart after 50 for each process and measure; the worst. */
function worstRestartRatio(restart: RestartFigures[]): number {
  const ratios = restart.flatMap((large) => {
    if (large.after !== 2000) return [];
    const small = restart.find((r) => r.process === large.process && r.after === 50);
    if (!small) return [];
    return [large.servingMs / small.servingMs, large.firstDecryptionMs / small.firstDecryptionMs];
  });
  return Number(Math.max(...ratios).toFixed(2));
}

export async function runScaleoutBench(): Promise<ScaleoutResult> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `sealpay_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const processes: ServiceProcess[] = [];
  try {
    const devnet = await startDevnet(freshDataDir('sealpay-bench-devnet-'));
    processes.push(devnet);
    const env = {
      ...LOAD_ENV,
      ...readDevnetEnv(devnet.dataDir),
      DATABASE_URL: url.toString(),
      MASTER_KEY: randomBytes(32).toString('hex'),
    };
    const migrate = await spawnService({ command: 'migrate', dataDir: freshDataDir(), env });
    if ((await migrate.exited).code !== 0) throw new Error(`migrate failed:\n${migrate.tail()}`);
    const api = await spawnService({ command: 'serve', dataDir: freshDataDir(), env });
    processes.push(api);
    await waitReady(api);
    const startWorker = async () => {
      const worker = await spawnService({
        command: 'worker',
        dataDir: freshDataDir(),
        env: { ...env, LOG_LEVEL: 'info' },
      });
      processes.push(worker);
      await waitForOutput(worker, /worker started/);
    };
    await startWorker();
    const oneWorker = await runApiTransfers(api);
    await startWorker();
    await startWorker();
    const threeWorkers = await runApiTransfers(api);
    // The service idle (every transfer confirmed), the same transfers from new wallets straight to the devnet.
    const direct = await runDirectTransfersOn(devnetNetwork(readDevnetEnv(devnet.dataDir)), {
      verify: false,
    });
    for (const process of processes.splice(0)) await kill9(process);

    const restart = [
      await measureDevnetRestart(50),
      await measureDevnetRestart(2000),
      await measureServiceRestart(50),
      await measureServiceRestart(2000),
    ];
    return {
      transfers: SENDERS * PER_SENDER,
      oneWorker,
      threeWorkers,
      direct,
      ratioOneWorker: Number((oneWorker.wallMs / direct.wallMs).toFixed(3)),
      ratioThreeWorkers: Number((threeWorkers.wallMs / direct.wallMs).toFixed(3)),
      restart,
      restartRatio: worstRestartRatio(restart),
      restartTarget: 1.5,
      notes: [
        `API: sealpay devnet + 1 serve + 1 then 3 worker processes (WORKER_CONCURRENCY 8 each) on PostgreSQL; ${SENDERS} senders × ${PER_SENDER} transfers of 0.5 cSTABLE all in flight, polled every 25 ms`,
        'direct: the same 200 transfers from 4 new wallets straight to the same devnet with viem (encrypt through its relayer methods, sign with a fixed gas limit, send, receipt), after the API runs',
        'restart: a devnet (or npm start, through its /rpc) with N confidential transfers sent straight to its chain (8 senders, relayer input proofs), SIGTERM, start again (3 times, medians; every sample in results.json); serving = JSON-RPC listening (npm start: GET /readyz 200); first decryption = a user decryption through the relayer methods answered (the mock coprocessor has caught up); ratio = the worst of the four 2,000 / 50',
      ],
    };
  } finally {
    for (const process of processes) await kill9(process);
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await admin.end();
  }
}
