import type { TransactionRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { inScope, type Scope } from '../../lib/key-scope.ts';
import { findOwnTransaction } from './transactions.repository.ts';

/**
 * One of the caller's transactions, or `404 not_found`: another account's reads as absent, and so does one of a
 * wallet outside the scope of a key bound to other wallets.
 */
export async function ownTransaction(
  deps: Deps,
  userId: string,
  id: string,
  scope: Scope,
): Promise<TransactionRow> {
  const row = await findOwnTransaction(deps.database.db, userId, id);
  if (!row || !inScope(scope, row.walletId)) throw new AppError('not_found', 'No such transaction.');
  return row;
}
