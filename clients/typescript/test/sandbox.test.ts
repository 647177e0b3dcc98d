/** `@sealpay/client`'s sandbox helpers against the real service over real HTTP: the test clock and magic amounts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, listenOnLoopback, signup, type TestContext } from '../../../test/harness.ts';
import {
  createClient,
  isSealpayError,
  SANDBOX_OUTCOMES,
  type SealpayClient,
  sandboxAmount,
} from '../src/index.ts';

const SECRET = 'client-clock-secret';
let ctx: TestContext;
let client: SealpayClient;

beforeAll(async () => {
  ctx = await createTestContext({ env: { SWEEP_SECRET: SECRET } });
  const origin = await listenOnLoopback(ctx.app);
  client = createClient({ baseUrl: `${origin}/api/v1` });
  await signup(ctx.app);
}, 300_000);
afterAll(() => ctx.close());

describe('@sealpay/client sandbox helpers', () => {
  it('builds magic amounts: the whole amount, its last three decimals the outcome', () => {
    expect(sandboxAmount('12.5', 'fail')).toBe('12.500402');
    expect(sandboxAmount(3, 'transient')).toBe('3.000429');
    expect(client.sandbox.amount('0.25', 'claimFailed')).toBe('0.250502');
    expect(sandboxAmount('7.125', 'vaultUnderfunded')).toBe('7.125503');
    expect(sandboxAmount('1', 'claimUnsettled')).toBe('1.000504');
    expect(sandboxAmount('1.', 'escrowUnsettled')).toBe('1.000505');
    expect(Object.values(SANDBOX_OUTCOMES).sort()).toEqual(['402', '429', '502', '503', '504', '505']);
    for (const bad of ['1.0004', '-1', 'ten', '1e3', ''])
      expect(() => sandboxAmount(bad, 'fail')).toThrow(RangeError);
  });

  it('reads and moves the test clock with the operator secret', async () => {
    const clock = client.sandbox.clock(SECRET);
    const before = await clock.get();
    const moved = await clock.advance(86_400);
    expect(moved.offsetSeconds).toBe(before.offsetSeconds + 86_400);
    expect(Date.parse(moved.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(86_400_000);
    expect((await clock.get()).offsetSeconds).toBe(moved.offsetSeconds);
    const refused = await client.sandbox
      .clock('wrong')
      .advance(60)
      .catch((error: unknown) => error);
    expect(isSealpayError(refused) && refused.code).toBe('unauthenticated');
    const invalid = await clock.advance(0).catch((error: unknown) => error);
    expect(isSealpayError(invalid) && invalid.code).toBe('validation_error');
  });
});
