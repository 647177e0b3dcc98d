/**
 * Rows written straight into the database, many at once (SQL `generate_series`, one statement per table): the
 * paging tests and the paging bench need accounts with thousands to millions of transactions without moving money.
 */
import { sql } from 'drizzle-orm';
import { type DbOrTx, rows } from '../src/db/client.ts';
import { LETTER_STATUSES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../src/db/schema/index.ts';

const typesArray = `array[${TRANSACTION_TYPES.map((t) => `'${t}'`).join(',')}]`;
const statusesArray = `array[${TRANSACTION_STATUSES.map((s) => `'${s}'`).join(',')}]`;

/** A custodial-shaped wallet row for `userId` (no key: nothing signs with it). */
export async function seedWallet(db: DbOrTx, userId: string, label: string): Promise<string> {
  const [row] = await rows<{ id: string }>(
    db,
    sql`insert into wallets (id, user_id, address, type, label)
        values ('w' || substr(md5(${userId} || ${label}), 1, 24), ${userId},
                '0x' || substr(md5('a' || ${userId} || ${label}), 1, 20) || substr(md5('b' || ${userId} || ${label}), 1, 20),
                'EXTERNAL', ${label})
        returning id`,
  );
  if (!row) throw new Error('wallet insert returned no row');
  return row.id;
}

/**
 * `count` transactions of `userId`, spread over `walletIds`, every type and status in turn, created one
 * millisecond apart backwards from `newest` with three rows on each millisecond (so the list's id tie-break is
 * exercised); ids ascend with `i` (appended in order to the primary key: 10⁶ rows in well under a minute on
 * PGlite). Returns nothing: read them back through the API.
 */
export async function seedTransactions(
  db: DbOrTx,
  options: { userId: string; walletIds: string[]; count: number; newest: Date; tag?: string },
): Promise<void> {
  const wallets = `array[${options.walletIds.map((id) => `'${id}'`).join(',')}]`;
  const tag = options.tag ?? options.userId;
  await db.execute(
    sql`insert into transactions (id, user_id, wallet_id, type, status, chain_id, amount_base_units, token,
                                  step, created_at, updated_at)
        select 't' || substr(md5(${tag}), 1, 8) || lpad(i::text, 10, '0'), ${options.userId},
               (${sql.raw(wallets)})[1 + i % ${options.walletIds.length}],
               (${sql.raw(typesArray)})[1 + i % ${TRANSACTION_TYPES.length}],
               (${sql.raw(statusesArray)})[1 + (i / 7) % ${TRANSACTION_STATUSES.length}],
               31337, 1000000 + i, 'cSTABLE', 'done',
               ${options.newest.toISOString()}::timestamptz - (i / 3) * interval '1 millisecond',
               ${options.newest.toISOString()}::timestamptz
        from generate_series(0, ${options.count - 1}) as i`,
  );
}

/** `count` letters of `userId` from `walletId`, every status in turn, created as `seedTransactions` does. */
export async function seedLetters(
  db: DbOrTx,
  options: { userId: string; walletId: string; count: number; newest: Date },
): Promise<void> {
  const statuses = `array[${LETTER_STATUSES.map((s) => `'${s}'`).join(',')}]`;
  await db.execute(
    sql`insert into letters (id, user_id, sender_wallet_id, sender_address, status, chain_id, amount_base_units,
                             recipient_name, recipient_address, expires_at, claim_origin, claim_code_hash,
                             vault_letter_id, created_at, updated_at)
        select 'l' || substr(md5(${options.userId} || i::text), 1, 24), ${options.userId}, ${options.walletId},
               w.address, (${sql.raw(statuses)})[1 + i % ${LETTER_STATUSES.length}], 31337, 1000000,
               'Recipient ' || i, '{"line1":"1 Main St","line2":null,"landmark":null,"city":"Springfield","region":"IL","postal":"62701","country":"US"}'::jsonb,
               ${options.newest.toISOString()}::timestamptz + interval '90 days', 'http://localhost',
               md5('code' || ${options.userId} || i::text), '0x' || md5('v' || i::text) || md5('w' || i::text),
               ${options.newest.toISOString()}::timestamptz - (i / 3) * interval '1 millisecond',
               ${options.newest.toISOString()}::timestamptz
        from generate_series(0, ${options.count - 1}) as i, wallets w where w.id = ${options.walletId}`,
  );
}
