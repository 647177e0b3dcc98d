/**
 * Part b: start to ready. Wall time from spawning `node src/main.ts start` until `GET /readyz` answers 200:
 * cold (fresh DATA_DIR), warm after 50 transactions and a graceful stop (SIGTERM), and after kill -9 with
 * transfers in flight (the restarted process then also finishes them).
 */
import {
  type Client,
  createWallet,
  freshDataDir,
  kill9,
  LOAD_ENV,
  request,
  type ServiceProcess,
  signupWithKey,
  spawnService,
  stopGracefully,
  TERMINAL,
  waitReady,
  waitTerminal,
} from '../test/faults/service.ts';

export interface StartupResult {
  coldMs: number;
  warmAfterTransactionsMs: number;
  afterKill9Ms: number;
  transactionsBeforeWarmRestart: number;
  inFlightAtKill: number;
  recoveredAfterKill: { confirmed: number; failed: number };
  notes: string[];
}

export async function post(
  service: ServiceProcess,
  client: Client,
  path: string,
  body: unknown,
): Promise<string> {
  const response = await request(service.baseUrl, 'POST', `/api/v1${path}`, {
    headers: client.headers,
    body,
  });
  if (response.status !== 201)
    throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data.transaction.id;
}

export async function runStartupBench(): Promise<StartupResult> {
  const dataDir = freshDataDir();

  // Cold.
  let service = await spawnService({ dataDir, env: LOAD_ENV });
  const coldMs = await waitReady(service);

  // 50 transactions: 2 funds, 2 mints, 46 transfers, all settled.
  const alice = await signupWithKey(service.baseUrl);
  const bob = await signupWithKey(service.baseUrl);
  const aliceWallet = await createWallet(service.baseUrl, alice);
  const bobWallet = await createWallet(service.baseUrl, bob);
  let count = 0;
  for (const [client, wallet] of [
    [alice, aliceWallet],
    [bob, bobWallet],
  ] as const) {
    const fund = await post(service, client, '/fund', { walletId: wallet.id, amount: '200' });
    await waitTerminal(service.baseUrl, client, fund);
    const mint = await post(service, client, '/mint', { walletId: wallet.id, amount: '100' });
    await waitTerminal(service.baseUrl, client, mint);
    count += 2;
  }
  const transfers = await Promise.all(
    Array.from({ length: 46 }, (_, n) =>
      n % 2 === 0
        ? post(service, alice, '/transfer', { walletId: aliceWallet.id, to: bobWallet.address, amount: '1' })
        : post(service, bob, '/transfer', { walletId: bobWallet.id, to: aliceWallet.address, amount: '1' }),
    ),
  );
  for (const [n, id] of transfers.entries())
    await waitTerminal(service.baseUrl, n % 2 === 0 ? alice : bob, id);
  count += transfers.length;
  await stopGracefully(service);

  // Warm, after a graceful stop.
  service = await spawnService({ dataDir, env: LOAD_ENV });
  const warmAfterTransactionsMs = await waitReady(service);

  // kill -9 with 10 transfers just queued.
  const inFlight = await Promise.all(
    Array.from({ length: 10 }, () =>
      post(service, alice, '/transfer', { walletId: aliceWallet.id, to: bobWallet.address, amount: '0.25' }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 150));
  await kill9(service);
  service = await spawnService({ dataDir, env: LOAD_ENV });
  let afterKill9Ms: number;
  const recovered = { confirmed: 0, failed: 0 };
  try {
    afterKill9Ms = await waitReady(service);
    for (const id of inFlight) {
      const done = await waitTerminal(service.baseUrl, alice, id, 60_000);
      if (!TERMINAL.has(done.status)) throw new Error(`${id} is ${done.status}`);
      if (done.status === 'CONFIRMED') recovered.confirmed += 1;
      else recovered.failed += 1;
    }
  } finally {
    await stopGracefully(service);
  }
  return {
    coldMs: Math.round(coldMs),
    warmAfterTransactionsMs: Math.round(warmAfterTransactionsMs),
    afterKill9Ms: Math.round(afterKill9Ms),
    transactionsBeforeWarmRestart: count,
    inFlightAtKill: inFlight.length,
    recoveredAfterKill: recovered,
    notes: [
      'spawn of `node src/main.ts start` (a free PORT each time) → first 200 from GET /readyz (polled every 10 ms); LOG_LEVEL=warn',
      `warm: same DATA_DIR after ${count} settled transactions and a graceful stop (SIGTERM)`,
      'after kill -9: 10 transfers queued 150 ms before the kill; the restarted process finishes them',
    ],
  };
}
