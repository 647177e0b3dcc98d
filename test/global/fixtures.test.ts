/**
 * The run's shared fixtures (`fixtures.ts`) are used, and read-only for the files: a file's database and chain are
 * copies, so what one context writes never reaches another, nor the template the next file copies.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { EmbeddedNetwork } from '../../src/adapters/chain/embedded.ts';
import { users } from '../../src/db/schema/index.ts';
import { createTestContext, signup, type TestContext } from '../harness.ts';
import { providedOrNull } from '../support/provided.ts';

const contexts: TestContext[] = [];
afterAll(async () => {
  for (const ctx of contexts) await ctx.close();
});

async function context(options: Parameters<typeof createTestContext>[0]): Promise<TestContext> {
  const ctx = await createTestContext(options);
  contexts.push(ctx);
  return ctx;
}

describe('the run’s fixtures', () => {
  it('were made once for the run: a migrated database (image or template) and a deployed chain', () => {
    const database = process.env.DATABASE_URL
      ? providedOrNull('databaseTemplate')
      : providedOrNull('databaseImage');
    expect(database).toEqual(expect.any(String));
    expect(providedOrNull('chainTemplate')).toEqual(expect.any(String));
  });

  it('give each context its own copy: a warm start of the deployed chain, and a database of its own', async () => {
    const [first, second] = [await context({ network: true }), await context({ network: true })];
    for (const ctx of [first, second]) {
      const network = ctx.deps.network as EmbeddedNetwork;
      // Loaded from the template's snapshot: no deployment, nothing replayed.
      expect(network.startup).toMatchObject({ firstStart: false, replayedEntries: 0 });
      expect(network.startup.snapshotEntries).toBeGreaterThan(0);
    }
    // The same deployment in both (the template's addresses)…
    expect(first.deps.network?.contracts).toEqual(second.deps.network?.contracts);
    // …but a block mined in one is not in the other.
    const mine = (ctx: TestContext) => (ctx.deps.network as EmbeddedNetwork).rpc({ method: 'evm_mine' });
    const height = (ctx: TestContext) =>
      (ctx.deps.network as EmbeddedNetwork)
        .rpc({ method: 'eth_blockNumber' })
        .then((hex) => BigInt(hex as string));
    const before = await height(second);
    await mine(first);
    await mine(first);
    expect(await height(second)).toBe(before);
    expect(await height(first)).toBe((await height(second)) + 2n);
    // An account made in one database is not in the other.
    await signup(first.app);
    expect(await first.deps.database.db.$count(users)).toBe(1);
    expect(await second.deps.database.db.$count(users)).toBe(0);
  });

  it('start a fresh chain where a file asks for one (freshChain: its subject is the first start)', async () => {
    const ctx = await context({ network: true, freshChain: true });
    expect((ctx.deps.network as EmbeddedNetwork).startup.firstStart).toBe(true);
  });
});
