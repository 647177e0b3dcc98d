/**
 * Part `batching` (issue 18, item 5): client CPU per confidential transfer with the real SDK's proof cost, each
 * transfer alone against the batches the worker makes.
 *
 * 200 confidential transfers from 20 custodial wallets (10 each, to the next wallet) are queued at once through the
 * API of `node src/main.ts start` (the embedded network, where the mock's proofs cost nothing); once all are
 * terminal, the batches the worker made are read back (transfers sharing a transaction hash) and checked against
 * `/metrics` (input proofs, encrypted amounts). Each proof is then priced at what the relayer SDK's real proof of
 * that many amounts cost on this machine (`bench/proof-costs.json`, from `npm run bench -- proofs`).
 */
import { readFileSync } from 'node:fs';
import {
  type Client,
  createWallet,
  freshDataDir,
  LOAD_ENV,
  listAll,
  type ServiceProcess,
  signupWithKey,
  sleep,
  spawnService,
  stopGracefully,
  TERMINAL,
  waitReady,
  waitTerminal,
} from '../test/faults/service.ts';
import { metricValue } from '../test/metrics-text.ts';
import { PROOF_COSTS_FILE, type ProofsResult } from './proofs.ts';
import { post } from './startup.ts';

const WALLETS = 20;
const PER_WALLET = 10;
const TARGET = 8;

export interface BatchingResult {
  transfers: number;
  wallets: number;
  confirmed: number;
  failed: number;
  wallMs: number;
  /** Legs per transaction, largest first (1 = a transfer that went alone). */
  batchSizes: number[];
  inputProofs: number;
  encryptedAmounts: number;
  cpuSecondsPerTransferUnbatched: number;
  cpuSecondsPerTransferBatched: number;
  ratio: number;
  target: number;
  notes: string[];
}

/** The measured CPU of one proof of `amounts` amounts: the smallest measured size that holds them. */
function proofCpuSeconds(costs: ProofsResult['costs'], amounts: number): number {
  const fitting = costs.filter((cost) => cost.amounts >= amounts).sort((a, b) => a.amounts - b.amounts)[0];
  const largest = costs[costs.length - 1];
  const cost = fitting ?? largest;
  if (!cost) throw new Error('bench/proof-costs.json holds no figures: run `npm run bench -- proofs`');
  return cost.cpuSeconds;
}

async function metric(service: ServiceProcess, name: string): Promise<number> {
  return metricValue(await (await fetch(`${service.baseUrl}/metrics`)).text(), name);
}

export async function runBatchingBench(proofs?: ProofsResult): Promise<BatchingResult> {
  const costs = (proofs ?? (JSON.parse(readFileSync(PROOF_COSTS_FILE, 'utf8')) as ProofsResult)).costs;
  const service = await spawnService({ dataDir: freshDataDir('sealpay-bench-batching-'), env: LOAD_ENV });
  try {
    await waitReady(service);
    const clients: Client[] = [];
    const wallets: { id: string; address: string }[] = [];
    for (let i = 0; i < WALLETS; i++) {
      const client = await signupWithKey(service.baseUrl);
      clients.push(client);
      wallets.push(await createWallet(service.baseUrl, client));
    }
    await Promise.all(
      clients.map(async (client, i) => {
        const walletId = (wallets[i] as { id: string }).id;
        for (const path of ['/fund', '/mint']) {
          const id = await post(service, client, path, { walletId, amount: '100' });
          if ((await waitTerminal(service.baseUrl, client, id)).status !== 'CONFIRMED') throw new Error(path);
        }
      }),
    );
    const proofsBefore = await metric(service, 'sealpay_input_proofs_total');
    const amountsBefore = await metric(service, 'sealpay_encrypted_amounts_total');
    const started = performance.now();
    const queued = await Promise.all(
      Array.from({ length: WALLETS * PER_WALLET }, (_, n) => {
        const i = n % WALLETS;
        return post(service, clients[i] as Client, '/transfer', {
          walletId: (wallets[i] as { id: string }).id,
          to: (wallets[(i + 1) % WALLETS] as { address: string }).address,
          amount: '0.5',
        }).then((id) => ({ id, client: i }));
      }),
    );
    const ids = new Set(queued.map((q) => q.id));
    const deadline = performance.now() + 300_000;
    let transfers: { status: string; txHash: string | null }[] = [];
    for (;;) {
      const lists = await Promise.all(clients.map((client) => listAll(service.baseUrl, client)));
      transfers = lists.flat().filter((t) => ids.has(t.id));
      if (transfers.length === ids.size && transfers.every((t) => TERMINAL.has(t.status))) break;
      if (performance.now() > deadline) throw new Error('the transfers did not all finish within 5 minutes');
      await sleep(250);
    }
    const wallMs = Math.round(performance.now() - started);
    const byHash = new Map<string, number>();
    for (const transfer of transfers) {
      if (transfer.txHash) byHash.set(transfer.txHash, (byHash.get(transfer.txHash) ?? 0) + 1);
    }
    const batchSizes = [...byHash.values()].sort((a, b) => b - a);
    const inputProofs = (await metric(service, 'sealpay_input_proofs_total')) - proofsBefore;
    const encryptedAmounts = (await metric(service, 'sealpay_encrypted_amounts_total')) - amountsBefore;
    const total = transfers.length;
    const unbatched = proofCpuSeconds(costs, 1);
    const batched = batchSizes.reduce((sum, size) => sum + proofCpuSeconds(costs, size), 0) / total;
    return {
      transfers: total,
      wallets: WALLETS,
      confirmed: transfers.filter((t) => t.status === 'CONFIRMED').length,
      failed: transfers.filter((t) => t.status === 'FAILED').length,
      wallMs,
      batchSizes,
      inputProofs,
      encryptedAmounts,
      cpuSecondsPerTransferUnbatched: round(unbatched),
      cpuSecondsPerTransferBatched: round(batched),
      ratio: round(unbatched / batched),
      target: TARGET,
      notes: [
        `batches read back from the transfers' hashes (${byHash.size} transactions) and /metrics (${inputProofs} input proofs, ${encryptedAmounts} amounts): they agree when every proof went out once`,
        'each proof priced at the real SDK proof of the smallest measured size that holds its amounts (bench/proof-costs.json)',
        'batches are cut at the fhEVM HCU limits: legs that chain one account’s balance deepen one dependency chain',
      ],
    };
  } finally {
    await stopGracefully(service).catch(() => service.child.kill('SIGKILL'));
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
