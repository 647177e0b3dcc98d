import { and, eq, gte, inArray, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Address } from 'viem';
import type { DbOrTx } from '../../db/client.ts';
import {
  chainSubmissions,
  type LetterRow,
  letters,
  type OperationsRunRow,
  operationsRuns,
  type TransactionRow,
  type TransactionType,
  transactions,
  type WalletRow,
  wallets,
} from '../../db/schema/index.ts';

/** The row statuses whose money has moved on chain: what the ledger adds up. */
const MOVED_STATUSES = ['CONFIRMED', 'SETTLED', 'SETTLING'] as const;
const IN_FLIGHT_STATUSES = ['QUEUED', 'PENDING', 'SETTLING'] as const;
/** Letters whose amount the vault holds. */
export const HELD_LETTER_STATUSES = ['ESCROWED', 'MAILED', 'CLAIMING'] as const;

export interface LedgerSum {
  walletId: string;
  type: TransactionRow['type'];
  direction: TransactionRow['direction'];
  status: TransactionRow['status'];
  token: string;
  /** Base units. */
  total: bigint;
}

export function allWallets(db: DbOrTx): Promise<WalletRow[]> {
  return db.select().from(wallets).orderBy(wallets.createdAt, wallets.id);
}

/**
 * What the rows that moved money add up to, per wallet, type, direction, status and token, counting rows mined at
 * or before `atBlock` (and rows without a block).
 */
export async function ledgerSums(db: DbOrTx, atBlock: bigint): Promise<LedgerSum[]> {
  const rows = await db
    .select({
      walletId: transactions.walletId,
      type: transactions.type,
      direction: transactions.direction,
      status: transactions.status,
      token: transactions.token,
      total: sql<string>`sum(${transactions.amount})::text`,
    })
    .from(transactions)
    .where(
      and(
        inArray(transactions.status, [...MOVED_STATUSES]),
        isNotNull(transactions.amount),
        or(isNull(transactions.blockNumber), lte(transactions.blockNumber, atBlock)),
      ),
    )
    .groupBy(
      transactions.walletId,
      transactions.type,
      transactions.direction,
      transactions.status,
      transactions.token,
    );
  return rows.map((row) => ({ ...row, total: BigInt(row.total ?? '0') }));
}

/** The wallets with a row still moving (QUEUED, PENDING, SETTLING): their balances may be between two steps. */
export async function walletsInFlight(db: DbOrTx): Promise<Set<string>> {
  const rows = await db
    .selectDistinct({ walletId: transactions.walletId })
    .from(transactions)
    .where(inArray(transactions.status, [...IN_FLIGHT_STATUSES]));
  return new Set(rows.map((row) => row.walletId));
}

/** Rows PENDING or SETTLING unchanged since `before`. */
export function stuckRows(db: DbOrTx, before: Date): Promise<TransactionRow[]> {
  return db
    .select()
    .from(transactions)
    .where(and(inArray(transactions.status, ['PENDING', 'SETTLING']), lt(transactions.updatedAt, before)))
    .orderBy(transactions.updatedAt)
    .limit(1000);
}

export function lettersNeedingReview(db: DbOrTx): Promise<LetterRow[]> {
  return db
    .select()
    .from(letters)
    .where(eq(letters.needsReview, true))
    .orderBy(letters.updatedAt)
    .limit(1000);
}

/**
 * The letters whose vault record to read: those the ledger says the vault holds, and those that changed since
 * `since` (a letter the ledger closed lately may still be held on chain). DRAFT letters never reached the vault.
 */
export function vaultLetters(db: DbOrTx, since: Date): Promise<LetterRow[]> {
  return db
    .select()
    .from(letters)
    .where(
      or(
        inArray(letters.status, [...HELD_LETTER_STATUSES]),
        and(gte(letters.updatedAt, since), sql`${letters.status} <> 'DRAFT'`),
      ),
    );
}

/** Whether a letter leg (a row of `legTypes`) is still moving (the vault may be between two steps). */
export async function letterLegsInFlight(db: DbOrTx, legTypes: readonly TransactionType[]): Promise<boolean> {
  if (legTypes.length === 0) return false;
  const [row] = await db
    .select({ id: transactions.id })
    .from(transactions)
    .where(
      and(inArray(transactions.type, [...legTypes]), inArray(transactions.status, [...IN_FLIGHT_STATUSES])),
    )
    .limit(1);
  return row !== undefined;
}

/** The mined submissions `from` signed since `since` (the operator's gas spend). */
export function submissionsFrom(db: DbOrTx, from: Address, since: Date) {
  return db
    .select({ txHash: chainSubmissions.txHash, rawTx: chainSubmissions.rawTx })
    .from(chainSubmissions)
    .where(
      and(
        sql`lower(${chainSubmissions.fromAddress}) = ${from.toLowerCase()}`,
        eq(chainSubmissions.status, 'MINED'),
        gte(chainSubmissions.createdAt, since),
      ),
    );
}

/**
 * Takes the job's run for this interval: true when no run of `name` started after `dueBefore` (this caller runs
 * it), false when another worker's did. One statement, so two workers never both take it.
 */
export async function claimRun(db: DbOrTx, name: string, now: Date, dueBefore: Date): Promise<boolean> {
  const taken = await db
    .insert(operationsRuns)
    .values({ name, startedAt: now })
    .onConflictDoUpdate({
      target: operationsRuns.name,
      set: { startedAt: now },
      setWhere: lte(operationsRuns.startedAt, dueBefore),
    })
    .returning({ name: operationsRuns.name });
  return taken.length > 0;
}

/**
 * Keeps what a run found (for `/metrics` in every process). A first row starts the schedule at the epoch: a run of
 * `sealpay reconcile` does not put off the worker's.
 */
export async function recordRun(
  db: DbOrTx,
  name: string,
  found: { checkedAt: Date; differences: number; operatorGasDaysLeft: number | null },
): Promise<void> {
  await db
    .insert(operationsRuns)
    .values({ name, startedAt: new Date(0), ...found })
    .onConflictDoUpdate({ target: operationsRuns.name, set: found });
}

export async function readRun(db: DbOrTx, name: string): Promise<OperationsRunRow | null> {
  const [row] = await db.select().from(operationsRuns).where(eq(operationsRuns.name, name)).limit(1);
  return row ?? null;
}
