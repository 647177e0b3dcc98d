/**
 * A wallet's first batched transfer signs its `setOperator(batcher)` grant. When that grant's broadcast is lost
 * (the connection drops before the node took it), the transfers go alone; the grant's signed bytes hold the
 * wallet's next nonce, so the transfer signed after it waits behind them in the pool until they are sent again.
 * The row that signed the grant sends it again first: every transfer confirms and the wallet's chain nonce is the
 * number of transactions the database signed for it.
 */
import { type Address, parseTransaction } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../src/adapters/chain/types.ts';
import { encodeSetOperator } from '../../src/adapters/confidential/helpers.ts';
import { chainSubmissions } from '../../src/db/schema/index.ts';
import type { Deps } from '../../src/deps.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { createTestContext, postData, signup, type TestContext, waitForStatus } from '../harness.ts';
import { networkWithFault } from './faulty-network.ts';

const SET_OPERATOR = encodeSetOperator('0x0000000000000000000000000000000000000000', 0).slice(0, 10);

let ctx: TestContext;
let stopWorker: (() => Promise<void>) | null = null;
let grantsLost = 0;

/** The network as the worker sees it: the first broadcast of a grant fails before it reaches the node. */
const losingFirstGrant = (base: Network) =>
  networkWithFault(base, ({ method, params }) => {
    if (method !== 'eth_sendRawTransaction' || grantsLost > 0) return;
    const [raw] = params as [`0x${string}`];
    if (parseTransaction(raw).data?.startsWith(SET_OPERATOR)) {
      grantsLost++;
      throw new Error('injected fault: connection reset before the transaction was sent');
    }
  });

beforeAll(async () => {
  ctx = await createTestContext({
    network: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      WORKER_BATCH_WINDOW_MS: '1500',
    },
  });
  const workerDeps: Deps = { ...ctx.deps, network: losingFirstGrant(ctx.deps.network as Network) };
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  stopWorker = await startWorker(workerDeps, quiet as never);
});
afterAll(async () => {
  await stopWorker?.();
  await ctx?.close();
});

describe('a lost operator grant', () => {
  it('is sent again before the wallet signs anything else: every transfer confirms, no nonce gap', async () => {
    const caller = await signup(ctx.app);
    const post = (path: string, payload: object) => postData(ctx.app, caller.headers, path, payload);
    const wallet = (await post('/wallets', { type: 'CUSTODIAL' })).wallet;
    const recipient = (await post('/wallets', { type: 'CUSTODIAL' })).wallet;
    for (const path of ['/fund', '/mint']) {
      const queued = await post(path, { walletId: wallet.id, amount: '20' });
      expect((await waitForStatus(ctx.app, caller.headers, queued.transaction.id)).status).toBe('CONFIRMED');
    }
    const transfers = await Promise.all(
      ['1', '2', '3'].map((amount) =>
        post('/transfer', { walletId: wallet.id, to: recipient.address, amount }),
      ),
    );
    const done = await Promise.all(
      transfers.map((data) =>
        waitForStatus(ctx.app, caller.headers, data.transaction.id, undefined, 120_000),
      ),
    );
    expect(grantsLost).toBe(1);
    expect(done.map((t) => t.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);

    const network = ctx.deps.network as Network;
    const signed = (await ctx.deps.database.db.select().from(chainSubmissions)).filter(
      (s) => s.fromAddress.toLowerCase() === wallet.address.toLowerCase(),
    );
    expect(signed.some((s) => s.purpose === 'operator-grant')).toBe(true);
    expect(await network.publicClient.getTransactionCount({ address: wallet.address as Address })).toBe(
      signed.length,
    );
  }, 240_000);
});
