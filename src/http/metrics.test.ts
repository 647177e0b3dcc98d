import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestContext, errorOf, type TestContext } from '../../test/harness.ts';

const TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
const PRODUCTION = { NETWORK: 'mainnet', MASTER_KEY: randomBytes(32).toString('hex') };
const contexts: TestContext[] = [];

async function metricsOf(env: Record<string, string>) {
  const ctx = await createTestContext({ env });
  contexts.push(ctx);
  return (authorization?: string) =>
    ctx.app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
}

afterAll(async () => {
  for (const ctx of contexts) await ctx.close();
});

// The sandbox without METRICS_TOKEN (open) is src/http/conventions.test.ts's.
describe('/metrics access', () => {
  it('production without METRICS_TOKEN: 503 configuration_missing naming the variable, with or without a bearer', async () => {
    const get = await metricsOf(PRODUCTION);
    for (const authorization of [undefined, `Bearer ${TOKEN}`]) {
      const response = await get(authorization);
      expect(errorOf(response)).toMatchObject({
        status: 503,
        code: 'configuration_missing',
        details: { variable: 'METRICS_TOKEN' },
      });
      expect(response.body).not.toContain('sealpay_http_request_duration_seconds');
    }
  });

  it.each([
    ['production', PRODUCTION],
    ['the sandbox', {}],
  ])(
    '%s with METRICS_TOKEN: 401 in the envelope without the bearer, or with a wrong one; 200 with it',
    async (_, env) => {
      const get = await metricsOf({ ...env, METRICS_TOKEN: TOKEN });
      for (const authorization of [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}`,
        TOKEN,
        'Basic abc',
      ]) {
        const response = await get(authorization);
        expect(errorOf(response)).toMatchObject({ status: 401, code: 'unauthenticated' });
        expect(response.body).not.toContain('sealpay_');
      }
      for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) {
        const response = await get(authorization);
        expect(response.statusCode).toBe(200);
        expect(response.body).toContain('sealpay_http_request_duration_seconds');
      }
    },
  );
});
