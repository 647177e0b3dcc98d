/**
 * `GET /transactions` answered from the pages kept per account while its transactions are unchanged (embedded
 * database only: src/lib/page-cache.ts, migration 0008). A change made with the session's notifications silenced
 * is how these tests tell a kept page from a fresh read: nothing the service does silences them.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, signup, type TestContext } from '../../../test/harness.ts';
import { seedTransactions, seedWallet } from '../../../test/seed.ts';
import { AccountPageCache } from '../../lib/page-cache.ts';
import { transition } from '../../worker/outbox.repository.ts';

const NEWEST = new Date('2026-06-01T12:00:00.000Z');

describe.skipIf(Boolean(process.env.DATABASE_URL))(
  'kept pages of GET /transactions (embedded database)',
  () => {
    let ctx: TestContext;
    let alice: Caller;
    let bob: Caller;

    beforeAll(async () => {
      ctx = await createTestContext();
      alice = await signup(ctx.app);
      bob = await signup(ctx.app);
      const { db } = ctx.deps.database;
      for (const caller of [alice, bob]) {
        await seedTransactions(db, {
          userId: caller.userId,
          walletIds: [await seedWallet(db, caller.userId, 'main')],
          count: 30,
          newest: NEWEST,
        });
      }
    });

    afterAll(async () => {
      await ctx?.close();
    });

    const list = (caller: Caller, query = 'page=1&pageSize=5') =>
      ctx.app.inject({ method: 'GET', url: `/api/v1/transactions?${query}`, headers: caller.headers });

    /** The account's newest row. */
    const newestOf = async (caller: Caller) => {
      const page = (await list(caller)).json() as { data: { items: { id: string; status: string }[] } };
      const [first] = page.data.items;
      if (!first) throw new Error('no rows');
      return first;
    };

    /** Changes a row without telling the cache (as no code path of the service can). */
    const changeSilently = async (id: string, error: string) => {
      const { db } = ctx.deps.database;
      await db.transaction(async (tx) => {
        await tx.execute(sql`set local sealpay.notify_changes = 'off'`);
        await tx.execute(sql`update transactions set error = ${error}, error_code = 'transfer_failed',
                           status = 'FAILED' where id = ${id}`);
      });
    };

    it('answers a repeated request with the same bytes, and sees every change the service makes at once', async () => {
      const first = await list(alice);
      expect(first.statusCode).toBe(200);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(first.headers['cache-control']).toContain('no-store');
      const row = await newestOf(alice);
      await changeSilently(row.id, 'silenced change');
      // Kept: the silenced change is not in it.
      const again = await list(alice);
      expect(again.body).toBe(first.body);
      // A change through the service (a guarded status move) is in the very next answer.
      const moved = await transition(ctx.deps.database.db, row.id, 'FAILED', { status: 'CONFIRMED' });
      expect(moved?.status).toBe('CONFIRMED');
      const after = (await list(alice)).json() as { data: { items: { id: string; status: string }[] } };
      expect(after.data.items.find((item) => item.id === row.id)?.status).toBe('CONFIRMED');
    });

    it("keeps each account's pages apart: another account's change leaves them, its own drops them", async () => {
      const kept = await list(alice, 'page=1&pageSize=7');
      const row = await newestOf(alice);
      await changeSilently(row.id, 'silenced again');
      const bobRow = await newestOf(bob);
      await transition(ctx.deps.database.db, bobRow.id, bobRow.status as 'QUEUED', { error: 'bob moved' });
      expect((await list(alice, 'page=1&pageSize=7')).body).toBe(kept.body);
      // An insert of alice's drops her pages: the new row and the silenced change both show.
      await seedTransactions(ctx.deps.database.db, {
        userId: alice.userId,
        walletIds: [await seedWallet(ctx.deps.database.db, alice.userId, 'second')],
        count: 1,
        newest: new Date(NEWEST.getTime() + 60_000),
        tag: 'late',
      });
      const fresh = (await list(alice, 'page=1&pageSize=7')).json() as {
        data: { total: number; items: { id: string; error: string | null }[] };
      };
      expect(fresh.data.total).toBe(31);
      expect(fresh.data.items.find((item) => item.id === row.id)?.error).toBe('silenced again');
    });
  },
);

describe.skipIf(!process.env.DATABASE_URL)('GET /transactions on PostgreSQL', () => {
  it('keeps no pages: other processes write, and their notifications come after their commits', async () => {
    const ctx = await createTestContext();
    try {
      expect(ctx.deps.database.transactionChanges).toBeNull();
      expect(ctx.deps.transactionPages).toBeNull();
    } finally {
      await ctx.close();
    }
  });
});

describe('AccountPageCache', () => {
  it('never keeps a page whose reads began before a change of its account', () => {
    let changed: (userId: string) => void = () => {};
    const cache = new AccountPageCache((listener) => {
      changed = listener;
      return () => {};
    });
    const generation = cache.generation('u1');
    changed('u1');
    cache.keep('u1', '/a', generation, Buffer.from('read before the change'));
    expect(cache.find('u1', '/a')).toBeUndefined();
    cache.keep('u1', '/a', cache.generation('u1'), Buffer.from('read after'));
    expect(cache.find('u1', '/a')?.toString()).toBe('read after');
    changed('u2');
    expect(cache.find('u1', '/a')?.toString()).toBe('read after');
    changed('u1');
    expect(cache.find('u1', '/a')).toBeUndefined();
  });
});
