/**
 * Part d (`npm run bench -- scaleout`): the production topology on one machine.
 *
 * 1. Confidential transfers per second through the API: `sealpay devnet`, one `serve` and one `worker` on a fresh
 *    PostgreSQL database, 200 transfers (4 senders × 50) all in flight, polled to CONFIRMED; then two more workers
 *    join and the same 200 transfers run again (same run, same devnet, same API process).
 * 2. Restart of the devnet after 50 and after 2,000 confidential transfers (sent straight to it with the relayer
 *    methods, as a dApp would): SIGTERM, then start to serving JSON-RPC, and start to the first decryption answered.
 *
 * Needs PostgreSQL: DATABASE_URL (a server it may create a database on), default postgres://postgres@127.0.0.1:5432/postgres.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
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
import { type LatencyFigures, PER_SENDER, runApiTransfers, SENDERS } from './transfers.ts';

export interface ScaleoutResult {
  transfers: number;
  oneWorker: LatencyFigures & { confirmed: number; failed: number };
  threeWorkers: LatencyFigures & { confirmed: number; failed: number };
  restart: {
    after: number;
    servingMs: number;
    firstDecryptionMs: number;
  }[];
  /** restart after 2,000 / restart after 50 (first decryption answered). */
  restartRatio: number;
  restartTarget: number;
  notes: string[];
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

/** A devnet with `count` confidential transfers, stopped with SIGTERM and started again: what the start costs. */
async function measureRestart(count: number) {
  const dataDir = freshDataDir('sealpay-bench-devnet-');
  let devnet = await startDevnet(dataDir);
  const network = devnetNetwork(readDevnetEnv(dataDir));
  const key = await sendConfidentialTransfers(network, count);
  await stopGracefully(devnet);
  devnet = await startDevnet(dataDir, devnet.port);
  const servingMs = performance.now() - devnet.spawnedAt;
  // The mock coprocessor must know every handle before it can answer: a decryption after the start shows it.
  const fresh = devnetNetwork(readDevnetEnv(dataDir));
  await decryptConfidentialBalance(fresh, key);
  const firstDecryptionMs = performance.now() - devnet.spawnedAt;
  await stopGracefully(devnet);
  return { after: count, servingMs: Math.round(servingMs), firstDecryptionMs: Math.round(firstDecryptionMs) };
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
    for (const process of processes.splice(0)) await kill9(process);

    const restart = [await measureRestart(50), await measureRestart(2000)];
    const [small, large] = restart as [(typeof restart)[0], (typeof restart)[0]];
    return {
      transfers: SENDERS * PER_SENDER,
      oneWorker,
      threeWorkers,
      restart,
      restartRatio: Number((large.firstDecryptionMs / small.firstDecryptionMs).toFixed(2)),
      restartTarget: 1.5,
      notes: [
        `API: sealpay devnet + 1 serve + 1 then 3 worker processes (WORKER_CONCURRENCY 8 each) on PostgreSQL; ${SENDERS} senders × ${PER_SENDER} transfers of 0.5 cSTABLE all in flight, polled every 25 ms`,
        'restart: a devnet with N confidential transfers sent straight to it (8 senders, relayer input proofs), SIGTERM, start again; serving = JSON-RPC listening; first decryption = a user decryption through the relayer methods answered (the mock coprocessor has caught up)',
      ],
    };
  } finally {
    for (const process of processes) await kill9(process);
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await admin.end();
  }
}
