/**
 * kill -9 while webhooks are being delivered and money received is being followed: a real service process
 * (`node src/main.ts start`, one DATA_DIR) sends transfers from Alice to Bob; both accounts have an endpoint on a
 * local receiver that answers slowly (so sends are in flight) and verifies every delivery with the reference
 * verifier (`standardwebhooks`). The process is killed with SIGKILL twice, each time while deliveries are in flight,
 * and restarted on the same DATA_DIR. Once everything settles: no event was lost (every status each transaction
 * took reached Alice's endpoint, every transfer reached Bob's as money received), a repeated send always carries the
 * same `webhook-id` (and the same body), and each transfer is recorded once on each side.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { type Api, apiOf, type HttpResponse } from '../api.ts';
import {
  type Client,
  kill9,
  LOAD_ENV,
  listAll,
  type ServiceProcess,
  seededDataDir,
  sleep,
  spawnService,
  TERMINAL,
  waitReady,
} from './service.ts';

interface Delivery {
  path: string;
  id: string;
  body: string;
  payload: { type: string; data: { id: string; status: string; direction: string; txHash: string | null } };
}

const deliveries: Delivery[] = [];
const unverified: string[] = [];
const secrets = new Map<string, string>();
const receiver = createServer((incoming, response) => {
  let body = '';
  incoming.setEncoding('utf8');
  incoming.on('data', (chunk: string) => {
    body += chunk;
  });
  incoming.on('end', () => {
    const path = incoming.url ?? '/';
    const headers = incoming.headers as IncomingHttpHeaders & Record<string, string>;
    try {
      new Webhook(secrets.get(path) ?? 'whsec_').verify(body, headers);
    } catch (error) {
      unverified.push(`${path}: ${(error as Error).message}`);
    }
    deliveries.push({ path, id: String(headers['webhook-id']), body, payload: JSON.parse(body) });
    // Slow on purpose: the kills land while sends are in flight.
    setTimeout(() => response.end('ok'), 150);
  });
});

let service: ServiceProcess | null = null;
afterAll(async () => {
  if (service) await kill9(service);
  receiver.close();
});

async function sessionClient(api: Api<HttpResponse>, name: string): Promise<Client & { cookie: string }> {
  const email = `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const signed = await api.post('/auth/signup', { body: { email, password: 'Correct-Horse-9' } });
  expect(signed.statusCode).toBe(201);
  const setCookie = [signed.headers['set-cookie'] ?? []].flat();
  const cookie = (setCookie.find((c) => c.startsWith('svc_session=')) ?? '').split(';')[0];
  return { email, cookie: cookie as string, headers: { cookie: cookie as string } };
}

async function start(dataDir: string, port?: number): Promise<ServiceProcess> {
  const started = await spawnService({
    dataDir,
    ...(port ? { port } : {}),
    env: { ...LOAD_ENV, FOLLOWER_POLL_MS: '50', WORKER_POLL_MS: '20' },
  });
  await waitReady(started);
  return started;
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${service?.tail()}`);
    await sleep(100);
  }
}

describe('kill -9 during webhook delivery and while following the chain', () => {
  it('loses no event, repeats one only under its webhook-id, and records each transfer once per side', async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const dataDir = seededDataDir('sealpay-events-kill9-');
    service = await start(dataDir);
    const port = service.port;
    // Over real HTTP to the process; a restart keeps the port, so the same origin throughout.
    const api = apiOf(service.baseUrl);
    const alice = await sessionClient(api, 'alice');
    const bob = await sessionClient(api, 'bob');
    for (const [client, path] of [
      [alice, '/alice'],
      [bob, '/bob'],
    ] as const) {
      const registered = await api.post('/webhooks', {
        body: { url: `${receiverUrl}${path}`, events: ['transaction.created', 'transaction.updated'] },
        headers: client.headers,
      });
      expect(registered.statusCode).toBe(201);
      secrets.set(path, registered.json().data.secret);
    }
    const aliceWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers })
    ).json().data.wallet;
    const bobWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob.headers })
    ).json().data.wallet;
    const settled = async () =>
      (await listAll(service?.baseUrl ?? '', alice)).every((row) => TERMINAL.has(row.status));
    await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '200' }, headers: alice.headers });
    await until(settled, 'the faucet');
    const minted = await api.post('/mint', {
      body: { walletId: aliceWallet.id, amount: '100' },
      headers: alice.headers,
    });
    expect(minted.statusCode).toBe(201);
    await until(settled, 'the mint');

    const TRANSFERS = 12;
    let kills = 0;
    for (let i = 1; i <= TRANSFERS; i++) {
      const sent = await api.post('/transfer', {
        body: { walletId: aliceWallet.id, to: bobWallet.address, amount: `${i}` },
        headers: alice.headers,
      });
      expect(sent.statusCode).toBe(201);
      if (i === 4 || i === 9) {
        // Wait until sends are in flight (the receiver holds each for 150 ms), then kill.
        const seen = deliveries.length;
        await until(() => deliveries.length > seen, 'a delivery in flight', 60_000);
        await sleep(40);
        await kill9(service);
        kills += 1;
        service = await start(dataDir, port);
      }
    }
    expect(kills).toBe(2);

    // Everything settles: every transaction terminal, every transfer received by Bob.
    await until(async () => {
      const rows = await listAll(service?.baseUrl ?? '', alice);
      return rows.length === TRANSFERS + 2 && rows.every((row) => TERMINAL.has(row.status));
    }, "Alice's transactions");
    const aliceRows = await listAll(service.baseUrl, alice);
    const confirmed = aliceRows.filter((row) => row.type === 'TRANSFER' && row.status === 'CONFIRMED');
    expect(confirmed.length).toBe(TRANSFERS);
    await until(async () => {
      const rows = await listAll(service?.baseUrl ?? '', bob);
      return confirmed.every((sent) => rows.some((row) => row.txHash === sent.txHash));
    }, "Bob's incoming transfers");
    const bobRows = await listAll(service.baseUrl, bob);
    // Transfers queued together go out as one batch (one chain transaction, a log per leg): Bob receives as many
    // rows in each chain transaction as Alice's transfers it carries, each at its own log.
    for (const hash of new Set(confirmed.map((sent) => sent.txHash))) {
      const sent = confirmed.filter((row) => row.txHash === hash);
      const received = bobRows.filter((row) => row.txHash === hash);
      expect(received, `transfer ${hash} received once per leg`).toHaveLength(sent.length);
      expect(new Set(received.map((row) => row.logIndex)).size).toBe(sent.length);
      for (const row of received) expect(row).toMatchObject({ type: 'TRANSFER', direction: 'in' });
      expect(received.map((row) => row.amount).sort()).toEqual(sent.map((row) => row.amount).sort());
    }

    // Every event reached its endpoint: each status each of Alice's transactions took, each of Bob's receipts.
    const expected = [
      ...aliceRows.map((row) => `/alice transaction.created ${row.id}`),
      ...aliceRows.map((row) => `/alice transaction.updated ${row.id} ${row.status}`),
      ...bobRows.map((row) => `/bob transaction.created ${row.id}`),
    ];
    const seen = () =>
      new Set(
        deliveries.flatMap((item) => [
          `${item.path} ${item.payload.type} ${item.payload.data.id}`,
          `${item.path} ${item.payload.type} ${item.payload.data.id} ${item.payload.data.status}`,
        ]),
      );
    await until(() => expected.every((line) => seen().has(line)), 'every event delivered');
    expect(unverified).toEqual([]);

    // A repeated send is the same event: same webhook-id, same body. Two ids never carry the same change.
    const byId = new Map<string, Delivery[]>();
    for (const item of deliveries) byId.set(item.id, [...(byId.get(item.id) ?? []), item]);
    for (const [id, sends] of byId) {
      expect(new Set(sends.map((item) => item.body)).size, `the sends of ${id}`).toBe(1);
    }
    const changes = [...byId.values()].map(([first]) => {
      const { type, data } = (first as Delivery).payload;
      return `${(first as Delivery).path} ${type} ${data.id} ${type === 'transaction.created' ? '' : data.status}`;
    });
    expect(new Set(changes).size).toBe(changes.length);
  }, 600_000);
});
