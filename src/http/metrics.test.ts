import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

describe('per-provider JSON-RPC metrics', () => {
  it('counts requests, failures by reason and latency per provider of RPC_URL, and which one is set aside', async () => {
    // A provider that answers eth_chainId (real HTTP), after one whose port nobody listens on.
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        const { id } = JSON.parse(body) as { id: number };
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x7a69' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const live = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dead = `127.0.0.1:${deadPort}`;
    try {
      const ctx = await createTestContext({
        network: true,
        env: {
          NETWORK: 'devnet',
          MASTER_KEY: randomBytes(32).toString('hex'),
          RPC_URL: `http://${dead}/v3/provider-key-1, http://${live}/provider-key-2`,
        },
      });
      contexts.push(ctx);
      // Readiness asks the chain id: the first provider refuses the connection, the second answers.
      await ctx.app.inject({ url: '/readyz' });
      const text = (await ctx.app.inject({ url: '/metrics' })).body;
      expect(text).toContain(
        `sealpay_rpc_requests_total{provider="1",host="${dead}",method="eth_chainId"} 1`,
      );
      expect(text).toContain(`sealpay_rpc_errors_total{provider="1",host="${dead}",reason="connection"} 1`);
      expect(text).toContain(
        `sealpay_rpc_requests_total{provider="2",host="${live}",method="eth_chainId"} 1`,
      );
      expect(text).not.toContain(`sealpay_rpc_errors_total{provider="2"`);
      expect(text).toContain(`sealpay_rpc_request_duration_seconds_count{provider="2",host="${live}"} 1`);
      expect(text).toContain(`sealpay_rpc_provider_available{provider="1",host="${dead}"} 0`);
      expect(text).toContain(`sealpay_rpc_provider_available{provider="2",host="${live}"} 1`);
      expect(text).not.toContain('provider-key');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
