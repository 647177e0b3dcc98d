import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../test/harness.ts';
import { type Database, openDatabase } from './client.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `holders` overlapping critical sections under one key; returns the most that were ever inside at once. */
async function maxInside(databases: Database[], holders: number): Promise<number> {
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: holders }, (_, i) =>
      (databases[i % databases.length] as Database).withLock('nonce:0xabc', async (db) => {
        inside += 1;
        most = Math.max(most, inside);
        await db.execute(sql`select 1`);
        await sleep(5);
        inside -= 1;
      }),
    ),
  );
  return most;
}

describe('Database.withLock', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('lets one holder of a key in at a time, and another key through meanwhile', async () => {
    const { database, drop } = await openTestDatabase();
    cleanups.push(drop, () => database.close());
    expect(await maxInside([database], 12)).toBe(1);
    let otherRan = false;
    await database.withLock('nonce:0xabc', async () => {
      await database.withLock('nonce:0xdef', async () => {
        otherRan = true;
      });
    });
    expect(otherRan).toBe(true);
  });

  it.skipIf(!process.env.DATABASE_URL)('holds across processes (two pools on one PostgreSQL)', async () => {
    const { database, drop, url } = await openTestDatabase();
    const second = await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 3 });
    cleanups.push(
      drop,
      () => database.close(),
      () => second.close(),
    );
    expect(await maxInside([database, second], 16)).toBe(1);
  });
});
