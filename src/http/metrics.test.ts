import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { REFUSING_PORT, request } from '../../test/faults/service.ts';
import { createTestContext, errorOf, type TestContext } from '../../test/harness.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { startMetricsServer } from './metrics.ts';

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
    const live = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dead = `127.0.0.1:${REFUSING_PORT}`;
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

describe("a worker's own /metrics (WORKER_METRICS_PORT)", () => {
  const at = (server: { port: number }) => `http://127.0.0.1:${server.port}`;

  it('is read from the environment: unset serves nothing, a port from 1 to 65535, anything else is refused', () => {
    expect(loadConfig({}).workerMetricsPort).toBeNull();
    expect(loadConfig({ WORKER_METRICS_PORT: '9464' }).workerMetricsPort).toBe(9464);
    for (const bad of ['0', '65536', 'nine', '-1']) {
      expect(() => loadConfig({ WORKER_METRICS_PORT: bad })).toThrow(ConfigError);
    }
  });

  it("serves the process's chain counters under the API's access rule, and nothing else, in the envelope", async () => {
    const ctx = await createTestContext({});
    contexts.push(ctx);
    const { metrics } = ctx.deps;
    metrics.chain.feeCapWaits.inc();
    metrics.chain.replacements.inc(2);
    const logger = pino({ level: 'silent' });
    const serve = (environment: 'sandbox' | 'production', metricsToken: string | null) =>
      startMetricsServer({ environment, metricsToken, host: '127.0.0.1' }, metrics.registry, 0, logger);

    // The sandbox without METRICS_TOKEN: open, like the API's.
    const open = await serve('sandbox', null);
    try {
      const scraped = await request(at(open), 'GET', '/metrics');
      expect(scraped.status).toBe(200);
      expect(scraped.body).toContain('sealpay_chain_fee_cap_waits_total 1');
      expect(scraped.body).toContain('sealpay_chain_replacements_total 2');
      expect(scraped.body).toContain('sealpay_process_resident_memory_bytes');
      // Only /metrics: the API is not here, and hostile requests get the envelope, never a 500.
      for (const path of ['/api/v1/wallets', '/%zz']) {
        expect(await request(at(open), 'GET', path)).toMatchObject({
          status: 404,
          body: { ok: false, error: { code: 'not_found' } },
        });
      }
      const posted = await fetch(`${at(open)}/metrics`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"not json',
      });
      expect(posted.status).toBeGreaterThanOrEqual(400);
      expect(posted.status).toBeLessThan(500);
      expect(await posted.json()).toMatchObject({ ok: false, error: { code: expect.any(String) } });
    } finally {
      await open.close();
    }

    // Production without METRICS_TOKEN: 503 naming the setting; with it, 401 without the bearer and 200 with it.
    const unset = await serve('production', null);
    try {
      const refused = await request(at(unset), 'GET', '/metrics', {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(refused).toMatchObject({
        status: 503,
        body: { ok: false, error: { code: 'configuration_missing', details: { variable: 'METRICS_TOKEN' } } },
      });
      expect(JSON.stringify(refused.body)).not.toContain('sealpay_chain');
    } finally {
      await unset.close();
    }
    const guarded = await serve('production', TOKEN);
    try {
      const refusedHeaders: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN}x` }];
      for (const headers of refusedHeaders) {
        const response = await request(at(guarded), 'GET', '/metrics', { headers });
        expect(response).toMatchObject({
          status: 401,
          body: { ok: false, error: { code: 'unauthenticated' } },
        });
        expect(JSON.stringify(response.body)).not.toContain('sealpay_chain');
      }
      const scraped = await request(at(guarded), 'GET', '/metrics', {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(scraped.status).toBe(200);
      expect(scraped.body).toContain('sealpay_chain_fee_cap_waits_total 1');
    } finally {
      await guarded.close();
    }
  });
});
