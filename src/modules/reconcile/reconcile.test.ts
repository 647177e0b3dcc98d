/**
 * Reconciliation on a busy sandbox (the worker, the follower, every kind of money movement): 0 differences; an
 * outflow made with an exported key straight on chain is a `direction: "out"` row and still 0; a row written wrongly
 * on purpose is a difference naming its wallet and asset, and the real `sealpay reconcile` process exits 1.
 * On PGlite by default, on PostgreSQL when DATABASE_URL is set (`npm run test:pg`).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { type Address, createWalletClient, custom, erc20Abi, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, apiOf } from '../../../test/api.ts';
import {
  type Caller,
  createTestContext,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import { decodeWalletKeyNota, webCryptoDecrypt } from '../../../test/wallet-key-nota.ts';
import { letterVaultAbi } from '../../adapters/chain/contracts.ts';
import { encodeConfidentialTransfer } from '../../adapters/confidential/helpers.ts';
import { startControlServer } from '../../control.ts';
import { letters, transactions } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { startFollower } from '../incoming/follower.service.ts';
import { readCursor } from '../incoming/incoming.repository.ts';
import { formatReconcile, reconcileExitCode } from './reconcile.cli.ts';
import { readRun } from './reconcile.repository.ts';
import { logDifferences, RECONCILE_JOB, reconcile, reconcileScheduled } from './reconcile.service.ts';

const execFileAsync = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../main.ts', import.meta.url));

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
let carol: Caller;
let aliceWallet: { id: string; address: Address };
let bobWallet: { id: string; address: Address };
let carolExternal: { id: string; address: Address };
const stoppers: Array<() => Promise<void>> = [];
const warnings: Array<Record<string, unknown>> = [];
const logger = {
  info: () => {},
  warn: (object: object) => warnings.push(object as Record<string, unknown>),
  error: () => {},
};

/** The transaction a money movement queued (its 201 asserted), once finished. */
async function settled(caller: Caller, response: ApiResponse) {
  expect(response.statusCode).toBe(201);
  return waitForStatus(ctx.app, caller.headers, response.json().data.transaction.id);
}

async function list(caller: Caller) {
  const response = await api.get('/transactions', { query: { pageSize: 100 }, headers: caller.headers });
  expect(response.statusCode).toBe(200);
  return response.json().data.items as Array<Record<string, unknown>>;
}

function network() {
  const found = ctx.deps.network;
  if (!found) throw new Error('no chain');
  return found;
}

async function caughtUp() {
  const head = await network().publicClient.getBlockNumber({ cacheTime: 0 });
  for (let i = 0; i < 800; i++) {
    const cursor = await readCursor(ctx.deps.database.db, network().chainId);
    if (cursor !== null && cursor >= head) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the follower did not catch up');
}

function letter(caller: Caller, walletId: string, amount: string) {
  return api.post('/transfer/letter', {
    body: {
      walletId,
      amount,
      recipient: {
        name: 'Bob',
        address: { line1: '1 Main St', city: 'Springfield', region: 'IL', country: 'US' },
      },
    },
    headers: caller.headers,
  });
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      FOLLOWER_POLL_MS: '20',
    },
  });
  stoppers.push(startFollower(ctx.deps, logger));
  [alice, bob, carol] = [await signup(ctx.app), await signup(ctx.app), await signup(ctx.app)];
  aliceWallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers })).json()
    .data.wallet;
  bobWallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob.headers })).json().data
    .wallet;
  carolExternal = (
    await api.post('/wallets', {
      body: {
        type: 'EXTERNAL',
        address: privateKeyToAccount(`0x${'43'.repeat(32)}`).address,
      },
      headers: carol.headers,
    })
  ).json().data.wallet;
}, 300_000);
afterAll(async () => {
  for (const stop of stoppers.reverse()) await stop();
  await ctx?.close();
});

describe('reconcile', () => {
  it('finds no difference on a busy sandbox: funds, mints, transfers, letters, a redeem, a failed transfer', async () => {
    await settled(
      alice,
      await api.post('/fund', { body: { walletId: aliceWallet.id, amount: '300' }, headers: alice.headers }),
    );
    await settled(
      bob,
      await api.post('/fund', { body: { walletId: bobWallet.id, amount: '40' }, headers: bob.headers }),
    );
    await settled(
      alice,
      await api.post('/mint', { body: { walletId: aliceWallet.id, amount: '200' }, headers: alice.headers }),
    );
    // Several transfers at once: the worker batches them.
    const sent = await Promise.all(
      ['5', '6', '7'].map((amount) =>
        api.post('/transfer', {
          body: { walletId: aliceWallet.id, to: bobWallet.address, amount },
          headers: alice.headers,
        }),
      ),
    );
    for (const response of sent) {
      expect(response.statusCode).toBe(201);
      await waitForStatus(ctx.app, alice.headers, response.json().data.transaction.id);
    }
    await settled(
      alice,
      await api.post('/transfer', {
        body: {
          walletId: aliceWallet.id,
          to: carolExternal.address,
          amount: '4',
        },
        headers: alice.headers,
      }),
    );
    expect(
      (
        await settled(
          alice,
          await api.post('/transfer', {
            body: {
              walletId: aliceWallet.id,
              to: bobWallet.address,
              amount: '9999',
            },
            headers: alice.headers,
          }),
        )
      ).status,
    ).toBe('FAILED');
    await settled(
      alice,
      await api.post('/redeem', { body: { walletId: aliceWallet.id, amount: '10' }, headers: alice.headers }),
    );
    const claimed = await letter(alice, aliceWallet.id, '3');
    expect(claimed.statusCode).toBe(201);
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: claimed.json().data.letter.claimCode,
        walletId: bobWallet.id,
      },
      headers: bob.headers,
    });
    expect(claim.statusCode).toBe(200);
    const voided = await letter(alice, aliceWallet.id, '2');
    const held = await letter(alice, aliceWallet.id, '1.5');
    expect([voided.statusCode, held.statusCode]).toEqual([201, 201]);
    const voiding = await api.post('/transfer/letter/{id}/void', {
      params: { id: voided.json().data.letter.id },
      body: {},
      headers: alice.headers,
    });
    expect(voiding.statusCode).toBe(200);
    await caughtUp();

    const report = await reconcile(ctx.deps);
    expect(report.differences).toBe(0);
    // Every custodial wallet, both assets; the external one reported, not judged.
    const alices = report.wallets.filter((check) => check.walletId === aliceWallet.id);
    expect(alices.map((check) => [check.asset, check.ledger, check.chain, check.difference])).toEqual([
      ['STABLE', '110.00', '110.00', '0.00'],
      ['cSTABLE', '163.50', '163.50', '0.00'],
    ]);
    expect(report.wallets.filter((check) => check.walletId === bobWallet.id)).toHaveLength(2);
    expect(report.wallets.find((check) => check.walletId === carolExternal.id)).toMatchObject({
      asset: 'STABLE',
      ledger: null,
      difference: null,
    });
    // The vault holds the one letter neither claimed nor voided.
    expect(report.vault).toMatchObject({ letters: 1, ledger: '1.50', chain: '1.50', difference: '0.00' });
    expect(report.operator.daysLeft).toBeGreaterThan(0);
    expect(BigInt(report.operator.spentLast7Days.replace('.', ''))).toBeGreaterThan(0n);
    expect(report.stuck).toEqual([]);
    expect(formatReconcile(report).split('\n').at(-1)).toBe('reconcile: 3 wallets, 0 differences');
    expect(reconcileExitCode(report)).toBe(0);
  });

  it('checks the vault with 33 escrowed letters, more than one decryption request carries (32 amounts)', async () => {
    const before = (await reconcile(ctx.deps)).vault;
    // 0.01 to 0.33, one after the other: 5.61 in all.
    for (let cents = 1; cents <= 33; cents++) {
      expect((await letter(alice, aliceWallet.id, (cents / 100).toFixed(2))).statusCode).toBe(201);
    }
    await caughtUp();
    const report = await reconcile(ctx.deps);
    expect(report.differences).toBe(0);
    const held = (BigInt(before.ledger.replace('.', '')) + 561n).toString();
    const heldAmount = `${held.slice(0, -2)}.${held.slice(-2)}`;
    expect(report.vault).toMatchObject({
      letters: before.letters + 33,
      ledger: heldAmount,
      chain: heldAmount,
      difference: '0.00',
    });
  }, 600_000);

  it("decrypts 1,000 handles given at once, each value in its place (the escrowed letters' amounts, repeated)", async () => {
    const escrowed = await ctx.deps.database.db.select().from(letters).where(eq(letters.status, 'ESCROWED'));
    expect(escrowed.length).toBeGreaterThan(32);
    const { letterVault, confidentialToken } = network().contracts;
    const records = await Promise.all(
      escrowed.map(async (row) => {
        const [, , handle] = await network().publicClient.readContract({
          address: letterVault,
          abi: letterVaultAbi,
          functionName: 'letterOf',
          args: [row.vaultLetterId],
        });
        return { handle, amount: BigInt(row.amount) };
      }),
    );
    const wanted = Array.from(
      { length: 1000 },
      (_, index) => records[index % records.length] as (typeof records)[0],
    );
    const values = await network().rail.userDecryptMany({
      handles: wanted.map((record) => ({ handle: record.handle, contract: confidentialToken })),
      privateKey: network().operator.privateKey,
    });
    expect(values).toEqual(wanted.map((record) => record.amount));
  }, 600_000);

  it('records an outflow made with an exported key as a TRANSFER out, and still finds no difference', async () => {
    const exported = await api.post('/wallets/{id}/export', {
      params: { id: bobWallet.id },
      body: {
        passphrase: 'correct horse battery',
      },
      headers: bob.headers,
    });
    expect(exported.statusCode).toBe(200);
    const key = await webCryptoDecrypt(
      decodeWalletKeyNota(exported.json().data.nota),
      'correct horse battery',
    );
    const chain = network();
    const signer = createWalletClient({
      account: privateKeyToAccount(key),
      chain: chain.chain,
      transport: custom({ request: (args) => (chain.rpc as NonNullable<typeof chain.rpc>)(args) }),
    });
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const publicHash = await signer.writeContract({
      address: chain.contracts.stablecoin,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [stranger, 12_340_000n],
    });
    await chain.publicClient.waitForTransactionReceipt({ hash: publicHash });
    const encrypted = await chain.rail.encryptAmount({
      contract: chain.contracts.confidentialToken,
      caller: bobWallet.address,
      amount: 2_500_000n,
    });
    const confidentialHash: Hex = await signer.sendTransaction({
      to: chain.contracts.confidentialToken,
      data: encodeConfidentialTransfer(carolExternal.address, encrypted),
      gas: 1_000_000n,
    });
    await chain.publicClient.waitForTransactionReceipt({ hash: confidentialHash });
    await caughtUp();

    const outside = (await list(bob)).filter(
      (row) => row.metadata && (row.metadata as { sentOutside?: boolean }).sentOutside,
    );
    expect(outside.map((row) => [row.txHash, row.amount, row.token])).toEqual(
      expect.arrayContaining([
        [publicHash, '12.34', 'STABLE'],
        [confidentialHash, '2.50', 'cSTABLE'],
      ]),
    );
    expect(outside).toHaveLength(2);
    expect(outside.find((row) => row.txHash === publicHash)).toMatchObject({
      type: 'TRANSFER',
      direction: 'out',
      status: 'CONFIRMED',
      toAddress: stranger,
      counterparty: stranger,
      fromAddress: getAddress(bobWallet.address),
      walletId: bobWallet.id,
    });
    // The external recipient's side: money in, amount unreadable.
    expect((await list(carol)).find((row) => row.txHash === confidentialHash)).toMatchObject({
      direction: 'in',
      amount: null,
    });
    const report = await reconcile(ctx.deps);
    expect(report.differences).toBe(0);
  });

  it('records an external wallet sending confidentially with the amount unknown (null)', async () => {
    const chain = network();
    const owner = privateKeyToAccount(`0x${'43'.repeat(32)}`);
    // The external wallet needs gas: a development account of the embedded chain pays it.
    const funder = createWalletClient({
      account: privateKeyToAccount(chain.operator.privateKey),
      chain: chain.chain,
      transport: custom({ request: (args) => (chain.rpc as NonNullable<typeof chain.rpc>)(args) }),
    });
    await chain.publicClient.waitForTransactionReceipt({
      hash: await funder.sendTransaction({ to: owner.address, value: 10n ** 16n }),
    });
    const signer = createWalletClient({
      account: owner,
      chain: chain.chain,
      transport: custom({ request: (args) => (chain.rpc as NonNullable<typeof chain.rpc>)(args) }),
    });
    const encrypted = await chain.rail.encryptAmount({
      contract: chain.contracts.confidentialToken,
      caller: owner.address,
      amount: 1_000_000n,
    });
    const hash = await signer.sendTransaction({
      to: chain.contracts.confidentialToken,
      data: encodeConfidentialTransfer(bobWallet.address, encrypted),
      gas: 1_000_000n,
    });
    await chain.publicClient.waitForTransactionReceipt({ hash });
    await caughtUp();
    expect((await list(carol)).find((row) => row.txHash === hash)).toMatchObject({
      type: 'TRANSFER',
      direction: 'out',
      amount: null,
      counterparty: getAddress(bobWallet.address),
    });
    expect((await list(bob)).find((row) => row.txHash === hash)).toMatchObject({
      direction: 'in',
      amount: '1.00',
    });
    expect((await reconcile(ctx.deps)).differences).toBe(0);
  });

  it('runs once per interval however many workers ask, and keeps what it found for the gauges', async () => {
    warnings.length = 0;
    const runs = await Promise.all([
      reconcileScheduled(ctx.deps, logger, { settleMs: 0 }),
      reconcileScheduled(ctx.deps, logger, { settleMs: 0 }),
    ]);
    expect(runs.filter((run) => run !== null)).toHaveLength(1);
    expect(await reconcileScheduled(ctx.deps, logger, { settleMs: 0 })).toBeNull();
    // An interval later, the next run is due.
    ctx.clock.advance(60 * 60_000);
    expect(await reconcileScheduled(ctx.deps, logger, { settleMs: 0 })).not.toBeNull();
    const metrics = await ctx.deps.metrics.registry.metrics();
    expect(metrics).toMatch(/^sealpay_reconcile_differences 0$/m);
    expect(metrics).toMatch(/^sealpay_reconcile_last_run_timestamp_seconds \d+(\.\d+)?$/m);
    expect(metrics).toMatch(/^sealpay_operator_gas_days_left \d+(\.\d+)?$/m);
    expect(warnings).toEqual([]);
  });

  it('names the wallet and asset of a row written wrongly, and `sealpay reconcile` exits 1', async () => {
    // A transfer in that never happened on chain, written by the test on purpose.
    await ctx.deps.database.db.insert(transactions).values({
      id: newId(),
      userId: bob.userId,
      walletId: bobWallet.id,
      type: 'TRANSFER',
      direction: 'in',
      status: 'CONFIRMED',
      step: 'received',
      chainId: network().chainId,
      amount: '1000000',
      token: 'cSTABLE',
    });
    const report = await reconcile(ctx.deps, { settleMs: 0 });
    expect(report.differences).toBe(1);
    const wrong = report.wallets.filter((check) => check.difference !== null && check.difference !== '0.00');
    expect(wrong).toEqual([
      expect.objectContaining({ walletId: bobWallet.id, asset: 'cSTABLE', difference: '-1.00' }),
    ]);
    expect(reconcileExitCode(report)).toBe(1);
    const table = formatReconcile(report);
    expect(table).toMatch(new RegExp(`${bobWallet.id} .*cSTABLE .*-1\\.00 .*DIFFERENCE`));
    expect(table.split('\n').at(-1)).toBe('reconcile: 3 wallets, 1 differences');

    // The worker's run logs it: wallet and asset, no confidential amount.
    warnings.length = 0;
    logDifferences(logger, report);
    expect(warnings).toEqual([{ walletId: bobWallet.id, address: bobWallet.address, asset: 'cSTABLE' }]);
    expect((await readRun(ctx.deps.database.db, RECONCILE_JOB))?.differences).toBe(1);

    // The real command, through the running service's control channel (the embedded database is this process's).
    if (ctx.deps.database.kind !== 'pglite') return;
    stoppers.push(await startControlServer(ctx.deps));
    const { DATABASE_URL: _postgres, ...inherited } = process.env;
    const env = { ...inherited, DATA_DIR: ctx.deps.config.dataDir, LOG_LEVEL: 'silent' };
    const run = await execFileAsync(process.execPath, [MAIN, 'reconcile', '--json'], { env }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(run.code).toBe(1);
    const printed = JSON.parse(run.stdout);
    expect(Object.keys(printed).sort()).toEqual(
      ['checkedAt', 'differences', 'needsReview', 'operator', 'stuck', 'vault', 'wallets'].sort(),
    );
    expect(printed.differences).toBe(1);
    expect(printed.wallets).toContainEqual(
      expect.objectContaining({ walletId: bobWallet.id, asset: 'cSTABLE', difference: '-1.00' }),
    );
  }, 300_000);
});
