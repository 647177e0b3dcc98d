/**
 * Every index the list, worker and idempotency queries need, shown used: `EXPLAIN` of each query (as the
 * repositories issue it) over a seeded, analysed table names the index and has no Sort node. A query that stops
 * using its index (or an index dropped) fails here; docs/ARCHITECTURE.md lists the same plans.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signup, type TestContext } from '../../test/harness.ts';
import { seedLetters, seedTransactions, seedWallet } from '../../test/seed.ts';
import { rows } from './client.ts';

let ctx: TestContext;
let userId: string;
let walletId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  const { db } = ctx.deps.database;
  const newest = new Date('2026-06-01T12:00:00.000Z');
  // Several accounts, so that one account is a small part of the table, as in production.
  for (let i = 0; i < 4; i += 1) {
    const user = await signup(ctx.app);
    const wallets = [await seedWallet(db, user.userId, 'a'), await seedWallet(db, user.userId, 'b')];
    await seedTransactions(db, { userId: user.userId, walletIds: wallets, count: 10_000, newest });
    await seedLetters(db, { userId: user.userId, walletId: wallets[0] as string, count: 2_000, newest });
    // A little-used wallet beside the two busy ones: the list by wallet matters when the wallet is a small part of
    // its account (with half of it, reading the account's rows and skipping the other wallet's costs the same).
    const quiet = await seedWallet(db, user.userId, 'c');
    await seedTransactions(db, {
      userId: user.userId,
      walletIds: [quiet],
      count: 200,
      newest,
      tag: `${user.userId}c`,
    });
    userId = user.userId;
    walletId = quiet;
  }
  // Many small accounts besides: one account's counter rows are a small part of list_totals.
  for (let i = 0; i < 30; i += 1) {
    const user = await signup(ctx.app);
    const wallets = [await seedWallet(db, user.userId, 'a'), await seedWallet(db, user.userId, 'b')];
    await seedTransactions(db, { userId: user.userId, walletIds: wallets, count: 300, newest });
  }
  // Most rows settled, as in a running service: the worker's runnable rows are few.
  await db.execute(sql`update transactions set status = 'CONFIRMED'
                       where status in ('QUEUED', 'PENDING', 'SETTLING') and hashtext(id) % 50 <> 0`);
  await db.execute(sql`update transactions set idempotency_key = 'key-' || id where hashtext(id) % 3 = 0`);
  await db.execute(sql`analyze`);
});

afterAll(async () => {
  await ctx?.close();
});

/** The plan of `query` as text, one node a line. */
async function planOf(query: ReturnType<typeof sql>): Promise<string> {
  const found = await rows<{ 'QUERY PLAN': string }>(ctx.deps.database.db, sql`explain ${query}`);
  return found.map((row) => row['QUERY PLAN']).join('\n');
}

const cursorAt = "('2026-06-01T11:59:58.000Z'::timestamptz, 'tzzzz')";

describe('each list and worker query uses its index (EXPLAIN)', () => {
  it.each([
    [
      'transactions page 1',
      () => sql`select * from transactions where user_id = ${userId}
                order by created_at desc, id desc limit 21`,
      'transactions_user_created_idx',
    ],
    [
      'transactions after a cursor',
      () => sql`select * from transactions where user_id = ${userId}
                and (created_at, id) < ${sql.raw(cursorAt)} order by created_at desc, id desc limit 21`,
      'transactions_user_created_idx',
    ],
    [
      'transactions by status, after a cursor',
      () => sql`select * from transactions where user_id = ${userId} and status = 'FAILED'
                and (created_at, id) < ${sql.raw(cursorAt)} order by created_at desc, id desc limit 21`,
      'transactions_user_status_created_idx',
    ],
    [
      'transactions of one wallet',
      () => sql`select * from transactions where user_id = ${userId} and wallet_id = ${walletId}
                order by created_at desc, id desc limit 21`,
      'transactions_wallet_created_idx',
    ],
    [
      "the worker's runnable rows",
      () => sql`select id from transactions where status in ('QUEUED', 'PENDING', 'SETTLING')
                and next_attempt_at <= now() and (lease_until is null or lease_until < now())
                order by next_attempt_at limit 8 for update skip locked`,
      'transactions_runnable_idx',
    ],
    [
      'an Idempotency-Key replay',
      () => sql`select * from transactions where user_id = ${userId} and idempotency_key = 'key-x' limit 1`,
      'transactions_idempotency_key',
    ],
    [
      "a list's total",
      () => sql`select coalesce(sum(n), 0) from list_totals where list = 'transactions' and user_id = ${userId}
                and key @> '{"status":"FAILED"}'::jsonb`,
      'list_totals_pkey',
    ],
    [
      'letters page 1',
      () => sql`select * from letters where user_id = ${userId} order by created_at desc, id desc limit 21`,
      'letters_user_created_idx',
    ],
    [
      'letters after a cursor',
      () => sql`select * from letters where user_id = ${userId} and status = 'MAILED'
                and (created_at, id) < ${sql.raw(cursorAt)} order by created_at desc, id desc limit 21`,
      'letters_user_created_idx',
    ],
  ])('%s', async (_name, query, index) => {
    const plan = await planOf(query());
    expect(plan).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using ${index}\\b`));
    expect(plan).not.toMatch(/\bSort\b|Seq Scan on (transactions|letters)/);
  });
});
