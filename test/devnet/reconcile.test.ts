/**
 * Reconciliation on the devnet (a real `sealpay devnet` process over JSON-RPC: the production code path), with the
 * worker and the follower in this process, on PostgreSQL under `npm run test:pg` (PGlite otherwise): after funds,
 * a mint, transfers between wallets, a letter claimed and a redeem, 0 differences, every custodial wallet listed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFollower } from '../../src/modules/incoming/follower.service.ts';
import { readCursor } from '../../src/modules/incoming/incoming.repository.ts';
import { formatReconcile } from '../../src/modules/reconcile/reconcile.cli.ts';
import { reconcile } from '../../src/modules/reconcile/reconcile.service.ts';
import { type ApiResponse, apiOf } from '../api.ts';
import {
  freshDataDir,
  kill9,
  LOAD_ENV,
  readDevnetEnv,
  type ServiceProcess,
  spawnService,
  waitForOutput,
} from '../faults/service.ts';
import { type Caller, createTestContext, signup, type TestContext, waitForStatus } from '../harness.ts';

let devnet: ServiceProcess | undefined;
let ctx: TestContext;
const api = apiOf(() => ctx.app);
let stopFollower: (() => Promise<void>) | undefined;
const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** The transaction a money movement queued (its 201 asserted), once finished. */
async function settled(caller: Caller, response: ApiResponse) {
  expect(response.statusCode).toBe(201);
  return waitForStatus(ctx.app, caller.headers, response.json().data.transaction.id);
}

beforeAll(async () => {
  const dataDir = freshDataDir('sealpay-reconcile-devnet-');
  devnet = await spawnService({ command: 'devnet', dataDir });
  await waitForOutput(devnet, /sealpay devnet: JSON-RPC/, 180_000);
  ctx = await createTestContext({
    worker: true,
    env: {
      ...LOAD_ENV,
      ...readDevnetEnv(dataDir),
      MASTER_KEY: randomBytes(32).toString('hex'),
      FOLLOWER_POLL_MS: '50',
    },
  });
  stopFollower = startFollower(ctx.deps, silent);
}, 300_000);
afterAll(async () => {
  await stopFollower?.();
  await ctx?.close();
  if (devnet) await kill9(devnet);
});

describe('reconcile on the devnet', () => {
  it('finds no difference after funds, a mint, transfers, a letter and a redeem', async () => {
    const [alice, bob] = [await signup(ctx.app), await signup(ctx.app)];
    const aliceWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers })
    ).json().data.wallet;
    const bobWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob.headers })
    ).json().data.wallet;
    await settled(
      alice,
      await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '50' }, headers: alice.headers }),
    );
    await settled(
      alice,
      await api.post('/mint', { body: { walletId: aliceWallet.id, amount: '30' }, headers: alice.headers }),
    );
    for (const amount of ['2', '3']) {
      await settled(
        alice,
        await api.post('/transfer', {
          body: { walletId: aliceWallet.id, to: bobWallet.address, amount },
          headers: alice.headers,
        }),
      );
    }
    const created = await api.post('/transfer/letter', {
      body: {
        walletId: aliceWallet.id,
        amount: '4',
        recipient: {
          name: 'Bob',
          address: { line1: '1 Main St', city: 'Springfield', region: 'IL', country: 'US' },
        },
      },
      headers: alice.headers,
    });
    expect(created.statusCode).toBe(201);
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: created.json().data.letter.claimCode,
        walletId: bobWallet.id,
      },
      headers: bob.headers,
    });
    expect(claim.statusCode).toBe(200);
    await settled(
      alice,
      await api.post('/redeem', { body: { walletId: aliceWallet.id, amount: '1' }, headers: alice.headers }),
    );
    const network = ctx.deps.network;
    if (!network) throw new Error('no chain');
    const head = await network.publicClient.getBlockNumber({ cacheTime: 0 });
    while (((await readCursor(ctx.deps.database.db, network.chainId)) ?? -1n) < head) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const report = await reconcile(ctx.deps);
    expect(report.differences, formatReconcile(report)).toBe(0);
    expect(report.wallets.map((check) => `${check.walletId}:${check.asset}:${check.chain}`).sort()).toEqual(
      [
        `${aliceWallet.id}:STABLE:21.00`,
        `${aliceWallet.id}:cSTABLE:20.00`,
        `${bobWallet.id}:STABLE:0.00`,
        `${bobWallet.id}:cSTABLE:9.00`,
      ].sort(),
    );
    expect(report.vault.difference).toBe('0.00');
    expect(report.operator.daysLeft).toBeGreaterThan(0);
  }, 300_000);
});
