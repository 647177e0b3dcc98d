/**
 * Signed chain transactions (`chain_submissions`) and the nonce counters they are signed under (`address_nonces`).
 */
import { and, asc, eq, inArray, isNotNull, notInArray, or, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { DbOrTx } from '../db/client.ts';
import { serviceNow } from '../db/schema/columns.ts';
import {
  addressNonces,
  chainSubmissionAttempts,
  chainSubmissions,
  type NewSubmission,
  type SubmissionAttemptRow,
  type SubmissionRow,
  transactions,
} from '../db/schema/index.ts';

/**
 * Purposes that move none of the client's funds: the operator's gas top-up, an ERC-20 approval, and a wallet's
 * grant of the TransferBatcher as its ERC-7984 operator.
 */
const NOTHING_MOVES: readonly string[] = ['gas', 'approve', 'operator-grant'];

/** The purpose of a confidential transfer sent alone (signed by the wallet itself). */
export const TRANSFER_PURPOSE = 'transfer';

/** The purpose of a batch's signed transaction, stored under the batch's first leg (its `batch_id`). */
export const BATCH_PURPOSE = 'batch';

export async function findSubmission(
  db: DbOrTx,
  transactionId: string,
  purpose: string,
): Promise<SubmissionRow | undefined> {
  const [row] = await db
    .select()
    .from(chainSubmissions)
    .where(and(eq(chainSubmissions.transactionId, transactionId), eq(chainSubmissions.purpose, purpose)))
    .limit(1);
  return row;
}

/** Of these transactions, those that already have a signed transaction stored for `purpose`. */
export async function findSignedFor(
  db: DbOrTx,
  transactionIds: readonly string[],
  purpose: string,
): Promise<string[]> {
  if (transactionIds.length === 0) return [];
  const signed = await db
    .select({ transactionId: chainSubmissions.transactionId })
    .from(chainSubmissions)
    .where(
      and(
        inArray(chainSubmissions.transactionId, [...transactionIds]),
        eq(chainSubmissions.purpose, purpose),
      ),
    );
  return signed.map((row) => row.transactionId);
}

/**
 * The signed transactions of `purpose` from `address` that no receipt has been recorded for yet, lowest nonce first
 * (whichever row they were signed for).
 */
export function findUnminedFrom(db: DbOrTx, address: Address, purpose: string): Promise<SubmissionRow[]> {
  return db
    .select()
    .from(chainSubmissions)
    .where(
      and(
        eq(chainSubmissions.fromAddress, address),
        eq(chainSubmissions.purpose, purpose),
        eq(chainSubmissions.status, 'SIGNED'),
      ),
    )
    .orderBy(chainSubmissions.nonce);
}

/**
 * Whether anything that moves the client's funds was signed for the transaction: its own submissions, or the
 * signed transaction of the batch it is a leg of.
 */
export async function hasValueMovingSubmission(db: DbOrTx, transactionId: string): Promise<boolean> {
  const batchOfRow = db
    .select({ batchId: transactions.batchId })
    .from(transactions)
    .where(eq(transactions.id, transactionId));
  const [row] = await db
    .select({ id: chainSubmissions.id })
    .from(chainSubmissions)
    .where(
      or(
        and(
          eq(chainSubmissions.transactionId, transactionId),
          notInArray(chainSubmissions.purpose, [...NOTHING_MOVES]),
        ),
        and(eq(chainSubmissions.purpose, BATCH_PURPOSE), inArray(chainSubmissions.transactionId, batchOfRow)),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * Takes the address's next nonce in one statement: the first use starts at the chain's count, and the counter is
 * never behind the chain (a key also used elsewhere, an exported wallet, moves the chain's count on).
 */
export async function allocateNonce(db: DbOrTx, address: Address, chainNonce: number): Promise<number> {
  const [allocated] = await db
    .insert(addressNonces)
    .values({ address, nextNonce: chainNonce + 1 })
    .onConflictDoUpdate({
      target: addressNonces.address,
      set: {
        nextNonce: sql`greatest(${addressNonces.nextNonce}, ${chainNonce}) + 1`,
        updatedAt: serviceNow,
      },
    })
    .returning({ next: addressNonces.nextNonce });
  return Number(allocated?.next) - 1;
}

/** Stores a new submission and its first attempt (the same bytes): call it inside a database transaction. */
export async function insertSubmission(db: DbOrTx, values: NewSubmission): Promise<SubmissionRow> {
  const [row] = await db.insert(chainSubmissions).values(values).returning();
  if (!row) throw new Error('insert into chain_submissions returned no row');
  await db
    .insert(chainSubmissionAttempts)
    .values({ id: `att_${row.id}`, submissionId: row.id, rawTx: row.rawTx, txHash: row.txHash });
  return row;
}

/** A submission's signed attempts, the first first (the last is the one broadcast now). */
export function listAttempts(db: DbOrTx, submissionId: string): Promise<SubmissionAttemptRow[]> {
  return db
    .select()
    .from(chainSubmissionAttempts)
    .where(eq(chainSubmissionAttempts.submissionId, submissionId))
    .orderBy(asc(chainSubmissionAttempts.createdAt), asc(chainSubmissionAttempts.id));
}

/**
 * Stores a replacement (signed, not yet broadcast) as the submission's latest attempt: its bytes and hash become
 * the submission's until one attempt is mined.
 */
export async function insertReplacement(
  db: DbOrTx,
  submission: SubmissionRow,
  attempt: { id: string; rawTx: Hex; txHash: Hex },
): Promise<SubmissionRow> {
  return db.transaction(async (tx) => {
    await tx.insert(chainSubmissionAttempts).values({ ...attempt, submissionId: submission.id });
    const [row] = await tx
      .update(chainSubmissions)
      .set({ rawTx: attempt.rawTx, txHash: attempt.txHash, updatedAt: serviceNow })
      .where(eq(chainSubmissions.id, submission.id))
      .returning();
    if (!row) throw new Error(`submission ${submission.id} vanished`);
    return row;
  });
}

/** The chain's height when the attempt was broadcast (the replacement rule counts blocks from it). */
export async function markAttemptSent(db: DbOrTx, attemptId: string, block: bigint): Promise<void> {
  await db
    .update(chainSubmissionAttempts)
    .set({ sentBlock: block })
    .where(eq(chainSubmissionAttempts.id, attemptId));
}

export async function deleteSubmission(db: DbOrTx, id: string): Promise<void> {
  await db.delete(chainSubmissions).where(eq(chainSubmissions.id, id));
}

/** Gives a withdrawn submission's nonce back, if no later nonce of its address was taken meanwhile. */
export async function releaseNonce(db: DbOrTx, submission: SubmissionRow): Promise<void> {
  await db
    .update(addressNonces)
    .set({ nextNonce: submission.nonce })
    .where(
      and(
        eq(addressNonces.address, submission.fromAddress),
        eq(addressNonces.nextNonce, submission.nonce + 1),
      ),
    );
}

/**
 * Records where a submission was mined, and whether it succeeded: the mined attempt's bytes and hash become the
 * submission's. `null` records that the block holding it was reorganized away (it is waited for again).
 */
export async function recordReceipt(
  db: DbOrTx,
  id: string,
  receipt: {
    status: 'MINED' | 'REVERTED';
    blockNumber: bigint;
    blockHash: Hex;
    attempt: Pick<SubmissionAttemptRow, 'rawTx' | 'txHash'>;
  } | null,
): Promise<void> {
  const values = receipt
    ? {
        status: receipt.status,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        rawTx: receipt.attempt.rawTx,
        txHash: receipt.attempt.txHash,
      }
    : { status: 'SIGNED' as const, blockNumber: null, blockHash: null };
  await db
    .update(chainSubmissions)
    .set({ ...values, updatedAt: serviceNow })
    .where(eq(chainSubmissions.id, id));
}

/** Mined (or reverted) submissions recorded in blocks `from`..`to`, oldest first, at most `limit`. */
export function findMinedBetween(
  db: DbOrTx,
  from: bigint,
  to: bigint,
  limit: number,
): Promise<SubmissionRow[]> {
  return db
    .select()
    .from(chainSubmissions)
    .where(
      and(
        isNotNull(chainSubmissions.blockNumber),
        sql`${chainSubmissions.blockNumber} between ${from} and ${to}`,
      ),
    )
    .orderBy(asc(chainSubmissions.blockNumber))
    .limit(limit);
}

/**
 * Records that a mined submission is no longer in the block it was recorded in: in `moved` (mined elsewhere) or,
 * when null, in none. Only while it is still recorded at `blockHash`, so one process alone records (and counts) it.
 */
export async function recordReorganized(
  db: DbOrTx,
  submission: SubmissionRow,
  moved: { blockNumber: bigint; blockHash: Hex } | null,
): Promise<boolean> {
  if (!submission.blockHash) return false;
  const changed = await db
    .update(chainSubmissions)
    .set({
      ...(moved ?? { status: 'SIGNED' as const, blockNumber: null, blockHash: null }),
      updatedAt: serviceNow,
    })
    .where(and(eq(chainSubmissions.id, submission.id), eq(chainSubmissions.blockHash, submission.blockHash)))
    .returning({ id: chainSubmissions.id });
  return changed.length > 0;
}

/** The block a transaction's submission with hash `txHash` was recorded in, or undefined when none is known. */
export async function findSubmissionBlock(
  db: DbOrTx,
  transactionId: string,
  txHash: Hex,
): Promise<{ blockNumber: bigint; blockHash: Hex } | undefined> {
  const [row] = await db
    .select({ blockNumber: chainSubmissions.blockNumber, blockHash: chainSubmissions.blockHash })
    .from(chainSubmissions)
    .where(
      and(
        eq(chainSubmissions.transactionId, transactionId),
        eq(chainSubmissions.txHash, txHash),
        isNotNull(chainSubmissions.blockNumber),
      ),
    )
    .limit(1);
  if (!row?.blockHash || row.blockNumber === null) return undefined;
  return { blockNumber: row.blockNumber, blockHash: row.blockHash };
}

export function listNonceCounters(db: DbOrTx) {
  return db.select().from(addressNonces);
}

export async function findNonceCounter(db: DbOrTx, address: Address) {
  const [row] = await db.select().from(addressNonces).where(eq(addressNonces.address, address));
  return row;
}

/** The stored submission of an address at a nonce, if any. */
export async function findSubmissionAt(
  db: DbOrTx,
  address: Address,
  nonce: number,
): Promise<SubmissionRow | undefined> {
  const [row] = await db
    .select()
    .from(chainSubmissions)
    .where(and(eq(chainSubmissions.fromAddress, address), eq(chainSubmissions.nonce, nonce)));
  return row;
}
