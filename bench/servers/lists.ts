/**
 * The service's HTTP app without the chain, over PGlite (or PostgreSQL when DATABASE_URL is set), with two
 * accounts seeded straight into the database: `small` with SMALL_ROWS transactions, `large` with LARGE_ROWS (one
 * `generate_series` statement each). Prints one JSON line: the port, each account's API key, the cursor that
 * reaches the large account's last page, and how long seeding took.
 */
import { sql } from 'drizzle-orm';
import { rows } from '../../src/db/client.ts';
import { encodeCursor } from '../../src/http/cursor.ts';
import { seedTransactions, seedWallet } from '../../test/seed.ts';
import { announce, benchAccount, openBenchApp } from './bench-app.ts';

const smallRows = Number(process.env.SMALL_ROWS ?? 1_000);
const largeRows = Number(process.env.LARGE_ROWS ?? 1_000_000);
const pageSize = 20;
const { app, deps } = await openBenchApp('sealpay-bench-lists-');
const { db } = deps.database;
const newest = new Date();
const small = await benchAccount(app, 'small');
const large = await benchAccount(app, 'large');
const seedStarted = performance.now();
for (const [who, count] of [
  [small, smallRows],
  [large, largeRows],
] as const) {
  const walletIds = [await seedWallet(db, who.userId, 'one'), await seedWallet(db, who.userId, 'two')];
  await seedTransactions(db, { userId: who.userId, walletIds, count, newest });
}
await db.execute(sql`analyze`);
const seedMs = Math.round(performance.now() - seedStarted);
// The row just before the large account's last page, in the list's order: its cursor asks for that last page.
const [beforeLast] = await rows<{ id: string; created_at: string | Date }>(
  db,
  sql`select id, created_at from transactions where user_id = ${large.userId}
      order by created_at asc, id asc offset ${pageSize} limit 1`,
);
if (!beforeLast) throw new Error('the large account has no rows');

await announce(app, deps, {
  seedMs,
  smallRows,
  largeRows,
  small: small.authorization,
  large: large.authorization,
  lastPageCursor: encodeCursor({ id: beforeLast.id, createdAt: new Date(beforeLast.created_at) }),
});
