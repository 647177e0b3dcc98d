/**
 * API keys' spend limits (issue 29): what a key sends (transfers and letters, public and confidential alike) over a
 * rolling 24 hours, summed from the transaction rows it asked for that did not fail. Mint, redeem and the faucet
 * do not count: their money stays in the wallet (public and confidential units of one wallet), nothing leaves the
 * account. A row that later FAILS stops counting; a voided letter still counts (its escrow left the wallet, and
 * its refund is the vault's transfer, not the key's).
 */
import type { DbOrTx, Tx } from '../../db/client.ts';
import type { TransactionType } from '../../db/schema/index.ts';
import { type Deps, typesWhere } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { type Scope, SPEND_LIMIT_WINDOW_MS } from '../../lib/key-scope.ts';
import { formatAmount } from '../../lib/money.ts';
import { iso } from '../../lib/time.ts';
import { lockKey } from './keys.repository.ts';
import { spendReachedAt, spentByKeys } from './spend.repository.ts';

/** The transaction types whose amounts leave the account through the key that asked for them. */
function spendingTypes(deps: Deps): TransactionType[] {
  return typesWhere(deps.operations, (operation) => operation.spendsKeyLimit);
}

function windowStart(now: Date): Date {
  return new Date(now.getTime() - SPEND_LIMIT_WINDOW_MS);
}

/**
 * Inserts a row that may spend through the caller's key: for a transfer of a key with a spend limit, inside a
 * database transaction behind `reserveSpend`; otherwise alone, as every other row.
 */
export function insertWithinSpendLimit<T>(
  deps: Deps,
  scope: Scope,
  spend: { type: TransactionType; amount: bigint; now: Date },
  insert: (db: DbOrTx) => Promise<T>,
): Promise<T> {
  const { db } = deps.database;
  if (scope.spendLimit === null || !deps.operations[spend.type].spendsKeyLimit) return insert(db);
  return db.transaction(async (tx) => {
    await reserveSpend(deps, tx, scope, spend.amount, spend.now);
    return insert(tx);
  });
}

/** Base units each of these keys sent in the 24 hours before `now`. */
export async function spentLast24h(
  deps: Deps,
  keyIds: readonly string[],
  now: Date,
): Promise<Map<string, bigint>> {
  return spentByKeys(deps.database.db, keyIds, spendingTypes(deps), windowStart(now));
}

/**
 * What the credential may still send now: its limit less what it sent in the last 24 hours (never below zero); null
 * for a credential without a limit (a session, an unlimited key). Permissions are not its business: a read-only key
 * has no limit and sends nothing whatever this says.
 */
export async function allowanceLeft(deps: Deps, scope: Scope, now: Date): Promise<bigint | null> {
  const { keyId, spendLimit: limit } = scope;
  if (keyId === null || limit === null) return null;
  const spent = (await spentLast24h(deps, [keyId], now)).get(keyId) ?? 0n;
  return limit > spent ? limit - spent : 0n;
}

/**
 * Called inside the database transaction that inserts a spending row of `amount` created at `now`, before the
 * insert: takes the key's row lock (so concurrent spends of one key, in any API process, are judged one after
 * another, each seeing the ones committed before it, whatever their creation time) and refuses with `403
 * spend_limit_exceeded` when the key's 24 hours before `now` and this amount together would pass its limit. Any 24
 * hours of rows then hold at most the limit: the last of them to take the lock counted all the others. Nothing for
 * a session or a key without a limit.
 */
export async function reserveSpend(
  deps: Deps,
  tx: Tx,
  scope: Scope,
  amount: bigint,
  now: Date,
): Promise<void> {
  const { keyId, spendLimit: limit } = scope;
  if (keyId === null || limit === null) return;
  await lockKey(tx, keyId);
  const since = windowStart(now);
  const types = spendingTypes(deps);
  const spent = (await spentByKeys(tx, [keyId], types, since)).get(keyId) ?? 0n;
  if (spent + amount <= limit) return;
  // The limit has room for `amount` once enough of what it counts has left the window (for an amount above the
  // limit itself, once all of it has).
  const excess = spent + amount - limit;
  const toFree = excess < spent ? excess : spent;
  const reachedAt = toFree > 0n ? await spendReachedAt(tx, keyId, types, since, toFree) : undefined;
  const resetsAt = reachedAt ? new Date(reachedAt.getTime() + SPEND_LIMIT_WINDOW_MS) : now;
  const remaining = limit > spent ? limit - spent : 0n;
  throw new AppError(
    'spend_limit_exceeded',
    `This API key may send ${formatAmount(limit)} in any 24 hours; ${formatAmount(remaining)} of it is left now.`,
    {
      details: {
        limit: formatAmount(limit),
        spent: formatAmount(spent),
        remaining: formatAmount(remaining),
        resetsAt: iso(resetsAt),
      },
    },
  );
}
