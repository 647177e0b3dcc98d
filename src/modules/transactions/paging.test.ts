/**
 * The paged lists at depth: totals kept by the database (exact under inserts, status moves, deletes, concurrent
 * movers, for every filter), and keyset paging by `cursor` beside `page`, on transactions and letters.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, errorOf, signup, type TestContext } from '../../../test/harness.ts';
import { seedLetters, seedTransactions, seedWallet } from '../../../test/seed.ts';
import { rows } from '../../db/client.ts';
import { listTotal } from '../../db/lists.ts';
import { LETTER_STATUSES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../db/schema/index.ts';

let ctx: TestContext;
let alice: Caller;
let bob: Caller;
let walletIds: string[];
const NEWEST = new Date('2026-06-01T12:00:00.000Z');

beforeAll(async () => {
  ctx = await createTestContext();
  alice = await signup(ctx.app);
  bob = await signup(ctx.app);
  const { db } = ctx.deps.database;
  walletIds = [await seedWallet(db, alice.userId, 'one'), await seedWallet(db, alice.userId, 'two')];
  await seedTransactions(db, { userId: alice.userId, walletIds, count: 400, newest: NEWEST });
  await seedTransactions(db, {
    userId: bob.userId,
    walletIds: [await seedWallet(db, bob.userId, 'bob')],
    count: 30,
    newest: NEWEST,
  });
  await seedLetters(db, {
    userId: alice.userId,
    walletId: walletIds[0] as string,
    count: 45,
    newest: NEWEST,
  });
});

afterAll(async () => {
  await ctx?.close();
});

/** Every filter the list takes, alone and combined (none, each wallet; none, each type; none, each status). */
function everyTransactionFilter() {
  const filters: Record<string, string>[] = [];
  for (const walletId of [undefined, ...walletIds])
    for (const type of [undefined, ...TRANSACTION_TYPES])
      for (const status of [undefined, ...TRANSACTION_STATUSES])
        filters.push({
          ...(walletId ? { walletId } : {}),
          ...(type ? { type } : {}),
          ...(status ? { status } : {}),
        });
  return filters;
}

async function countedTransactions(userId: string, filter: Record<string, string>) {
  const [row] = await rows<{ n: number }>(
    ctx.deps.database.db,
    sql`select count(*)::int as n from transactions where user_id = ${userId}
        and (${filter.walletId ?? null}::text is null or wallet_id = ${filter.walletId ?? null})
        and (${filter.type ?? null}::text is null or type = ${filter.type ?? null})
        and (${filter.status ?? null}::text is null or status = ${filter.status ?? null})`,
  );
  return row?.n;
}

async function expectTotalsExact() {
  const { db } = ctx.deps.database;
  for (const filter of everyTransactionFilter()) {
    expect([filter, await listTotal(db, 'transactions', alice.userId, filter)]).toEqual([
      filter,
      await countedTransactions(alice.userId, filter),
    ]);
  }
}

describe('list totals', () => {
  it('match count(*) for every filter after a bulk insert', async () => {
    await expectTotalsExact();
    expect(await listTotal(ctx.deps.database.db, 'transactions', bob.userId, {})).toBe(30);
  });

  it('stay exact through status moves, multi-row updates, lease-only updates and deletes', async () => {
    const { db } = ctx.deps.database;
    await db.execute(sql`update transactions set status = 'CONFIRMED' where user_id = ${alice.userId}
                         and status = 'PENDING' and type = 'TRANSFER'`);
    await db.execute(sql`update transactions set status = case status when 'QUEUED' then 'FAILED' else 'QUEUED' end,
                         wallet_id = ${walletIds[1] as string}
                         where user_id = ${alice.userId} and status in ('QUEUED', 'SETTLED')`);
    await db.execute(sql`update transactions set lease_owner = 'someone', attempts = attempts + 1
                         where user_id = ${alice.userId}`);
    await db.execute(sql`delete from transactions where user_id = ${alice.userId} and type = 'MINT'
                         and status = 'FAILED'`);
    await expectTotalsExact();
  });

  it('stay exact when many movers change statuses at once', async () => {
    const { db } = ctx.deps.database;
    const ids = await rows<{ id: string }>(
      db,
      sql`select id from transactions where user_id = ${alice.userId} order by id limit 60`,
    );
    // Each row moved on its own connection where the database has a pool (PostgreSQL): the counter rows are
    // contended, and the fixed lock order of the trigger must keep them from deadlocking.
    await Promise.all(
      ids.map(({ id }, i) =>
        db.transaction(async (tx) => {
          await tx.execute(sql`update transactions set status = ${TRANSACTION_STATUSES[i % 6] as string}
                               where id = ${id}`);
          await tx.execute(sql`update transactions set status = ${TRANSACTION_STATUSES[(i + 3) % 6] as string}
                               where id = ${id}`);
        }),
      ),
    );
    await expectTotalsExact();
  });

  it('are rebuilt from the rows by the backfill (recount_list_totals)', async () => {
    const { db } = ctx.deps.database;
    await db.execute(sql`delete from list_totals where list = 'transactions'`);
    await db.execute(
      sql`select recount_list_totals('transactions', 'transactions', 'transaction_total_key')`,
    );
    await expectTotalsExact();
  });

  it('count letters per status', async () => {
    const { db } = ctx.deps.database;
    expect(await listTotal(db, 'letters', alice.userId, {})).toBe(45);
    await db.execute(
      sql`update letters set status = 'CLAIMED' where user_id = ${alice.userId} and status = 'CLAIMING'`,
    );
    for (const status of LETTER_STATUSES) {
      expect([status, await listTotal(db, 'letters', alice.userId, { status })]).toEqual([
        status,
        await countLetters(status),
      ]);
    }
  });
});

async function countLetters(status: string) {
  const [row] = await rows<{ n: number }>(
    ctx.deps.database.db,
    sql`select count(*)::int as n from letters where user_id = ${alice.userId} and status = ${status}`,
  );
  return row?.n;
}

type PageBody = { items: { id: string }[]; page: number | null; total: number; nextCursor: string | null };

async function get(url: string, caller: Caller = alice): Promise<PageBody> {
  const response = await ctx.app.inject({ url, headers: caller.headers });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/** Follows `nextCursor` from page 1 to the end. */
async function walkByCursor(path: string, query: string) {
  const ids: string[] = [];
  let body = await get(`${path}?${query}`);
  for (;;) {
    ids.push(...body.items.map((item) => item.id));
    if (!body.nextCursor) return { ids, last: body };
    body = await get(`${path}?${query}&cursor=${body.nextCursor}`);
    expect(body.page).toBeNull();
  }
}

async function walkByPage(path: string, query: string) {
  const ids: string[] = [];
  for (let page = 1; ; page += 1) {
    const body = await get(`${path}?${query}&page=${page}`);
    ids.push(...body.items.map((item) => item.id));
    if (body.items.length === 0 || page * 100 >= body.total) return ids;
  }
}

describe('keyset paging', () => {
  it.each([
    ['/api/v1/transactions', ''],
    ['/api/v1/transactions', 'status=CONFIRMED'],
    ['/api/v1/transactions', 'type=TRANSFER&walletId=WALLET'],
    ['/api/v1/transfer/letter', ''],
    ['/api/v1/transfer/letter', 'status=MAILED'],
  ])('%s?%s by cursor walks the same rows, in the same order, as by page', async (path, filter) => {
    const query = filter.replace('WALLET', walletIds[1] as string);
    const byPage = await walkByPage(path, `pageSize=100${query ? `&${query}` : ''}`);
    const { ids, last } = await walkByCursor(path, `pageSize=7${query ? `&${query}` : ''}`);
    expect(ids).toEqual(byPage);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(last.total);
  });

  it('answers page 1 with a nextCursor and the page number; the last page with nextCursor null', async () => {
    const first = await get('/api/v1/transactions?pageSize=5');
    expect(first).toMatchObject({ page: 1, pageSize: 5 });
    expect(typeof first.nextCursor).toBe('string');
    const all = await get('/api/v1/transactions?pageSize=5', bob);
    const lastPage = await get(`/api/v1/transactions?pageSize=5&page=${Math.ceil(all.total / 5)}`, bob);
    expect(lastPage.nextCursor).toBeNull();
  });

  it('keeps another account out of a cursor: it only positions, the account is the caller', async () => {
    const alicePage = await get('/api/v1/transactions?pageSize=3');
    const bobPage = await get(`/api/v1/transactions?pageSize=100&cursor=${alicePage.nextCursor}`, bob);
    const bobIds = new Set(
      (await get('/api/v1/transactions?pageSize=100', bob)).items.map((item) => item.id),
    );
    expect(bobPage.items.every((item) => bobIds.has(item.id))).toBe(true);
  });

  it.each([
    ['not base64url', 'a+b/c'],
    ['no comma', Buffer.from('2026-06-01T12:00:00.000Z').toString('base64url')],
    ['a bad date', Buffer.from('2026-13-45T99:00:00.000Z,tabc').toString('base64url')],
    ['not a date', Buffer.from('yesterday,tabc').toString('base64url')],
    ['a bad id', Buffer.from("2026-06-01T12:00:00.000Z,t'; drop table x").toString('base64url')],
    ['three parts', Buffer.from('2026-06-01T12:00:00.000Z,tabc,tdef').toString('base64url')],
    ['too long', 'a'.repeat(201)],
  ])('refuses a cursor that is %s: 400 validation_error', async (_what, cursor) => {
    for (const path of ['/api/v1/transactions', '/api/v1/transfer/letter']) {
      const response = await ctx.app.inject({ url: `${path}?cursor=${cursor}`, headers: alice.headers });
      expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
    }
  });

  it('refuses page and cursor together: 400 validation_error naming page', async () => {
    const { nextCursor } = await get('/api/v1/transactions?pageSize=3');
    const response = await ctx.app.inject({
      url: `/api/v1/transactions?page=2&cursor=${nextCursor}`,
      headers: alice.headers,
    });
    expect(errorOf(response)).toMatchObject({
      status: 400,
      code: 'validation_error',
      details: [{ path: 'page' }],
    });
  });
});
