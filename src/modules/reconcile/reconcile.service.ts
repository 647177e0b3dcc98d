/**
 * The reconciliation: the ledger proves itself against the chain. For one block (the last the chain follower
 * recorded, so money received after it is on neither side), every custodial wallet's STABLE and cSTABLE balances
 * against what its rows that moved money add up to; the letter vault's escrowed letters against the letters the
 * ledger says it holds; the operator's gas and how long it lasts; rows stuck PENDING or SETTLING and letters that
 * need review. Run by `sealpay reconcile` and by the worker every `RECONCILE_INTERVAL_MINUTES`.
 */
import { type Address, type Hex, parseTransaction, zeroHash } from 'viem';
import {
  CONFIDENTIAL_TOKEN_SYMBOL,
  confidentialTokenAbi,
  letterVaultAbi,
  STABLECOIN_SYMBOL,
  stablecoinAbi,
} from '../../adapters/chain/contracts.ts';
import type { Network } from '../../adapters/chain/types.ts';
import type { TransactionRow, WalletRow } from '../../db/schema/index.ts';
import { type Deps, typesWhere } from '../../deps.ts';
import type { Logger } from '../../lib/logger.ts';
import { formatAmount, GAS_DECIMALS, STABLE_DECIMALS } from '../../lib/money.ts';
import { readCursor } from '../incoming/incoming.repository.ts';
import { decryptBalance } from '../wallets/balances.ts';
import {
  allWallets,
  claimRun,
  HELD_LETTER_STATUSES,
  type LedgerSum,
  ledgerSums,
  letterLegsInFlight,
  lettersNeedingReview,
  recordRun,
  stuckRows,
  submissionsFrom,
  vaultLetters,
  walletsInFlight,
} from './reconcile.repository.ts';

export const RECONCILE_JOB = 'reconcile';
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** A row PENDING or SETTLING unchanged for longer than this is stuck. */
export const STUCK_AFTER_MS = 15 * MINUTE_MS;
/** The vault's record is read for held letters and for letters changed within this window. */
const VAULT_LOOKBACK_MS = 7 * DAY_MS;
/** The vault's letter state `Escrowed` (contracts/LetterVault.sol). */
const ESCROWED = 1;
/** Chain reads at once. */
const CONCURRENCY = 4;

export type Asset = typeof STABLECOIN_SYMBOL | typeof CONFIDENTIAL_TOKEN_SYMBOL;

/** One wallet and asset: amounts are decimal strings; `ledger` and `difference` null where not judged. */
export interface WalletCheck {
  walletId: string;
  address: Address;
  asset: Asset;
  ledger: string | null;
  chain: string | null;
  /** chain − ledger; null for an external wallet (reported, not judged). */
  difference: string | null;
}

export interface ReconcileReport {
  checkedAt: string;
  wallets: WalletCheck[];
  vault: { address: Address; letters: number; ledger: string; chain: string; difference: string };
  operator: { address: Address; gasBalance: string; spentLast7Days: string; daysLeft: number | null };
  stuck: { transactionId: string; walletId: string; type: string; status: string; since: string }[];
  needsReview: { letterId: string; walletId: string; status: string }[];
  differences: number;
}

/** Runs `work` over `items`, `CONCURRENCY` at a time, results in order. */
async function mapLimited<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, lane));
  return results;
}

/**
 * What a row that moved `total` does to its wallet's balance of `asset`: a mint turns STABLE into cSTABLE, a
 * redeem back (its burn counts from SETTLING, its payout once SETTLED), a faucet payment adds STABLE, a transfer
 * moves its token in or out, a letter's escrow takes cSTABLE and its claim or refund gives it.
 */
export function effectOn(sum: LedgerSum, asset: Asset): bigint {
  const { type, direction, status, token, total } = sum;
  switch (type) {
    case 'FUND':
      return asset === STABLECOIN_SYMBOL ? total : 0n;
    case 'MINT':
      return asset === STABLECOIN_SYMBOL ? -total : total;
    case 'REDEEM':
      if (asset === CONFIDENTIAL_TOKEN_SYMBOL) return -total;
      return status === 'SETTLED' ? total : 0n;
    case 'TRANSFER':
      if (token !== asset) return 0n;
      return direction === 'in' ? total : -total;
    case 'LETTER_ESCROW':
      return asset === CONFIDENTIAL_TOKEN_SYMBOL ? -total : 0n;
    case 'LETTER_CLAIM':
    case 'LETTER_REFUND':
      return asset === CONFIDENTIAL_TOKEN_SYMBOL ? total : 0n;
  }
}

const amount = (value: bigint) => formatAmount(value, STABLE_DECIMALS);

/**
 * The block both sides are read at: the chain's confirmed head once the follower has recorded it (waiting up to
 * `waitMs`), else the follower's last recorded block.
 */
async function checkpoint(deps: Deps, network: Network, waitMs: number): Promise<bigint> {
  const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
  const target = head - BigInt(deps.config.follower.confirmations);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const cursor = await readCursor(deps.database.db, network.chainId);
    if (cursor === null) return target;
    if (cursor >= target || Date.now() >= deadline) return cursor < target ? cursor : target;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface Measured {
  report: ReconcileReport;
  /** Differences that rows still moving may explain: measured again after a wait. */
  unsettled: boolean;
}

async function measure(deps: Deps, network: Network, waitMs: number): Promise<Measured> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const block = await checkpoint(deps, network, waitMs);
  const [walletRows, sums, inFlight, letters, legsMoving] = await Promise.all([
    allWallets(db),
    ledgerSums(db, block),
    walletsInFlight(db),
    vaultLetters(db, new Date(now.getTime() - VAULT_LOOKBACK_MS)),
    letterLegsInFlight(
      db,
      typesWhere(deps.operations, (operation) => operation.letterLeg),
    ),
  ]);
  const sumsByWallet = Map.groupBy(sums, (sum) => sum.walletId);
  const { stablecoin, confidentialToken, letterVault } = network.contracts;
  let unsettled = false;
  let differences = 0;
  const checks = await mapLimited(walletRows, async (wallet: WalletRow): Promise<WalletCheck[]> => {
    const publicBalance = await network.publicClient.readContract({
      address: stablecoin,
      abi: stablecoinAbi,
      functionName: 'balanceOf',
      args: [wallet.address],
      blockNumber: block,
    });
    if (wallet.type !== 'CUSTODIAL') {
      const chain = amount(publicBalance);
      return [
        {
          walletId: wallet.id,
          address: wallet.address,
          asset: STABLECOIN_SYMBOL,
          ledger: null,
          chain,
          difference: null,
        },
      ];
    }
    const handle: Hex = await network.publicClient.readContract({
      address: confidentialToken,
      abi: confidentialTokenAbi,
      functionName: 'confidentialBalanceOf',
      args: [wallet.address],
      blockNumber: block,
    });
    const confidential = handle === zeroHash ? 0n : await decryptBalance(deps, network, wallet, handle);
    const own = sumsByWallet.get(wallet.id) ?? [];
    return (
      [
        [STABLECOIN_SYMBOL, publicBalance],
        [CONFIDENTIAL_TOKEN_SYMBOL, confidential],
      ] as const
    ).map(([asset, chain]) => {
      const ledger = own.reduce((total, sum) => total + effectOn(sum, asset), 0n);
      const difference = chain - ledger;
      if (difference !== 0n) {
        differences += 1;
        if (inFlight.has(wallet.id)) unsettled = true;
      }
      return {
        walletId: wallet.id,
        address: wallet.address,
        asset,
        ledger: amount(ledger),
        chain: amount(chain),
        difference: amount(difference),
      };
    });
  });

  // The vault: what its escrowed letters hold (the operator may decrypt each letter's amount, not the vault's
  // balance) against what the letters the ledger says it holds were escrowed with.
  const records = await mapLimited(letters, async (letter) => {
    const [, state, handle] = await network.publicClient.readContract({
      address: letterVault,
      abi: letterVaultAbi,
      functionName: 'letterOf',
      args: [letter.vaultLetterId],
      blockNumber: block,
    });
    return { letter, state, handle };
  });
  const escrowed = records.filter((record) => record.state === ESCROWED && record.handle !== zeroHash);
  const held =
    escrowed.length === 0
      ? []
      : await network.rail.userDecryptMany({
          handles: escrowed.map((record) => ({ handle: record.handle, contract: confidentialToken })),
          privateKey: network.operator.privateKey,
        });
  const vaultChain = held.reduce((total, value) => total + value, 0n);
  const vaultLedger = letters
    .filter((letter) => (HELD_LETTER_STATUSES as readonly string[]).includes(letter.status))
    .reduce((total, letter) => total + BigInt(letter.amount), 0n);
  const vaultDifference = vaultChain - vaultLedger;
  if (vaultDifference !== 0n) {
    differences += 1;
    if (legsMoving) unsettled = true;
  }

  const [operator, stuck, review] = await Promise.all([
    operatorGas(deps, network, now),
    stuckRows(db, new Date(now.getTime() - STUCK_AFTER_MS)),
    lettersNeedingReview(db),
  ]);
  differences += stuck.length;
  return {
    unsettled,
    report: {
      checkedAt: now.toISOString(),
      wallets: checks.flat(),
      vault: {
        address: letterVault,
        letters: escrowed.length,
        ledger: amount(vaultLedger),
        chain: amount(vaultChain),
        difference: amount(vaultDifference),
      },
      operator,
      stuck: stuck.map((row: TransactionRow) => ({
        transactionId: row.id,
        walletId: row.walletId,
        type: row.type,
        status: row.status,
        since: row.updatedAt.toISOString(),
      })),
      needsReview: review.map((letter) => ({
        letterId: letter.id,
        walletId: letter.senderWalletId,
        status: letter.status,
      })),
      differences,
    },
  };
}

/**
 * The operator's gas: its balance now, what it spent over the last 7 days (the gas of every transaction it signed
 * and the value it sent, gas top-ups of sponsored wallets included), and how many days the balance lasts at that
 * rate (null: it spent nothing).
 */
async function operatorGas(deps: Deps, network: Network, now: Date): Promise<ReconcileReport['operator']> {
  const address = network.operator.address;
  const [balance, submissions] = await Promise.all([
    network.publicClient.getBalance({ address }),
    submissionsFrom(deps.database.db, address, new Date(now.getTime() - 7 * DAY_MS)),
  ]);
  const costs = await mapLimited(submissions, async (submission) => {
    const receipt = await network.publicClient.getTransactionReceipt({ hash: submission.txHash });
    const value = parseTransaction(submission.rawTx).value ?? 0n;
    return receipt.gasUsed * receipt.effectiveGasPrice + value;
  });
  const spent = costs.reduce((total, cost) => total + cost, 0n);
  // Days to two decimals, in bigint until the end: wei amounts pass a double's exact range.
  const daysLeft = spent === 0n ? null : Number((balance * 7n * 100n) / spent) / 100;
  return {
    address,
    gasBalance: formatAmount(balance, GAS_DECIMALS),
    spentLast7Days: formatAmount(spent, GAS_DECIMALS),
    daysLeft,
  };
}

export interface ReconcileOptions {
  /**
   * How long to wait for the follower to reach the chain's head, and then for rows still moving to settle, before a
   * difference they may explain counts (30 s).
   */
  settleMs?: number;
}

/** One reconciliation; throws when the chain cannot be read (the CLI's exit 2). */
export async function reconcile(deps: Deps, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const network = deps.network;
  if (!network) throw new Error('reconcile needs the chain, and this process has none');
  const settleMs = options.settleMs ?? 30_000;
  const deadline = Date.now() + settleMs;
  for (;;) {
    const { report, unsettled } = await measure(deps, network, Math.max(0, deadline - Date.now()));
    if (!unsettled || Date.now() >= deadline) {
      await recordRun(deps.database.db, RECONCILE_JOB, {
        checkedAt: new Date(report.checkedAt),
        differences: report.differences,
        operatorGasDaysLeft: report.operator.daysLeft,
      });
      return report;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * One warning line per difference: which wallet and asset, the vault, a stuck row. No amount of a confidential
 * balance (a log is read by more people than the ledger); public STABLE amounts are on chain for anyone anyway.
 */
export function logDifferences(logger: Logger, report: ReconcileReport): void {
  for (const check of report.wallets) {
    if (check.difference === null || check.difference === amount(0n)) continue;
    const shown =
      check.asset === STABLECOIN_SYMBOL
        ? { ledger: check.ledger, chain: check.chain, difference: check.difference }
        : {};
    logger.warn(
      { walletId: check.walletId, address: check.address, asset: check.asset, ...shown },
      'reconcile: the ledger and the chain differ',
    );
  }
  if (report.vault.difference !== amount(0n)) {
    logger.warn({ vault: report.vault.address }, 'reconcile: the letter vault holds other than its letters');
  }
  for (const row of report.stuck) {
    logger.warn({ ...row }, 'reconcile: a transaction is stuck');
  }
}

/**
 * The worker's run: takes this interval's run (one worker of many does), reconciles, logs each difference.
 * Returns the report, or null when another worker has this interval's run.
 */
export async function reconcileScheduled(
  deps: Deps,
  logger: Logger,
  options: ReconcileOptions = {},
): Promise<ReconcileReport | null> {
  const intervalMs = deps.config.reconcile.intervalMinutes * MINUTE_MS;
  const now = deps.clock.now();
  const taken = await claimRun(
    deps.database.db,
    RECONCILE_JOB,
    now,
    new Date(now.getTime() - intervalMs + MINUTE_MS / 2),
  );
  if (!taken) return null;
  const report = await reconcile(deps, options);
  logDifferences(logger, report);
  logger.info(
    { wallets: new Set(report.wallets.map((check) => check.walletId)).size, differences: report.differences },
    'reconcile done',
  );
  return report;
}

/**
 * Runs the reconciliation every `RECONCILE_INTERVAL_MINUTES` (0: never), once per interval however many workers
 * run; each worker asks every minute whether the interval's run is due. Returns its stopper.
 */
export function startReconciler(deps: Deps, logger: Logger): () => Promise<void> {
  if (deps.config.reconcile.intervalMinutes === 0) return async () => {};
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      running = reconcileScheduled(deps, logger)
        .catch((error: unknown) => logger.warn({ err: error }, 'reconcile could not run; will retry'))
        .finally(() => {
          if (!stopped) schedule(MINUTE_MS);
        });
    }, delayMs);
    timer.unref();
  };
  schedule(5_000);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
