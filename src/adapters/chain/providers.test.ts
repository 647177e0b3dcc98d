/**
 * `RPC_URL` with several providers, against real endpoints: two anvils (one chain id) serving HTTP on loopback ports
 * as a provider's nodes do, the fault-injecting proxy of the CI tests in front of the first, plus a port nobody
 * listens on.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createPublicClient, custom, type Hex, keccak256, type PublicClient, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultyRpcProxy, startFaultyRpcProxy } from '../../../test/faults/rpc-proxy.ts';
import { REFUSING_PORT } from '../../../test/faults/service.ts';
import { anvilBinary } from './anvil.ts';
import {
  type Eip1193,
  EMBEDDED_BLOCK_GAS_LIMIT,
  EMBEDDED_CHAIN_ID,
  INITIAL_BASE_FEE,
  RpcError,
} from './evm.ts';
import {
  createProviderList,
  type ProviderFailure,
  type ProviderList,
  type ProviderObserver,
  providerFailure,
  splitRpcUrls,
  withRounds,
} from './providers.ts';
import { devnetChain } from './remote.ts';

/** An anvil serving JSON-RPC over HTTP on a loopback port, as a provider's node does. */
interface HttpNode extends Eip1193 {
  url: string;
  close(): Promise<void>;
}

let first: HttpNode;
let second: HttpNode;
let proxy: FaultyRpcProxy;

/**
 * A plain anvil on a port the kernel picks (the embedded network's anvil serves nobody but the service: anvil.ts),
 * with the embedded chain's settings and no mining of its own, under the embedded network's guard so it never
 * outlives this test process.
 */
async function anvil(): Promise<HttpNode> {
  const guard = fileURLToPath(new URL('./anvil-guard.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    [
      guard,
      anvilBinary(),
      ...['--host', '127.0.0.1', '--port', '0', '--chain-id', String(EMBEDDED_CHAIN_ID), '--accounts', '0'],
      ...[
        '--gas-limit',
        String(EMBEDDED_BLOCK_GAS_LIMIT),
        '--base-fee',
        String(INITIAL_BASE_FEE),
        '--no-mining',
      ],
      ...['--timestamp', String(Math.floor(Date.now() / 1000) - 1)],
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let printed = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      printed += chunk;
      const listening = /Listening on ([\d.]+:\d+)/.exec(printed);
      if (listening) resolve(`http://${listening[1]}`);
    });
    void exited.then(() => reject(new Error(`anvil exited before it listened:\n${printed}`)));
  });
  return {
    url,
    async request({ method, params }) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }),
      });
      const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
      if (body.error) throw new RpcError(body.error.code, body.error.message);
      return body.result;
    },
    async close() {
      // The guard kills anvil when its stdin closes.
      child.stdin.end();
      await exited;
    },
  };
}

/** A provider that refuses every connection. */
const DEAD_URL = `http://127.0.0.1:${REFUSING_PORT}/v3/secret-key`;

beforeAll(async () => {
  [first, second] = await Promise.all([anvil(), anvil()]);
  proxy = await startFaultyRpcProxy({ upstream: first.url, stallMs: 5000 });
});
afterAll(async () => {
  await proxy?.kill();
  await Promise.all([first?.close(), second?.close()]);
});

interface Seen {
  requests: { position: number; method: string; failure: ProviderFailure | null }[];
  availability: [number, boolean][];
}

function observed(): { observer: ProviderObserver; seen: Seen } {
  const seen: Seen = { requests: [], availability: [] };
  return {
    seen,
    observer: {
      request: ({ provider, method, failure }) =>
        seen.requests.push({ position: provider.position, method, failure }),
      availability: (provider, available) => seen.availability.push([provider.position, available]),
    },
  };
}

function clientOf(list: ProviderList): PublicClient {
  return createPublicClient({
    chain: devnetChain,
    transport: custom({ request: list.request }, { retryCount: 0 }),
  }) as PublicClient;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True once `check` is, polling for up to 10 s (the other provider's request may still be under way). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

describe('RPC_URL as a list of providers', () => {
  it('splits the setting on commas and names a provider by position and host only', () => {
    expect(splitRpcUrls(' https://a.example/key1 , ,https://b.example:8545/v3/key2,')).toEqual([
      'https://a.example/key1',
      'https://b.example:8545/v3/key2',
    ]);
    expect(splitRpcUrls(null)).toEqual([]);
    const list = createProviderList({ urls: [DEAD_URL, second.url], chain: devnetChain });
    const names = list.status().map((entry) => entry.provider);
    expect(names[0]?.position).toBe(1);
    expect(names[0]?.host).toBe(new URL(DEAD_URL).host);
    expect(JSON.stringify(names)).not.toContain('secret-key');
  });

  it('fails reads over on 503, 429, resets and stalls, sets the failed one aside, and goes back once it recovers', async () => {
    // Distinct chains to tell who answered: the second anvil is a block ahead.
    await second.request({ method: 'evm_mine', params: [] });
    const { observer, seen } = observed();
    const list = createProviderList({
      urls: [proxy.url, second.url],
      chain: devnetChain,
      // Well under the stall (5 s), well over a loaded machine's answer through the proxy.
      timeoutMs: 2000,
      // Long enough that a loaded machine's next read comes before the backoff ends.
      backoffMs: 2000,
      maxBackoffMs: 4000,
      observer,
    });
    const client = clientOf(list);
    const firstHeight = BigInt((await first.request({ method: 'eth_blockNumber' })) as Hex);
    const secondHeight = BigInt((await second.request({ method: 'eth_blockNumber' })) as Hex);
    expect(secondHeight).toBe(firstHeight + 1n);

    // In order of preference while the first answers.
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(firstHeight);

    const expectedReason: Record<string, ProviderFailure> = {
      http_503: 'http_error',
      http_429: 'rate_limited',
      reset: 'connection',
      stall: 'timeout',
    };
    for (const fault of ['http_503', 'http_429', 'reset', 'stall'] as const) {
      proxy.decide = () => fault;
      seen.requests.length = 0;
      // The same read answers, from the second provider.
      expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(secondHeight);
      expect(seen.requests[0]).toEqual({
        position: 1,
        method: 'eth_blockNumber',
        failure: expectedReason[fault],
      });
      expect(seen.requests[1]).toEqual({ position: 2, method: 'eth_blockNumber', failure: null });
      expect(list.status().map((entry) => entry.available)).toEqual([false, true]);
      // Set aside: the next reads go straight to the second provider.
      const before = proxy.counts[fault];
      seen.requests.length = 0;
      expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(secondHeight);
      expect(proxy.counts[fault]).toBe(before);
      expect(seen.requests).toEqual([{ position: 2, method: 'eth_blockNumber', failure: null }]);

      // Recovered: after its backoff a probe finds it answering, and reads go back to it.
      proxy.decide = () => null;
      await sleep(2500);
      await client.getBlockNumber({ cacheTime: 0 }); // due: this read starts the probe
      for (let i = 0; i < 50 && !list.status()[0]?.available; i++) await sleep(20);
      expect(list.status()[0]?.available).toBe(true);
      expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(firstHeight);
    }
    expect(seen.availability.filter(([position]) => position === 1).slice(0, 3)).toEqual([
      [1, true],
      [1, false],
      [1, true],
    ]);
  }, 60_000);

  it('returns a node answer as it is, without asking the next provider', async () => {
    const { observer, seen } = observed();
    const list = createProviderList({ urls: [first.url, second.url], chain: devnetChain, observer });
    const error = await list
      .request({ method: 'eth_getBalance', params: ['not an address', 'latest'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(providerFailure(error)).toBeNull();
    expect(seen.requests).toEqual([{ position: 1, method: 'eth_getBalance', failure: null }]);
    expect(list.status().every((entry) => entry.available)).toBe(true);
  });

  it('asks the whole list again, a little later, when every provider failed a read; never after a node answer', async () => {
    const { observer, seen } = observed();
    const list = createProviderList({ urls: [proxy.url], chain: devnetChain, observer, backoffMs: 10 });
    let failuresLeft = 0;
    // Only the reads under test fail: the list's background probe (eth_blockNumber) goes through as it comes.
    proxy.decide = (call) => (call.method === 'eth_chainId' && failuresLeft-- > 0 ? 'http_503' : null);
    try {
      failuresLeft = 2;
      const chainId = await withRounds(list.request, 3, 10)({ method: 'eth_chainId', params: [] });
      expect(Number(chainId)).toBe(EMBEDDED_CHAIN_ID);
      const asked = seen.requests.filter((request) => request.method === 'eth_chainId');
      expect(asked.map((request) => request.failure)).toEqual(['http_error', 'http_error', null]);

      failuresLeft = 2;
      const error = await withRounds(
        list.request,
        2,
        10,
      )({ method: 'eth_chainId', params: [] }).catch((e: unknown) => e);
      // Every provider failed: the chain is unreachable, saying why the last one failed.
      expect(error).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(providerFailure(error)).toBe('http_error');

      seen.requests.length = 0;
      const answer = await withRounds(
        list.request,
        3,
        10,
      )({
        method: 'eth_getBalance',
        params: ['not an address', 'latest'],
      }).catch((e: unknown) => e);
      expect(providerFailure(answer)).toBeNull();
      expect(seen.requests.filter((request) => request.method === 'eth_getBalance')).toHaveLength(1);
    } finally {
      proxy.decide = () => null;
    }
  });

  it('reads through the second provider when the first is gone for good', async () => {
    const { observer, seen } = observed();
    const list = createProviderList({ urls: [DEAD_URL, second.url], chain: devnetChain, observer });
    const client = clientOf(list);
    for (let i = 0; i < 5; i++) {
      expect(await client.getChainId()).toBe(EMBEDDED_CHAIN_ID);
    }
    const failures = seen.requests.filter((request) => request.failure);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.every((request) => request.position === 1 && request.failure === 'connection')).toBe(
      true,
    );
    expect(seen.requests.filter((request) => request.position === 2 && !request.failure)).toHaveLength(5);
  });

  it('broadcasts a transaction to every provider, and answers when only one takes it', async () => {
    const key = generatePrivateKey();
    const from = privateKeyToAccount(key);
    for (const node of [first, second]) {
      await node.request({
        method: 'anvil_setBalance',
        params: [from.address, `0x${parseEther('1').toString(16)}`],
      });
    }
    const sign = (nonce: number) =>
      from.signTransaction({
        chainId: EMBEDDED_CHAIN_ID,
        type: 'eip1559',
        nonce,
        to: '0x00000000000000000000000000000000000000b0',
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 10n * INITIAL_BASE_FEE,
        maxPriorityFeePerGas: 1n,
      });
    const pooled = async (node: HttpNode, hash: Hex) =>
      (await node.request({ method: 'eth_getTransactionByHash', params: [hash] })) !== null;

    // Both answer: both pools hold it.
    const list = createProviderList({ urls: [proxy.url, second.url], chain: devnetChain });
    const signed = await sign(0);
    const hash = await list.request({ method: 'eth_sendRawTransaction', params: [signed] });
    expect(hash).toBe(keccak256(signed));
    // The first acceptance answers, so the other provider may still be taking it: both are read until they hold it.
    expect([
      await eventually(() => pooled(first, hash as Hex)),
      await eventually(() => pooled(second, hash as Hex)),
    ]).toEqual([true, true]);

    // The first takes it but its answer is lost: the second's answers.
    proxy.decide = ({ method }) => (method === 'eth_sendRawTransaction' ? 'lost_answer' : null);
    const next = await sign(1);
    expect(await list.request({ method: 'eth_sendRawTransaction', params: [next] })).toBe(keccak256(next));
    // The first provider's node took it too (its answer was lost after it did).
    expect(await eventually(() => pooled(first, keccak256(next)))).toBe(true);
    proxy.decide = () => null;

    // Nobody takes it: the node's refusal is what the caller reads, not the dead provider's connection error.
    const poor = privateKeyToAccount(generatePrivateKey());
    const refused = await poor.signTransaction({
      chainId: EMBEDDED_CHAIN_ID,
      type: 'eip1559',
      nonce: 0,
      to: from.address,
      value: parseEther('1'),
      gas: 21_000n,
      maxFeePerGas: 10n * INITIAL_BASE_FEE,
      maxPriorityFeePerGas: 1n,
    });
    const lonely = clientOf(createProviderList({ urls: [DEAD_URL, second.url], chain: devnetChain }));
    const error = await lonely
      .sendRawTransaction({ serializedTransaction: refused })
      .catch((e: unknown) => e);
    expect(providerFailure(error)).toBeNull();
    expect(String((error as Error).message)).toMatch(/insufficient funds|funds/i);
  });
});
