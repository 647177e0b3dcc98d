/**
 * kill -9 between signing a batch and broadcasting it. A service process (`NETWORK=devnet`) reaches `sealpay
 * devnet` through a JSON-RPC relay of this test's; the relay holds the first `eth_sendRawTransaction` addressed to
 * the TransferBatcher, unanswered and unforwarded, and the service is killed with SIGKILL while it waits. The batch
 * is then signed and stored, and the chain has never seen it. Restarted on the same DATA_DIR, the service sends
 * those same bytes: the chain holds exactly one batch transaction, every leg carries its hash, the balances agree.
 */

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Hex, isAddressEqual, keccak256, parseTransaction } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createWallet,
  freshDataDir,
  kill9,
  LOAD_ENV,
  readDevnetEnv,
  request,
  type ServiceProcess,
  seededDataDir,
  signupWithKey,
  spawnService,
  waitForOutput,
  waitReady,
  waitTerminal,
} from './service.ts';

const running: ServiceProcess[] = [];
let relay: Server | null = null;
afterAll(async () => {
  await Promise.all(running.map((service) => kill9(service)));
  relay?.closeAllConnections();
  relay?.close();
});

interface JsonRpcRequest {
  method: string;
  params?: unknown[];
}

/** Forwards JSON-RPC to `upstream`; while `holding`, never answers a raw transaction to `batcher`. */
async function startRelay(upstream: string, batcher: Hex) {
  const state = { holding: true, held: null as Hex | null };
  let onHeld: (raw: Hex) => void = () => {};
  const held = new Promise<Hex>((resolve) => {
    onHeld = resolve;
  });
  const read = (incoming: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      incoming.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      incoming.on('end', () => resolve(body));
    });
  const isBatch = (call: JsonRpcRequest) => {
    if (call.method !== 'eth_sendRawTransaction') return false;
    const to = parseTransaction(call.params?.[0] as Hex).to;
    return to !== undefined && to !== null && isAddressEqual(to, batcher);
  };
  const forward = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const body = await read(incoming);
    const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const batchCall = calls.find(isBatch);
    if (state.holding && batchCall) {
      state.held = batchCall.params?.[0] as Hex;
      onHeld(state.held);
      return; // never answered: the service waits on it until it is killed
    }
    const answer = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    outgoing.writeHead(answer.status, { 'content-type': 'application/json' });
    outgoing.end(await answer.text());
  };
  // The devnet and the service are killed (-9) at teardown while calls may be on their way through: a call that
  // fails then drops its connection, as the chain going away would, instead of rejecting with no one to catch it.
  relay = createServer((incoming, outgoing) => {
    forward(incoming, outgoing).catch(() => outgoing.destroy());
  });
  await new Promise<void>((resolve) => relay?.listen(0, '127.0.0.1', () => resolve()));
  const address = relay.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, state, held };
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result?: unknown }).result;
}

describe('kill -9 between signing and broadcasting a batch', () => {
  it('sends the stored batch once after the restart, every leg settled by it', async () => {
    const devnetDir = freshDataDir('sealpay-batch-devnet-');
    const devnet = await spawnService({ command: 'devnet', dataDir: devnetDir });
    running.push(devnet);
    await waitForOutput(devnet, /sealpay devnet: JSON-RPC/);
    const settings = readDevnetEnv(devnetDir);
    const chainUrl = settings.RPC_URL as string;
    const batcher = settings.TRANSFER_BATCHER_ADDRESS as Hex;
    expect(batcher).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const relayed = await startRelay(chainUrl, batcher);

    const serviceDir = seededDataDir('sealpay-batch-service-');
    const env = {
      ...LOAD_ENV,
      ...settings,
      RPC_URL: relayed.url,
      MASTER_KEY: randomBytes(32).toString('hex'),
      WORKER_BATCH_WINDOW_MS: '1500',
    };
    let service = await spawnService({ dataDir: serviceDir, env });
    running.push(service);
    await waitReady(service);
    const client = await signupWithKey(service.baseUrl);
    const alice = await createWallet(service.baseUrl, client);
    const bob = await createWallet(service.baseUrl, client);
    const carol = await createWallet(service.baseUrl, client);
    const post = async (baseUrl: string, path: string, body: Record<string, string>) => {
      const response = await request(baseUrl, 'POST', `/api/v1${path}`, { headers: client.headers, body });
      expect(response.status).toBe(201);
      return response.body.data.transaction.id as string;
    };
    for (const wallet of [alice, bob]) {
      for (const path of ['/fund', '/mint']) {
        const id = await post(service.baseUrl, path, { walletId: wallet.id, amount: '20' });
        expect((await waitTerminal(service.baseUrl, client, id)).status).toBe('CONFIRMED');
      }
    }
    const baseline = BigInt((await rpc(chainUrl, 'eth_blockNumber')) as string);

    const legs = await Promise.all([
      post(service.baseUrl, '/transfer', { walletId: alice.id, to: carol.address, amount: '3' }),
      post(service.baseUrl, '/transfer', { walletId: bob.id, to: carol.address, amount: '4' }),
      post(service.baseUrl, '/transfer', { walletId: alice.id, to: carol.address, amount: '5' }),
    ]);
    const raw = await relayed.held;
    await kill9(service);
    const hash = keccak256(raw);
    // Signed and stored, never seen by the chain.
    expect(await rpc(chainUrl, 'eth_getTransactionByHash', [hash])).toBeNull();

    relayed.state.holding = false;
    service = await spawnService({ dataDir: serviceDir, env });
    running.push(service);
    await waitReady(service);
    const settled = await Promise.all(legs.map((id) => waitTerminal(service.baseUrl, client, id)));
    expect(settled.map((leg) => leg.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
    expect(settled.map((leg) => leg.txHash)).toEqual([hash, hash, hash]);

    // Exactly one transaction to the batcher since the baseline: the stored one.
    const head = BigInt((await rpc(chainUrl, 'eth_blockNumber')) as string);
    const toBatcher: Hex[] = [];
    for (let number = baseline + 1n; number <= head; number++) {
      const block = (await rpc(chainUrl, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, true])) as {
        transactions: { hash: Hex; to: Hex | null }[];
      };
      for (const tx of block.transactions) {
        if (tx.to && isAddressEqual(tx.to, batcher)) toBatcher.push(tx.hash);
      }
    }
    expect(toBatcher).toEqual([hash]);

    const balance = async (walletId: string) =>
      (
        await request(service.baseUrl, 'GET', `/api/v1/balances?walletId=${walletId}`, {
          headers: client.headers,
        })
      ).body.data.balances[0].confidential.amount;
    expect(await balance(carol.id)).toBe('12.00');
    expect(await balance(alice.id)).toBe('12.00');
    expect(await balance(bob.id)).toBe('16.00');
  }, 300_000);
});
