import type { DbOrTx } from '../../db/client.ts';
import type { TransactionRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { iso } from '../../lib/time.ts';
import { findSubmissionBlock } from '../../worker/submissions.repository.ts';
import { encodeNota, signNota } from '../notas/nota.ts';
import { toTransaction } from '../transactions/transactions.schema.ts';

interface Block {
  blockNumber: bigint;
  blockHash: string;
  logIndex: number | null;
}

/**
 * Where the transaction's own hash landed: the row's block fields, or (for a transaction that failed after it
 * was mined, e.g. a transfer that moved an encrypted zero) the block its stored submission recorded.
 */
async function blockOf(db: DbOrTx, row: TransactionRow): Promise<Block | null> {
  if (!row.txHash) return null;
  if (row.blockNumber !== null && row.blockHash) {
    return { blockNumber: row.blockNumber, blockHash: row.blockHash, logIndex: row.logIndex };
  }
  const submitted = await findSubmissionBlock(db, row.id, row.txHash);
  return submitted ? { ...submitted, logIndex: row.logIndex } : null;
}

export function receiptFilename(transactionId: string): string {
  return `sealpay-receipt-${transactionId}.nota`;
}

/**
 * The signed receipt of a transaction that reached the chain, from the database only. A transaction that has
 * no block yet is `409 receipt_unavailable` (retryable); one that failed before anything was mined is `400`.
 */
export async function issueReceipt(
  deps: Deps,
  row: TransactionRow,
): Promise<{ filename: string; nota: string }> {
  const block = await blockOf(deps.database.db, row);
  if (!block) {
    if (row.status === 'FAILED') {
      throw new AppError(
        'receipt_unavailable',
        'This transaction failed before it reached the chain: there is nothing to notarize.',
        { details: { status: row.status }, retryable: false },
      );
    }
    throw new AppError(
      'receipt_unavailable',
      'This transaction has not reached the chain yet. Try again once it has a block.',
      { status: 409, details: { status: row.status }, retryable: true },
    );
  }
  const nota = signNota(deps.keyring, {
    nota: 1,
    kind: 'receipt',
    issuedAt: iso(deps.clock.now()),
    payload: {
      ...toTransaction(row, deps.network),
      chainId: row.chainId,
      blockNumber: Number(block.blockNumber),
      blockHash: block.blockHash,
      logIndex: block.logIndex,
    },
  });
  return { filename: receiptFilename(row.id), nota: encodeNota(nota) };
}
