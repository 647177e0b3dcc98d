import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { providedOrNull } from '../../test/support/provided.ts';
import { parseDbError } from './errors.ts';
import { PgliteThread } from './pglite-thread.ts';

describe('the embedded database on its own thread', () => {
  const opened: PgliteThread[] = [];
  // In memory, from the run's migrated image where there is one (`test/global/fixtures.ts`): a new cluster's initdb
  // takes seconds, and these tests are about the thread, not about a first start.
  const open = async (dataDir: string | null = null) => {
    const thread = await PgliteThread.open(dataDir, dataDir ? null : providedOrNull('databaseImage'));
    opened.push(thread);
    return thread;
  };
  afterAll(async () => {
    for (const thread of opened) await thread.close();
  });

  it('answers statements with rows, fields and the text of the types a caller keeps as text', async () => {
    const db = await open();
    const result = await db.query<{ n: number; at: string; big: bigint; doc: unknown }>(
      `select $1::int as n, '2026-11-24 03:00:00+00'::timestamptz as at, 9007199254740993::int8 as big,
              '{"a":[1,"b"]}'::jsonb as doc`,
      [42],
      { rowMode: 'object', parsers: { 1184: (value: string) => value } },
    );
    expect(result.rows).toEqual([
      { n: 42, at: '2026-11-24 03:00:00+00', big: 9007199254740993n, doc: { a: [1, 'b'] } },
    ]);
    expect(result.fields.map((field) => field.name)).toEqual(['n', 'at', 'big', 'doc']);
    const arrays = await db.query<unknown[]>('select 1 as one, $1::text as two', ['x'], { rowMode: 'array' });
    expect(arrays.rows).toEqual([[1, 'x']]);
  });

  it('refuses a parser that does more than keep the text (a function cannot cross to the thread)', async () => {
    const db = await open();
    expect(() =>
      db.query('select now()', [], { parsers: { 1184: (value: string) => new Date(value) } }),
    ).toThrow(/only parsers that keep the text/);
  });

  it('raises the SQLSTATE and the constraint, and leaves the parameters out of the error', async () => {
    const db = await open();
    await db.query('create table t (id text primary key)');
    await db.query('insert into t values ($1)', ['secret-value-1']);
    const error = await db.query('insert into t values ($1)', ['secret-value-1']).catch((e: unknown) => e);
    expect(parseDbError(error)).toEqual({ sqlState: '23505', constraint: 't_pkey' });
    // PGlite puts the statement's parameters on its errors; they stay in the thread.
    expect(Object.keys(error as object)).not.toContain('params');
    expect(Object.keys(error as object)).not.toContain('queryOptions');
  });

  it('commits a transaction that resolves, rolls back one that throws, and runs others after it', async () => {
    const db = await open();
    await db.query('create table t (n int)');
    await db.transaction(async (tx) => {
      await tx.query('insert into t values (1)');
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into t values (2)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // A statement that fails inside a transaction rolls the whole transaction back.
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into t values (3)');
        await tx.query('insert into t values ($1)', ['not a number']);
      }),
    ).rejects.toMatchObject({ code: '22P02' });
    expect((await db.query<{ n: number }>('select n from t order by n')).rows).toEqual([{ n: 1 }]);
  });

  it('opens a transaction with its first statement, even when the next ones are sent before it answers', async () => {
    const db = await open();
    await db.query('create table t (n int)');
    const blocker = db.transaction(async (tx) => {
      await tx.query('insert into t values (0)');
      await new Promise((resolve) => setTimeout(resolve, 30));
    });
    // Sent at once while another transaction holds the database: they queue behind it, in order.
    const counted = await db.transaction(async (tx) => {
      await Promise.all([1, 2, 3].map((n) => tx.query('insert into t values ($1)', [n])));
      return (await tx.query<{ count: number }>('select count(*)::int as count from t')).rows[0]?.count;
    });
    await blocker;
    expect(counted).toBe(4);
    // A transaction that sends nothing opens nothing.
    expect(await db.transaction(async () => 'nothing sent')).toBe('nothing sent');
    expect((await db.query<{ count: number }>('select count(*)::int as count from t')).rows[0]?.count).toBe(
      4,
    );
  });

  it('holds statements outside a transaction until it ends (one connection, as in process)', async () => {
    const db = await open();
    await db.query('create table t (n int)');
    const order: string[] = [];
    let inside: () => void = () => {};
    const entered = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const transaction = db.transaction(async (tx) => {
      await tx.query('insert into t values (1)');
      inside();
      await finished;
      order.push('commit');
    });
    await entered;
    const outside = db.query<{ count: number }>('select count(*)::int as count from t').then((result) => {
      order.push('outside');
      return result.rows[0]?.count;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    finish();
    await transaction;
    // It ran after the commit, so it saw the row.
    expect(await outside).toBe(1);
    expect(order).toEqual(['commit', 'outside']);
  });

  it('keeps what was committed in its data directory across a close and an open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealpay-pglite-thread-'));
    try {
      const first = await PgliteThread.open(dir);
      await first.query('create table t (n int)');
      await first.query('insert into t values (7)');
      await first.close();
      const second = await open(dir);
      expect((await second.query<{ n: number }>('select n from t')).rows).toEqual([{ n: 7 }]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails what waits and what comes later once it is closed, instead of hanging', async () => {
    const db = await PgliteThread.open(null);
    await db.close();
    await expect(db.query('select 1')).rejects.toThrow(/closed/);
  });
});
