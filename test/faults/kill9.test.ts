/**
 * kill -9 at random moments: the service (`node src/main.ts start`, one DATA_DIR) is driven with a few hundred
 * fund / mint / transfer / redeem operations across accounts and wallets (some transfers larger than the balance), killed
 * with SIGKILL four times at random points and restarted on the same DATA_DIR. Once everything settles: every
 * transaction is terminal, nothing was sent twice or sent for a FAILED row (the chain's events and every address's
 * transactions are exactly what the database recorded), and balances equal what the transactions say.
 *
 * FAULT_SEED=<n> replays a run; the seed is printed when the test fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Address, createPublicClient, erc20Abi, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { chainSubmissions } from '../../src/db/schema/index.ts';
import { parseAmount, STABLE_DECIMALS } from '../../src/lib/money.ts';
import { type ChainView, checkInvariants, type RawLog, seededDraws, type TxView } from './invariants.ts';
import {
  type Client,
  createWallet,
  kill9,
  LOAD_ENV,
  listAll,
  request,
  type ServiceProcess,
  seededDataDir,
  signupWithKey,
  sleep,
  spawnService,
  stopGracefully,
  TERMINAL,
  waitReady,
} from './service.ts';

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const { random, pick, amount } = seededDraws(SEED);

const ACCOUNTS = 3;
const WALLETS_PER_ACCOUNT = 2;
const OPERATIONS = 200;
const KILLS = 4;

interface Operation {
  key: string;
  account: number;
  path: '/fund' | '/mint' | '/transfer' | '/redeem';
  body: Record<string, string>;
  outcome?: { status: number; transactionId?: string };
}

let service: ServiceProcess | null = null;
afterAll(async () => {
  if (service) await kill9(service);
});

async function rpc(baseUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await request(baseUrl, 'POST', '/rpc', {
    body: { jsonrpc: '2.0', id: 1, method, params },
  });
  if (response.body?.error) throw new Error(`${method}: ${response.body.error.message}`);
  return response.body.result;
}

describe('kill -9 at random moments', () => {
  it(`every transaction ends terminal, nothing is sent twice, balances match (seed ${SEED})`, async () => {
    const dataDir = seededDataDir('sealpay-kill9-');
    service = await spawnService({ dataDir, env: LOAD_ENV });
    await waitReady(service);
    const baseline = BigInt((await rpc(service.baseUrl, 'eth_blockNumber', [])) as string);

    const clients: Client[] = [];
    const wallets: { id: string; address: string; account: number }[] = [];
    for (let a = 0; a < ACCOUNTS; a++) {
      const client = await signupWithKey(service.baseUrl);
      clients.push(client);
      for (let w = 0; w < WALLETS_PER_ACCOUNT; w++) {
        wallets.push({ ...(await createWallet(service.baseUrl, client)), account: a });
      }
    }
    const external = `0x${Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join('')}`;

    // The operations: a fund and a mint per wallet first, then a random mix.
    const operations: Operation[] = [];
    const op = (account: number, path: Operation['path'], body: Record<string, string>) =>
      operations.push({ key: `op-${SEED}-${operations.length}`, account, path, body });
    for (const wallet of wallets) op(wallet.account, '/fund', { walletId: wallet.id, amount: '120' });
    for (const wallet of wallets) op(wallet.account, '/mint', { walletId: wallet.id, amount: '60' });
    while (operations.length < OPERATIONS) {
      const wallet = pick(wallets);
      const roll = random();
      if (roll < 0.12) op(wallet.account, '/fund', { walletId: wallet.id, amount: amount(1, 25) });
      else if (roll < 0.32) op(wallet.account, '/mint', { walletId: wallet.id, amount: amount(1, 15) });
      else if (roll < 0.38) op(wallet.account, '/redeem', { walletId: wallet.id, amount: amount(0.5, 6) });
      else {
        const to = random() < 0.15 ? external : pick(wallets.filter((w) => w.id !== wallet.id)).address;
        // About one transfer in eight is larger than any balance: a silent zero, FAILED with nothing moved.
        const value = random() < 0.12 ? amount(2000, 5000) : amount(0.5, 8);
        op(wallet.account, '/transfer', { walletId: wallet.id, to, amount: value });
      }
    }

    // Posting: each op is sent until it gets an answer (a POST cut by a kill is sent again with its
    // Idempotency-Key after the restart: it returns the original row or creates it once).
    let next = 0;
    const post = async (s: ServiceProcess, operation: Operation): Promise<boolean> => {
      try {
        const response = await request(s.baseUrl, 'POST', `/api/v1${operation.path}`, {
          headers: { ...(clients[operation.account] as Client).headers, 'idempotency-key': operation.key },
          body: operation.body,
          timeoutMs: 10_000,
        });
        if (response.status === 201) {
          operation.outcome = { status: 201, transactionId: response.body.data.transaction.id };
        } else if (response.status === 400) {
          operation.outcome = { status: 400 };
        } else {
          throw new Error(`${operation.path}: ${response.status} ${JSON.stringify(response.body)}`);
        }
        return true;
      } catch (error) {
        // A reset can arrive before the exit is seen: give the kill a moment to show.
        await Promise.race([s.exited, sleep(3000)]);
        if (s.child.exitCode === null && s.child.signalCode === null) throw error;
        return false; // killed mid-request: unknown, sent again later
      }
    };
    const runLife = async (s: ServiceProcess, budget: number, killAfterMs: number | null) => {
      let killed = false;
      const killer =
        killAfterMs === null
          ? null
          : sleep(killAfterMs).then(async () => {
              killed = true;
              await kill9(s);
            });
      // Unanswered operations of earlier lives first, then new ones, 3 at a time with small random gaps.
      const todo = [...operations.slice(0, next).filter((o) => !o.outcome)];
      const end = Math.min(operations.length, next + budget);
      for (; next < end; next++) todo.push(operations[next] as Operation);
      const lanes = Array.from({ length: 3 }, async () => {
        for (;;) {
          const operation = todo.shift();
          if (!operation || killed) return;
          if (!(await post(s, operation))) return;
          await sleep(Math.floor(random() * 40));
        }
      });
      await Promise.all(lanes);
      await killer;
    };

    const perLife = Math.ceil(OPERATIONS / (KILLS + 1));
    for (let life = 0; life <= KILLS; life++) {
      if (life > 0) {
        service = await spawnService({ dataDir, env: LOAD_ENV });
        await waitReady(service);
      }
      const last = life === KILLS;
      await runLife(service, last ? OPERATIONS : perLife, last ? null : 300 + Math.floor(random() * 5000));
    }
    const unanswered = operations.filter((o) => !o.outcome);
    expect(unanswered.map((o) => o.key)).toEqual([]);

    // Settle: every transaction of every account terminal (the last process finishes what the others left).
    const s = service;
    const deadline = Date.now() + 150_000;
    let transactions: TxView[] = [];
    for (;;) {
      transactions = (await Promise.all(clients.map((c) => listAll(s.baseUrl, c)))).flat();
      if (transactions.every((t) => TERMINAL.has(t.status))) break;
      if (Date.now() > deadline) break;
      await sleep(250);
    }

    // Idempotency under crashes: one transaction per accepted operation, no more (besides the money received,
    // recorded by the chain follower and checked with the invariants).
    const accepted = operations.filter((o) => o.outcome?.status === 201);
    expect(new Set(accepted.map((o) => o.outcome?.transactionId)).size).toBe(accepted.length);
    expect(transactions.filter((t) => t.direction !== 'in').length).toBe(accepted.length);

    const network = (await request(s.baseUrl, 'GET', '/api/v1/network')).body.data;
    const client = createPublicClient({ transport: http(`${s.baseUrl}/rpc`) });
    const walletOwner = new Map(wallets.map((w) => [w.id, clients[w.account] as Client]));
    const chain: ChainView = {
      contracts: network.contracts,
      logs: async (fromBlock) =>
        (await rpc(s.baseUrl, 'eth_getLogs', [
          {
            fromBlock: `0x${fromBlock.toString(16)}`,
            toBlock: 'latest',
            address: [network.contracts.stablecoin, network.contracts.confidentialToken],
          },
        ])) as RawLog[],
      publicBalance: (address) =>
        client.readContract({
          address: network.contracts.stablecoin,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [address],
        }),
      receiptStatus: async (hash) => {
        const receipt = (await rpc(s.baseUrl, 'eth_getTransactionReceipt', [hash])) as { status: Hex } | null;
        return receipt ? (receipt.status === '0x1' ? 'success' : 'reverted') : null;
      },
      confidentialBalance: async (wallet) => {
        const response = await request(s.baseUrl, 'GET', `/api/v1/balances?walletId=${wallet.id}`, {
          headers: (walletOwner.get(wallet.id) as Client).headers,
        });
        // A balance may be zero (a wallet that sent all it had): not an amount to send, which must be positive.
        return parseAmount(response.body.data.balances[0].confidential.amount, STABLE_DECIMALS, {
          positive: false,
        });
      },
    };
    const report = await checkInvariants({
      chain,
      fromBlock: baseline + 1n,
      transactions,
      wallets,
      receivers: [external as Address],
    });
    console.info(`kill -9 fault test (seed ${SEED}):`, JSON.stringify(report.counts));
    expect(report.problems).toEqual([]);

    // Every transaction the chain holds since the baseline, from any address, is one the database stored
    // before broadcasting, and every stored one is on the chain exactly once.
    const latest = BigInt((await rpc(s.baseUrl, 'eth_blockNumber', [])) as string);
    const onChain: { hash: string; from: string; nonce: number }[] = [];
    for (let n = baseline + 1n; n <= latest; n++) {
      const block = (await rpc(s.baseUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true])) as {
        transactions: { hash: Hex; from: Address; nonce: Hex }[];
      };
      for (const tx of block.transactions) {
        onChain.push({ hash: tx.hash.toLowerCase(), from: tx.from.toLowerCase(), nonce: Number(tx.nonce) });
      }
    }
    await stopGracefully(s);
    service = null;
    const database = await openDatabase({ databaseUrl: null, dataDir });
    const stored = await database.db.select().from(chainSubmissions);
    await database.close();
    // A step whose row ended before it was settled (an approve or gas top-up ahead of a FAILED step) may keep the
    // status SIGNED; what matters is that it is on the chain exactly once, like every other stored submission.
    const unsettled = stored.filter((row) => row.status === 'SIGNED').map((row) => row.purpose);
    if (unsettled.length > 0)
      console.info('submissions on chain but still marked SIGNED:', unsettled.join(', '));
    expect(onChain.map((tx) => tx.hash).sort()).toEqual(stored.map((row) => row.txHash.toLowerCase()).sort());
    const operator = privateKeyToAccount(
      readFileSync(join(dataDir, 'chain', 'operator.key'), 'utf8').trim() as Hex,
    ).address.toLowerCase();
    expect(stored.some((row) => row.fromAddress.toLowerCase() === operator)).toBe(true);
    expect(report.counts.TRANSFER_CONFIRMED ?? 0).toBeGreaterThan(20);
  }, 420_000);
});
