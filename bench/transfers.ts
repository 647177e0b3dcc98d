/**
 * Part c: 200 confidential transfers through the API (`node src/main.ts start` as a child: POST /transfer → 201,
 * all 200 in flight, polled to CONFIRMED by listing each account's transfers every ~25 ms) against the same 200
 * transfers sent straight to an embedded chain with viem in this process (encrypt with the rail, sign, send raw,
 * wait for the receipt). Same shape both ways: 4 sender wallets × 50 transfers, each to the next wallet.
 */
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createEmbeddedNetwork } from '../src/adapters/chain/embedded.ts';
import {
  broadcastTransaction,
  sendTransactionOrThrow,
  signTransaction,
  waitForReceipt,
} from '../src/adapters/chain/tx.ts';
import type { Network } from '../src/adapters/chain/types.ts';
import {
  encodeApprove,
  encodeConfidentialTransfer,
  encodeMint,
  encodeWrap,
  verifyConfidentialTransfer,
} from '../src/adapters/confidential/helpers.ts';
import {
  type Client,
  createWallet,
  freshDataDir,
  LOAD_ENV,
  request,
  type ServiceProcess,
  signupWithKey,
  sleep,
  spawnService,
  stopGracefully,
  TERMINAL,
  waitReady,
  waitTerminal,
} from '../test/faults/service.ts';

export const SENDERS = 4;
export const PER_SENDER = 50;
const AMOUNT = '0.5';
const AMOUNT_UNITS = 500_000n;
/** A confidential transfer uses ~407k gas; the direct baseline signs with a fixed limit instead of estimating. */
const TRANSFER_GAS = 1_000_000n;

export interface LatencyFigures {
  wallMs: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  perSecond: number;
}

export interface TransfersResult {
  transfers: number;
  senders: number;
  api: LatencyFigures & { confirmed: number; failed: number; workerConcurrency: number };
  apiLightPolling: LatencyFigures & { confirmed: number; failed: number };
  direct: LatencyFigures;
  directWithVerification: LatencyFigures;
  ratio: number;
  ratioLightPolling: number;
  target: number;
  notes: string[];
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

function figures(wallMs: number, latencies: number[]): LatencyFigures {
  return {
    wallMs: Math.round(wallMs),
    medianMs: Math.round(percentile(latencies, 50)),
    p95Ms: Math.round(percentile(latencies, 95)),
    maxMs: Math.round(Math.max(...latencies)),
    perSecond: Number(((latencies.length * 1000) / wallMs).toFixed(1)),
  };
}

async function post(service: ServiceProcess, client: Client, path: string, body: unknown) {
  const response = await request(service.baseUrl, 'POST', `/api/v1${path}`, {
    headers: client.headers,
    body,
  });
  if (response.status !== 201)
    throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data.transaction as { id: string };
}

/** Through the API: returns the wall time, per-transfer latencies and outcome counts. */
export async function runApiTransfers(service: ServiceProcess, options: { pollMs?: number } = {}) {
  const pollMs = options.pollMs ?? 25;
  const clients: Client[] = [];
  const wallets: { id: string; address: string }[] = [];
  for (let i = 0; i < SENDERS; i++) {
    const client = await signupWithKey(service.baseUrl);
    clients.push(client);
    wallets.push(await createWallet(service.baseUrl, client));
  }
  // Setup: fund and mint each sender (100 STABLE: under the faucet cap).
  await Promise.all(
    clients.map(async (client, i) => {
      const wallet = wallets[i] as { id: string };
      const fund = await post(service, client, '/fund', { walletId: wallet.id, amount: '100' });
      if ((await waitTerminal(service.baseUrl, client, fund.id)).status !== 'CONFIRMED')
        throw new Error('fund');
      const mint = await post(service, client, '/mint', { walletId: wallet.id, amount: '100' });
      if ((await waitTerminal(service.baseUrl, client, mint.id)).status !== 'CONFIRMED')
        throw new Error('mint');
    }),
  );
  await sleep(500);

  const started = new Map<string, number>();
  const finished = new Map<string, number>();
  const statuses = new Map<string, string>();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SENDERS * PER_SENDER }, async (_, n) => {
      const i = n % SENDERS;
      const client = clients[i] as Client;
      const to = (wallets[(i + 1) % SENDERS] as { address: string }).address;
      const sentAt = performance.now();
      const transaction = await post(service, client, '/transfer', {
        walletId: (wallets[i] as { id: string }).id,
        to,
        amount: AMOUNT,
      });
      started.set(transaction.id, sentAt);
    }),
  );
  // Poll by listing each account's transfers (50 per account: one page) every ~25 ms.
  const total = SENDERS * PER_SENDER;
  const deadline = performance.now() + 120_000;
  while (finished.size < total) {
    if (performance.now() > deadline) throw new Error(`only ${finished.size}/${total} transfers finished`);
    const lists = await Promise.all(
      clients.map((client) =>
        request(service.baseUrl, 'GET', '/api/v1/transactions?type=TRANSFER&pageSize=100', {
          headers: client.headers,
        }),
      ),
    );
    const now = performance.now();
    for (const list of lists) {
      for (const item of list.body.data.items as { id: string; status: string }[]) {
        if (TERMINAL.has(item.status) && !finished.has(item.id) && started.has(item.id)) {
          finished.set(item.id, now);
          statuses.set(item.id, item.status);
        }
      }
    }
    if (finished.size < total) await sleep(pollMs);
  }
  const wallMs = Math.max(...finished.values()) - t0;
  const latencies = [...finished].map(([id, at]) => at - (started.get(id) as number));
  const outcomes = [...statuses.values()];
  return {
    ...figures(wallMs, latencies),
    confirmed: outcomes.filter((s) => s === 'CONFIRMED').length,
    failed: outcomes.filter((s) => s === 'FAILED').length,
  };
}

/**
 * The fhEVM mock's coprocessor cannot take concurrent decryptions: two `awaitCoprocessor` passes over the same event
 * cursor fail with "Parse event … in backward order". The direct baseline therefore decrypts one at a time.
 */
let decryptTail: Promise<unknown> = Promise.resolve();
function serialDecrypt<T>(work: () => Promise<T>): Promise<T> {
  const next = decryptTail.catch(() => {}).then(work);
  decryptTail = next;
  return next;
}

/** Straight to an embedded chain in this process, the same 200 transfers (optionally verified as the worker does). */
export async function runDirectTransfers(options: { verify: boolean }) {
  const network = await createEmbeddedNetwork({ dataDir: freshDataDir('sealpay-bench-direct-') });
  try {
    return await runDirectTransfersOn(network, options);
  } finally {
    await network.close();
  }
}

/**
 * The same 200 transfers straight to `network` with viem: new sender wallets funded by its operator, then every
 * transfer encrypted, signed and sent, its receipt awaited (and, with `verify`, its handle decrypted).
 */
export async function runDirectTransfersOn(network: Network, options: { verify: boolean }) {
  {
    const operator = network.operator.privateKey;
    const token = network.contracts.confidentialToken;
    const senders = Array.from({ length: SENDERS }, () => generatePrivateKey());
    const addresses = senders.map((key) => privateKeyToAccount(key).address);
    for (const address of addresses) {
      await sendTransactionOrThrow(network, { privateKey: operator, to: address, value: 10n ** 18n });
      await sendTransactionOrThrow(network, {
        privateKey: operator,
        to: network.contracts.stablecoin,
        data: encodeMint(address, 100_000_000n),
      });
    }
    await Promise.all(
      senders.map(async (key, i) => {
        const address = addresses[i] as Address;
        await sendTransactionOrThrow(network, {
          privateKey: key,
          to: network.contracts.stablecoin,
          data: encodeApprove(token, 100_000_000n),
        });
        await sendTransactionOrThrow(network, {
          privateKey: key,
          to: token,
          data: encodeWrap(address, 100_000_000n),
          gas: 600_000n,
        });
      }),
    );
    const nonces = await Promise.all(
      addresses.map((address) => network.publicClient.getTransactionCount({ address, blockTag: 'pending' })),
    );
    // All 200 in flight: encryption and signing run concurrently; each sender's sends go out in nonce order
    // (the automining chain refuses a nonce gap), receipts are awaited concurrently.
    const sendQueues: Promise<unknown>[] = senders.map(() => Promise.resolve());
    const latencies: number[] = [];
    let failures = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: SENDERS * PER_SENDER }, async (_, n) => {
        const i = n % SENDERS;
        const key = senders[i] as Hex;
        const from = addresses[i] as Address;
        const to = addresses[(i + 1) % SENDERS] as Address;
        const nonce = (nonces[i] as number) + Math.floor(n / SENDERS);
        const begun = performance.now();
        const encrypted = await network.rail.encryptAmount({
          contract: token,
          caller: from,
          amount: AMOUNT_UNITS,
        });
        const signed = await signTransaction(network, {
          privateKey: key,
          to: token,
          data: encodeConfidentialTransfer(to, encrypted),
          gas: TRANSFER_GAS,
          nonce,
        });
        const previous = sendQueues[i] as Promise<unknown>;
        const sent = previous.then(() => broadcastTransaction(network, signed.serialized));
        sendQueues[i] = sent.catch(() => {});
        await sent;
        const receipt = await waitForReceipt(network, signed.hash);
        let ok = receipt.status === 'success';
        if (ok && options.verify) {
          const verification = await serialDecrypt(() =>
            verifyConfidentialTransfer({
              network,
              receipt,
              from,
              to,
              expectedAmount: AMOUNT_UNITS,
              decryptAs: key,
            }),
          );
          ok = verification.ok;
        }
        if (!ok) failures += 1;
        latencies.push(performance.now() - begun);
      }),
    );
    const wallMs = performance.now() - t0;
    if (failures > 0) throw new Error(`${failures} direct transfers failed`);
    return figures(wallMs, latencies);
  }
}

async function throughApi(pollMs: number) {
  const service = await spawnService({ dataDir: freshDataDir(), env: LOAD_ENV });
  try {
    await waitReady(service);
    return await runApiTransfers(service, { pollMs });
  } finally {
    await stopGracefully(service);
  }
}

export async function runTransfersBench(): Promise<TransfersResult> {
  const api = await throughApi(25);
  console.error(`  api (list every 25 ms): ${JSON.stringify(api)}`);
  const apiLightPolling = await throughApi(250);
  console.error(`  api (list every 250 ms): ${JSON.stringify(apiLightPolling)}`);
  const direct = await runDirectTransfers({ verify: false });
  console.error(`  direct: ${JSON.stringify(direct)}`);
  const directWithVerification = await runDirectTransfers({ verify: true });
  return {
    transfers: SENDERS * PER_SENDER,
    senders: SENDERS,
    api: { ...api, workerConcurrency: Number(process.env.WORKER_CONCURRENCY ?? 8) },
    apiLightPolling,
    direct,
    directWithVerification,
    ratio: Number((api.wallMs / direct.wallMs).toFixed(3)),
    ratioLightPolling: Number((apiLightPolling.wallMs / direct.wallMs).toFixed(3)),
    target: 1.25,
    notes: [
      `${SENDERS} sender wallets × ${PER_SENDER} transfers of ${AMOUNT} cSTABLE, each wallet to the next`,
      'API: node src/main.ts start (fresh DATA_DIR each run) as a child; all 200 POST /transfer at once, then every account listed (GET /transactions?type=TRANSFER&pageSize=100) each round; latency = POST sent → CONFIRMED seen',
      `direct: an embedded network in this process; encryptAmount, sign (fixed gas ${TRANSFER_GAS}), sendRawTransaction, receipt; per-sender sends in nonce order`,
      'direct + silent-zero decryption also decrypts each transferred handle (the check the worker makes), one decryption at a time (the mock coprocessor cannot take concurrent ones); for reference, the ratio is against plain direct',
    ],
  };
}
