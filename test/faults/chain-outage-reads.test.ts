/**
 * Reads that need the chain (`GET /gas`, `GET /balances`, `GET /wallets/{id}`, and the balance a mint or a letter
 * is judged on) while it is unreachable: `503
 * service_unavailable` with `Retry-After`, in the envelope, never a 500; and, once the providers are known down,
 * at once rather than after every provider's timeout again. The chain is the embedded one of a first service,
 * reached over its `/rpc` through the fault-injecting proxy by a second service configured as a remote network
 * (`NETWORK=devnet`, the code path of every public network), whose provider timeout is 10 s.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  errorOf,
  listenOnLoopback,
  postData,
  signup,
  type TestContext,
} from '../harness.ts';
import { type FaultyRpcProxy, startFaultyRpcProxy } from './rpc-proxy.ts';
import { REFUSING_PORT, STARTUP_TIMEOUT_MS } from './service.ts';

const TIMEOUT_MS = 10_000;
/** Far under the provider timeout, far over a loaded machine's answer to a read that asks nobody. */
const KNOWN_DOWN_BOUND_MS = 2000;
/** Only needed to build the remote network: nothing is signed here. */
const OPERATOR_KEY = `0x${'22'.repeat(32)}`;

let chain: TestContext;
let proxy: FaultyRpcProxy;
let service: TestContext;
let refused: TestContext;

/** The settings of a service that reaches the first one's chain at `rpcUrl`. */
function remoteSettings(rpcUrl: string): Record<string, string> {
  const contracts = chain.deps.network?.contracts;
  if (!contracts) throw new Error('the first service has no chain');
  return {
    NETWORK: 'devnet',
    RPC_URL: rpcUrl,
    RPC_TIMEOUT_MS: String(TIMEOUT_MS),
    OPERATOR_PRIVATE_KEY: OPERATOR_KEY,
    MASTER_KEY: randomBytes(32).toString('hex'),
    STABLECOIN_ADDRESS: contracts.stablecoin,
    CONFIDENTIAL_TOKEN_ADDRESS: contracts.confidentialToken,
    LETTER_VAULT_ADDRESS: contracts.letterVault,
  };
}

beforeAll(async () => {
  chain = await createTestContext({ network: true });
  const origin = await listenOnLoopback(chain.app);
  // Stalls outlast the timeout: a stalled request is ended by the service's timeout, never by the proxy.
  proxy = await startFaultyRpcProxy({ upstream: `${origin}/rpc`, stallMs: 6 * TIMEOUT_MS });
  service = await createTestContext({ network: true, env: remoteSettings(proxy.url) });
  refused = await createTestContext({
    network: true,
    env: remoteSettings(`http://127.0.0.1:${REFUSING_PORT}`),
  });
}, STARTUP_TIMEOUT_MS);
afterAll(async () => {
  await service?.close();
  await refused?.close();
  await proxy?.kill();
  await chain?.close();
});

async function custodialWallet(context: TestContext): Promise<{ caller: Caller; walletId: string }> {
  const caller = await signup(context.app);
  const { wallet } = await postData(context.app, caller.headers, '/wallets', { type: 'CUSTODIAL' });
  return { caller, walletId: wallet.id };
}

/** The three reads that need the chain. */
const readsOf = (walletId: string) => ['/api/v1/gas', '/api/v1/balances', `/api/v1/wallets/${walletId}`];

async function read(context: TestContext, caller: Caller, url: string) {
  const started = performance.now();
  const response = await context.app.inject({ url, headers: caller.headers });
  return { response, ms: performance.now() - started };
}

function expectChainUnavailable(response: Awaited<ReturnType<typeof read>>['response']) {
  expect(errorOf(response), response.body).toMatchObject({ status: 503, code: 'service_unavailable' });
  expect(errorOf(response).message).toMatch(/chain cannot be reached/);
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('reads while the chain is unreachable', () => {
  it('a refused connection: 503 service_unavailable with Retry-After, never a 500', async () => {
    const { caller, walletId } = await custodialWallet(refused);
    for (const url of readsOf(walletId)) {
      const { response } = await read(refused, caller, url);
      expectChainUnavailable(response);
    }
    // Requests judged on a balance read before anything is queued: the mint's public balance, the letter's sealed one.
    const recipient = {
      name: 'Ada Lovelace',
      address: {
        line1: '12 St James Square',
        city: 'London',
        region: 'London',
        postal: 'SW1Y 4JH',
        country: 'gb',
      },
    };
    for (const [url, payload] of [
      ['/api/v1/mint', { walletId, amount: '1' }],
      ['/api/v1/transfer/letter', { walletId, amount: '1', recipient }],
    ] as const) {
      const response = await refused.app.inject({ method: 'POST', url, headers: caller.headers, payload });
      expectChainUnavailable(response);
    }
  });

  it('a provider that hangs: 503 after its timeout once, then at once while it is known down; reads work again after it returns', async () => {
    const { caller, walletId } = await custodialWallet(service);
    const gas = await read(service, caller, '/api/v1/gas');
    expect(gas.response.statusCode).toBe(200);
    expect(gas.response.json().data.wallets[0]).toMatchObject({ walletId });

    proxy.decide = () => 'stall';
    const first = await read(service, caller, '/api/v1/gas');
    expectChainUnavailable(first.response);
    // The first read found the outage by waiting out the timeout (once: not once per round of retries).
    expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(first.ms).toBeLessThan(2 * TIMEOUT_MS);

    for (const url of readsOf(walletId)) {
      const next = await read(service, caller, url);
      expectChainUnavailable(next.response);
      expect(next.ms).toBeLessThan(KNOWN_DOWN_BOUND_MS);
    }

    // The chain returns: the background probe finds it, and reads answer again.
    proxy.decide = () => null;
    const deadline = performance.now() + 6 * TIMEOUT_MS;
    let status = 0;
    while (performance.now() < deadline) {
      status = (await read(service, caller, '/api/v1/gas')).response.statusCode;
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
    for (const url of readsOf(walletId)) {
      expect((await read(service, caller, url)).response.statusCode).toBe(200);
    }
  }, 180_000);
});
