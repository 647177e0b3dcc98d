/**
 * Injected faults: the worker runs over a network whose JSON-RPC and confidential rail misbehave. Broadcasts fail
 * before reaching the chain (10 %) or after it took them (20 %, the answer is lost), receipt requests time out
 * (15 %), other reads fail now and then (4 %), and the rail's encryptions and decryptions throw (20 %) for about
 * 20 s of mixed traffic. Then the faults stop, everything settles, and the invariants hold: all terminal, nothing sent twice, no FAILED that moved
 * funds, balances equal the transactions.
 */
import {
  type Address,
  createPublicClient,
  custom,
  erc20Abi,
  type Hex,
  type PublicClient,
  TransactionReceiptNotFoundError,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfidentialRail, Network } from '../../src/adapters/chain/types.ts';
import { decryptConfidentialBalance } from '../../src/adapters/confidential/helpers.ts';
import { chainSubmissions, transactions as transactionsTable } from '../../src/db/schema/index.ts';
import type { Deps } from '../../src/deps.ts';
import { formatAmount } from '../../src/lib/money.ts';
import { openWalletKey } from '../../src/modules/wallets/custody.ts';
import { findWalletById } from '../../src/modules/wallets/wallets.repository.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { type ApiResponse, apiOf } from '../api.ts';
import { type Caller, createTestContext, signup, type TestContext } from '../harness.ts';
import { type ChainView, checkInvariants, type RawLog, seededRandom, type TxView } from './invariants.ts';
import { sleep, TERMINAL } from './service.ts';

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(SEED);

interface FaultSwitch {
  on: boolean;
  injected: Record<string, number>;
}

function count(faults: FaultSwitch, what: string): void {
  faults.injected[what] = (faults.injected[what] ?? 0) + 1;
}

/** A network whose publicClient transport and rail inject faults while `faults.on`. */
function faultyNetwork(base: Network, faults: FaultSwitch): Network {
  const forward = (method: string, params: unknown) =>
    base.publicClient.request({ method, params } as never) as Promise<unknown>;
  const publicClient = createPublicClient({
    chain: base.chain,
    pollingInterval: 50,
    transport: custom(
      {
        async request({ method, params }: { method: string; params?: unknown }) {
          if (!faults.on) return forward(method, params);
          const roll = random();
          if (method === 'eth_sendRawTransaction') {
            if (roll < 0.1) {
              count(faults, 'send-before');
              throw new Error('injected fault: connection reset before the transaction was sent');
            }
            if (roll < 0.3) {
              await forward(method, params);
              count(faults, 'send-after');
              throw new Error('injected fault: connection reset after the transaction was sent');
            }
          } else if (method === 'eth_getTransactionReceipt') {
            if (roll < 0.15) {
              count(faults, 'receipt-timeout');
              await sleep(200);
              throw new Error('injected fault: the receipt request timed out');
            }
          } else if (roll < 0.04) {
            count(faults, `read:${method}`);
            throw new Error(`injected fault: ${method} unavailable`);
          }
          return forward(method, params);
        },
      },
      { retryCount: 0 },
    ),
  }) as PublicClient;
  const maybeFail = (what: string) => {
    if (faults.on && random() < 0.2) {
      count(faults, what);
      throw new Error(`injected fault: relayer ${what} failed`);
    }
  };
  const rail: ConfidentialRail = {
    kind: base.rail.kind,
    encryptAmount: async (params) => {
      maybeFail('encrypt');
      return base.rail.encryptAmount(params);
    },
    encryptAmounts: async (params) => {
      maybeFail('encrypt');
      return base.rail.encryptAmounts(params);
    },
    userDecrypt: async (params) => {
      maybeFail('userDecrypt');
      return base.rail.userDecrypt(params);
    },
    userDecryptMany: async (params) => {
      maybeFail('userDecrypt');
      return base.rail.userDecryptMany(params);
    },
    publicDecrypt: async (handles) => {
      maybeFail('publicDecrypt');
      return base.rail.publicDecrypt(handles);
    },
  };
  return { ...base, publicClient, rail };
}

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let stopWorker: (() => Promise<void>) | null = null;
const faults: FaultSwitch = { on: true, injected: {} };

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: { RATE_LIMIT_READS_PER_MINUTE: '1000000', RATE_LIMIT_WRITES_PER_MINUTE: '1000000' },
  });
  const base = ctx.deps.network as Network;
  const workerDeps: Deps = { ...ctx.deps, network: faultyNetwork(base, faults) };
  const log = (level: string) => (fields: unknown, message?: string) => {
    if (process.env.DEBUG_FAULTS)
      console.error(
        level,
        message,
        JSON.stringify(fields, (_k, v) =>
          v instanceof Error ? v.message.split('\n')[0] : typeof v === 'bigint' ? v.toString() : v,
        ),
      );
  };
  stopWorker = await startWorker(workerDeps, {
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
  } as never);
});
afterAll(async () => {
  await stopWorker?.();
  await ctx?.close();
});

/** The id of the transaction a money movement queued; any answer but 201 fails with its body. */
function queuedId(response: ApiResponse): string {
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`);
  return response.json().data.transaction.id as string;
}

async function waitAll(ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const rows = await ctx.deps.database.db.select().from(transactionsTable);
    const mine = rows.filter((row) => ids.includes(row.id));
    if (mine.every((row) => TERMINAL.has(row.status))) return;
    await sleep(100);
  }
}

describe('injected RPC and relayer faults', () => {
  it(`the worker ends every transaction truthfully (seed ${SEED})`, async () => {
    const callers = [await signup(ctx.app), await signup(ctx.app)];
    const wallets: { id: string; address: string; caller: Caller }[] = [];
    for (const caller of callers) {
      for (let i = 0; i < 2; i++) {
        const response = await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: caller.headers });
        wallets.push({ ...response.json().data.wallet, caller });
      }
    }
    const ids: string[] = [];
    // Backoffs (up to 60 s) are made due sooner by moving the worker's clock on 30 s every 3 s; a lease (120 s)
    // outlives any step, so no row is ever run twice at once.
    const hurry = setInterval(() => ctx.clock.advance(30_000), 3000);
    // Funds, then mints (the route checks the public balance, so funds must land first).
    const funds = await Promise.all(
      wallets.map((w) =>
        api
          .post('/fund', { body: { walletId: w.id, amount: '200' }, headers: w.caller.headers })
          .then(queuedId),
      ),
    );
    ids.push(...funds);
    await waitAll(funds, 90_000);
    const mints = await Promise.all(
      wallets.map((w) =>
        api
          .post('/mint', { body: { walletId: w.id, amount: '120' }, headers: w.caller.headers })
          .then(queuedId),
      ),
    );
    ids.push(...mints);
    await waitAll(mints, 90_000);
    // Transfers (some larger than any balance), redeems and more funds and mints, all at once.
    const mixed: Promise<string>[] = [];
    for (let n = 0; n < 60; n++) {
      const wallet = wallets[n % wallets.length] as (typeof wallets)[number];
      const other = wallets[(n + 1 + (n % 3)) % wallets.length] as (typeof wallets)[number];
      const roll = random();
      const { headers } = wallet.caller;
      if (roll < 0.08) {
        mixed.push(api.post('/fund', { body: { walletId: wallet.id, amount: '5' }, headers }).then(queuedId));
      } else if (roll < 0.16) {
        mixed.push(api.post('/mint', { body: { walletId: wallet.id, amount: '3' }, headers }).then(queuedId));
      } else if (roll < 0.3) {
        mixed.push(
          api.post('/redeem', { body: { walletId: wallet.id, amount: '2.5' }, headers }).then(queuedId),
        );
      } else {
        const amount = roll > 0.9 ? '9000' : (1 + Math.floor(random() * 5)).toString();
        const body = { walletId: wallet.id, to: other.address, amount };
        mixed.push(api.post('/transfer', { body, headers }).then(queuedId));
      }
    }
    ids.push(...(await Promise.all(mixed)));
    // Faults for a while, then a healthy network so that everything settles.
    await waitAll(ids, 20_000);
    faults.on = false;
    await waitAll(ids, 90_000);
    clearInterval(hurry);

    const { db } = ctx.deps.database;
    const rows = (await db.select().from(transactionsTable)).filter((row) => ids.includes(row.id));
    const base = ctx.deps.network as Network;
    const transactions: TxView[] = rows.map((row) => ({
      id: row.id,
      type: row.type,
      direction: row.direction,
      status: row.status,
      amount: formatAmount(BigInt(row.amount ?? 0)),
      walletId: row.walletId,
      txHash: row.txHash,
      settlementTxHash: row.settlementTxHash,
      errorCode: row.errorCode,
      fromAddress: row.fromAddress,
      toAddress: row.toAddress,
    }));
    const chain: ChainView = {
      contracts: base.contracts,
      logs: async (fromBlock) =>
        (await base.publicClient.request({
          method: 'eth_getLogs',
          params: [
            {
              fromBlock: `0x${fromBlock.toString(16)}`,
              toBlock: 'latest',
              address: [base.contracts.stablecoin, base.contracts.confidentialToken],
            },
          ],
        } as never)) as RawLog[],
      publicBalance: (address) =>
        base.publicClient.readContract({
          address: base.contracts.stablecoin,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [address],
        }),
      receiptStatus: async (hash) => {
        try {
          return (await base.publicClient.getTransactionReceipt({ hash })).status;
        } catch (error) {
          if (error instanceof TransactionReceiptNotFoundError) return null;
          throw error;
        }
      },
      confidentialBalance: async (wallet) => {
        const row = await findWalletById(db, wallet.id);
        if (!row) throw new Error(`no wallet ${wallet.id}`);
        return decryptConfidentialBalance(base, openWalletKey(ctx.deps.keyring, row));
      },
    };
    const report = await checkInvariants({ chain, fromBlock: 0n, transactions, wallets });
    console.info(
      `injected faults (seed ${SEED}):`,
      JSON.stringify(faults.injected),
      JSON.stringify(report.counts),
    );
    if (report.problems.length > 0) {
      // What a stuck row was waiting for: its step, batch, attempts, lease and the submissions signed for it.
      const allSubmissions = await db.select().from(chainSubmissions);
      for (const row of rows.filter((r) => !TERMINAL.has(r.status))) {
        console.info(
          'unfinished',
          JSON.stringify({
            id: row.id,
            type: row.type,
            status: row.status,
            step: row.step,
            batchId: row.batchId,
            attempts: row.attempts,
            nextAttemptAt: row.nextAttemptAt,
            leaseOwner: row.leaseOwner,
            leaseUntil: row.leaseUntil,
            submissions: allSubmissions
              .filter((s) => s.transactionId === row.id || s.transactionId === row.batchId)
              .map((s) => ({
                purpose: s.purpose,
                from: s.fromAddress,
                nonce: s.nonce,
                status: s.status,
                hash: s.txHash,
              })),
          }),
        );
      }
    }
    expect(report.problems).toEqual([]);

    // Signed bytes: each (transaction, purpose) once, each hash once, every one of them mined.
    const submissions = (await db.select().from(chainSubmissions)).filter((s) =>
      ids.includes(s.transactionId),
    );
    expect(new Set(submissions.map((s) => `${s.transactionId}/${s.purpose}`)).size).toBe(submissions.length);
    expect(new Set(submissions.map((s) => s.txHash)).size).toBe(submissions.length);
    for (const submission of submissions) {
      const receipt = await base.publicClient.getTransactionReceipt({ hash: submission.txHash as Hex });
      expect(receipt.transactionHash).toBe(submission.txHash);
    }
    // Each custodial wallet's chain nonce is exactly the number of transactions the database signed for it.
    for (const wallet of wallets) {
      const signed = submissions.filter((s) => s.fromAddress.toLowerCase() === wallet.address.toLowerCase());
      const nonce = await base.publicClient.getTransactionCount({ address: wallet.address as Address });
      expect(nonce).toBe(signed.length);
    }
    expect(Object.values(faults.injected).reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    expect(report.counts.TRANSFER_CONFIRMED ?? 0).toBeGreaterThan(10);
  }, 300_000);
});
