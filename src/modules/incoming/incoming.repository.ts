import { eq, inArray, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { DbOrTx } from '../../db/client.ts';
import { serviceNow } from '../../db/schema/columns.ts';
import {
  chainCursors,
  chainSubmissionAttempts,
  chainSubmissions,
  transactions,
  type WalletRow,
  wallets,
} from '../../db/schema/index.ts';
import { BATCH_PURPOSE } from '../../worker/submissions.repository.ts';

/** The last block whose logs the follower recorded on `chainId`; null before its first round. */
export async function readCursor(db: DbOrTx, chainId: number): Promise<bigint | null> {
  const [row] = await db.select().from(chainCursors).where(eq(chainCursors.chainId, chainId)).limit(1);
  return row ? row.lastBlock : null;
}

/** Starts the cursor at `block` unless another follower started it first. */
export async function startCursor(db: DbOrTx, chainId: number, block: bigint): Promise<void> {
  await db.insert(chainCursors).values({ chainId, lastBlock: block }).onConflictDoNothing();
}

/**
 * Moves the cursor from `from` to `to`, holding its row until the database transaction ends; false when another
 * follower moved it first (its round recorded these blocks: this one must write nothing).
 */
export async function advanceCursor(db: DbOrTx, chainId: number, from: bigint, to: bigint): Promise<boolean> {
  const [locked] = await db
    .select({ lastBlock: chainCursors.lastBlock })
    .from(chainCursors)
    .where(eq(chainCursors.chainId, chainId))
    .for('update');
  if (!locked || locked.lastBlock !== from) return false;
  await db
    .update(chainCursors)
    .set({ lastBlock: to, updatedAt: serviceNow })
    .where(eq(chainCursors.chainId, chainId));
  return true;
}

/** The wallets (of any account) at these addresses. */
export function walletsAt(db: DbOrTx, addresses: Address[]): Promise<WalletRow[]> {
  if (addresses.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(wallets)
    .where(
      inArray(
        sql`lower(${wallets.address})`,
        addresses.map((address) => address.toLowerCase()),
      ),
    );
}

/**
 * What the service itself sent among these chain transactions: `own` holds `{txHash}:{walletId}` for each row it
 * sent one for (a mint, a faucet payment, a redeem's payout, a letter's claim or refund already has its row
 * there), `movedNothing` the hashes of rows that FAILED (a confidential transfer of an encrypted zero), and
 * `submitted` every hash the service signed, each attempt's (whatever it moved out of a wallet, a row of the service
 * says so).
 * A batch of transfers is stored under its first leg but carries every leg's transfer, each between two other
 * wallets: it says nothing of the first leg's wallet as a recipient, so it is left out of `own` and `movedNothing`.
 */
export async function sentByService(
  db: DbOrTx,
  txHashes: Hex[],
): Promise<{ own: Set<string>; movedNothing: Set<string>; submitted: Set<string> }> {
  if (txHashes.length === 0) return { own: new Set(), movedNothing: new Set(), submitted: new Set() };
  const lowered = txHashes.map((hash) => hash.toLowerCase());
  const columns = {
    purpose: chainSubmissions.purpose,
    walletId: transactions.walletId,
    status: transactions.status,
  };
  // A submission's hash is its latest attempt's until one is mined: an earlier attempt (a replacement at a higher
  // fee left it behind) may be the one the chain mined, so every attempt's hash counts as the service's.
  const [latest, attempts] = await Promise.all([
    db
      .select({ txHash: chainSubmissions.txHash, ...columns })
      .from(chainSubmissions)
      .innerJoin(transactions, eq(transactions.id, chainSubmissions.transactionId))
      .where(inArray(sql`lower(${chainSubmissions.txHash})`, lowered)),
    db
      .select({ txHash: chainSubmissionAttempts.txHash, ...columns })
      .from(chainSubmissionAttempts)
      .innerJoin(chainSubmissions, eq(chainSubmissions.id, chainSubmissionAttempts.submissionId))
      .innerJoin(transactions, eq(transactions.id, chainSubmissions.transactionId))
      .where(inArray(sql`lower(${chainSubmissionAttempts.txHash})`, lowered)),
  ]);
  const found = [...latest, ...attempts];
  const single = found.filter((row) => row.purpose !== BATCH_PURPOSE);
  return {
    own: new Set(single.map((row) => `${row.txHash.toLowerCase()}:${row.walletId}`)),
    movedNothing: new Set(
      single.filter((row) => row.status === 'FAILED').map((row) => row.txHash.toLowerCase()),
    ),
    submitted: new Set(found.map((row) => row.txHash.toLowerCase())),
  };
}
