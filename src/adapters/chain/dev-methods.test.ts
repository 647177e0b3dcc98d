/**
 * The development methods of anvil and `hardhat node` on the embedded network: each answers what anvil itself
 * answers (one scenario run on a plain anvil and on the embedded network, their answers compared), and each is
 * journaled so that a start gives the chain that was mined: from the graceful stop's snapshot, from the journal alone,
 * and after a crash whose newest snapshot was taken between an `evm_snapshot` and its `evm_revert` (or before the
 * block a reorg goes back to). Kill -9 of a real devnet process: test/devnet/dev-methods.test.ts.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { chainView, confidentialTransfer, fund, newWallet } from '../../../test/support/chain-fixtures.ts';
import { startAnvil } from './anvil.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork } from './embedded.ts';
import { EMBEDDED_BLOCK_GAS_LIMIT, EMBEDDED_CHAIN_ID, INITIAL_BASE_FEE, RpcError } from './evm.ts';
import { listSnapshots } from './snapshot.ts';

type Rpc = (method: string, params?: unknown) => Promise<unknown>;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-dev-methods-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Block {
  number: string;
  hash: Hex;
  timestamp: string;
  baseFeePerGas: string;
  transactions: string[];
}

const block = async (rpc: Rpc, tag: string | number = 'latest') =>
  (await rpc('eth_getBlockByNumber', [
    typeof tag === 'number' ? `0x${tag.toString(16)}` : tag,
    false,
  ])) as Block;
const height = async (rpc: Rpc) => Number(BigInt((await rpc('eth_blockNumber')) as string));

/** A transfer of `value` wei signed by `key` at `nonce`, as raw bytes and hash. */
async function rawTransfer(key: Hex, nonce: number, value: bigint) {
  const account = privateKeyToAccount(key);
  const serialized = await account.signTransaction({
    chainId: EMBEDDED_CHAIN_ID,
    type: 'eip1559',
    nonce,
    to: '0x00000000000000000000000000000000000000b0',
    value,
    gas: 21_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const { keccak256 } = await import('viem');
  return { serialized, hash: keccak256(serialized) };
}

/**
 * The receipt of `hash` once it exists. Anvil's automine mines a sent transaction after `eth_sendRawTransaction`
 * has answered (CI once read the height between the two), so the scenario waits for the receipt, not the answer.
 */
async function receiptOnceMined(rpc: Rpc, hash: Hex): Promise<{ blockNumber: string }> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as { blockNumber: string } | null;
    if (receipt) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${hash} was not mined within 10 s`);
}

/** The error an RPC call answers, as `{error: code}`, or its result. */
async function answer(rpc: Rpc, method: string, params?: unknown): Promise<unknown> {
  try {
    return await rpc(method, params);
  } catch (error) {
    if (error instanceof RpcError) return { error: error.code };
    throw error;
  }
}

/**
 * Every dev method once, in an order that exercises what each changes. Returns what can be compared between two
 * chains (answers, heights, and facts about blocks and the pool: hashes and times differ from chain to chain).
 */
async function scenario(rpc: Rpc): Promise<Record<string, unknown>> {
  const key = generatePrivateKey();
  const sender = privateKeyToAccount(key).address;
  const seen: Record<string, unknown> = {};
  seen.setBalance = await rpc('anvil_setBalance', [sender, `0x${parseEther('10').toString(16)}`]);
  seen.hardhatSetBalance = await rpc('hardhat_setBalance', [
    '0x00000000000000000000000000000000000000b1',
    '0x64',
  ]);
  seen.balance = await rpc('eth_getBalance', ['0x00000000000000000000000000000000000000b1', 'latest']);
  seen.automine = await rpc('hardhat_getAutomine');
  const start = await height(rpc);
  seen.snapshotId = await rpc('evm_snapshot');
  seen.secondSnapshotId = await rpc('evm_snapshot');

  const tx0 = await rawTransfer(key, 0, 1n);
  await rpc('eth_sendRawTransaction', [tx0.serialized]);
  await receiptOnceMined(rpc, tx0.hash);
  seen.minedAtOnce = (await height(rpc)) - start;

  seen.setAutomineOff = await rpc('evm_setAutomine', [false]);
  seen.automineOff = await rpc('anvil_getAutomine');
  const tx1 = await rawTransfer(key, 1, 2n);
  await rpc('eth_sendRawTransaction', [tx1.serialized]);
  seen.pooledNotMined = (await height(rpc)) - start;
  const content = (await rpc('txpool_content')) as {
    pending: Record<string, Record<string, { hash: string; nonce: string }>>;
    queued: Record<string, unknown>;
  };
  seen.txpoolContent = Object.entries(content.pending).map(([from, byNonce]) => [
    from.toLowerCase() === sender.toLowerCase(),
    Object.keys(byNonce),
    Object.values(byNonce).map((tx) => tx.hash === tx1.hash),
  ]);
  seen.txpoolQueued = content.queued;
  seen.drop = (await rpc('anvil_dropTransaction', [tx1.hash])) === tx1.hash;
  seen.dropAgain = await rpc('anvil_dropTransaction', [tx1.hash]);
  seen.poolAfterDrop = await rpc('txpool_status');
  await rpc('eth_sendRawTransaction', [tx1.serialized]);
  seen.dropAll = await rpc('anvil_dropAllTransactions');
  seen.poolAfterDropAll = await rpc('txpool_status');
  await rpc('eth_sendRawTransaction', [tx1.serialized]);
  seen.mine = await rpc('evm_mine');
  seen.minedFromPool = (await block(rpc)).transactions.length;

  seen.setBaseFee = await rpc('anvil_setNextBlockBaseFeePerGas', ['0x12345678']);
  seen.setBaseFeeHardhat = await rpc('hardhat_setNextBlockBaseFeePerGas', ['0x23456789']);
  await rpc('evm_mine');
  seen.baseFee = (await block(rpc)).baseFeePerGas;

  seen.increaseTime = typeof (await rpc('evm_increaseTime', [100]));
  const last = Number(BigInt((await block(rpc)).timestamp));
  seen.setNextTimestamp = await rpc('evm_setNextBlockTimestamp', [last + 1000]);
  await rpc('evm_mine');
  seen.nextTimestamp = Number(BigInt((await block(rpc)).timestamp)) - last;
  seen.timestampInThePast = await answer(rpc, 'evm_setNextBlockTimestamp', [last]);
  seen.mineWithoutTimestamp = await answer(rpc, 'evm_mine', [{ blocks: 2 }]);
  seen.mineTwo = await rpc('evm_mine', [{ timestamp: null, blocks: 2 }]);
  seen.mineAt = await rpc('evm_mine', [`0x${(last + 2000).toString(16)}`]);
  seen.minedAt = Number(BigInt((await block(rpc)).timestamp)) - last;
  const beforeRollback = await height(rpc);
  seen.afterMining = beforeRollback - start;

  seen.rollback = await rpc('anvil_rollback', [1]);
  seen.rolledBack = beforeRollback - (await height(rpc));
  seen.rollbackWithoutParams = await answer(rpc, 'anvil_rollback', []);
  seen.rollbackDefault = await rpc('anvil_rollback', [null]);
  seen.rolledBackDefault = beforeRollback - (await height(rpc));

  const beforeReorg = await block(rpc);
  const atDepth = await block(rpc, Number(BigInt(beforeReorg.number)) - 1);
  seen.reorg = await rpc('anvil_reorg', [2, []]);
  const reorged = await block(rpc);
  seen.reorgKeepsHeight = reorged.number === beforeReorg.number;
  seen.reorgNewHead = reorged.hash !== beforeReorg.hash;
  seen.reorgNewParent = (await block(rpc, Number(BigInt(atDepth.number)))).hash !== atDepth.hash;
  const nonce = Number(BigInt((await rpc('eth_getTransactionCount', [sender, 'latest'])) as string));
  const tx2 = await rawTransfer(key, nonce, 3n);
  seen.reorgWithTransaction = await rpc('anvil_reorg', { depth: 2, tx_block_pairs: [[tx2.serialized, 0]] });
  const receipt = (await rpc('eth_getTransactionReceipt', [tx2.hash])) as { blockNumber: string };
  seen.reorgTransactionAt = Number(BigInt(reorged.number)) - Number(BigInt(receipt.blockNumber));
  seen.reorgTooDeep = await answer(rpc, 'anvil_reorg', [10_000, []]);

  seen.revert = await rpc('evm_revert', [seen.snapshotId]);
  seen.revertedTo = (await height(rpc)) - start;
  seen.balanceAfterRevert = await rpc('eth_getBalance', [sender, 'latest']);
  seen.revertAgain = await rpc('evm_revert', [seen.snapshotId]);
  seen.revertLater = await rpc('evm_revert', [seen.secondSnapshotId]);
  seen.revertUnknown = await rpc('evm_revert', ['0x99']);

  seen.setInterval = await rpc('evm_setIntervalMining', [1]);
  seen.interval = await rpc('anvil_getIntervalMining');
  seen.automineWithInterval = await rpc('hardhat_getAutomine');
  const intervalStart = await height(rpc);
  await new Promise((resolve) => setTimeout(resolve, 2_600));
  seen.intervalMined = (await height(rpc)) - intervalStart >= 1;
  seen.setAutomineOffKeepsInterval = await rpc('evm_setAutomine', [false]);
  seen.intervalStill = await rpc('anvil_getIntervalMining');
  seen.stopInterval = await rpc('evm_setIntervalMining', [0]);
  seen.intervalStopped = await rpc('anvil_getIntervalMining');
  seen.automineAfterStop = await rpc('hardhat_getAutomine');
  seen.setAutomineOn = await rpc('evm_setAutomine', [true]);
  return seen;
}

describe('the dev methods answer as anvil does', () => {
  it('runs one scenario on a plain anvil and on the embedded network, with the same answers', async () => {
    const anvil = await startAnvil({
      genesisTimestamp: Math.floor(Date.now() / 1000) - 1,
      chainId: EMBEDDED_CHAIN_ID,
      blockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT,
      baseFeePerGas: INITIAL_BASE_FEE,
    });
    let expected: Record<string, unknown>;
    try {
      // As `anvil` is run by hand: automine (ours runs it with `--no-mining` under the journal).
      await anvil.request({ method: 'evm_setAutomine', params: [true] });
      expected = await scenario((method, params) => anvil.request({ method, params }));
    } finally {
      await anvil.close();
    }
    const network = await createEmbeddedNetwork({ dataDir: tempDir() });
    try {
      const actual = await scenario((method, params) => network.rpc({ method, params }));
      expect(actual).toEqual(expected);
      // And what the scenario shows of them.
      expect(expected).toMatchObject({
        setBalance: null,
        snapshotId: '0x0',
        revert: true,
        revertAgain: false,
        revertLater: false,
        minedAtOnce: 1,
        pooledNotMined: 1,
        drop: true,
        dropAgain: null,
        baseFee: '0x23456789',
        nextTimestamp: 1000,
        rolledBack: 1,
        rolledBackDefault: 2,
        reorgKeepsHeight: true,
        reorgNewHead: true,
        reorgNewParent: true,
        reorgTransactionAt: 1,
        revertedTo: 0,
        intervalMined: true,
        interval: 1,
        intervalStopped: null,
      });
    } finally {
      await network.close();
    }
  });
});

describe('the dev methods are journaled', () => {
  /**
   * A copy of the data directory as a kill -9 leaves it (every answered request is on disk), without the lock, and
   * without the snapshots taken after the first `newest` journal entries (killed before they were written).
   */
  function crashCopy(dataDir: string, newest: number): string {
    const copy = tempDir();
    cpSync(path.join(dataDir, 'chain'), path.join(copy, 'chain'), { recursive: true });
    rmSync(path.join(copy, 'chain', 'lock'), { force: true });
    for (const snapshot of listSnapshots(path.join(copy, 'chain', 'snapshots'))) {
      if (snapshot.entries > newest) rmSync(snapshot.file);
    }
    return copy;
  }

  async function viewOf(dataDir: string, wallets: ReturnType<typeof newWallet>[], removeSnapshots = false) {
    if (removeSnapshots) rmSync(path.join(dataDir, 'chain', 'snapshots'), { recursive: true, force: true });
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      return { view: await chainView(network, wallets), startup: network.startup };
    } finally {
      await network.close();
    }
  }

  it('gives the chain that was mined after a revert, a rollback, a reorg and pooled transactions, however it starts', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const network: EmbeddedNetwork = await createEmbeddedNetwork({ dataDir, snapshotEvery: 1_000_000 });
    const rpc: Rpc = (method, params) => network.rpc({ method, params });
    let beforeReorg = 0;
    let crashedAfterRevert: string;
    let crashedAfterReorg: string;
    let afterRevert: Awaited<ReturnType<typeof chainView>>;
    let expected: Awaited<ReturnType<typeof chainView>>;
    try {
      await fund(network, alice, 1_000n);
      const id = await rpc('evm_snapshot');
      await confidentialTransfer(network, alice, bob.address, 10n);
      expect((await chainView(network, [alice, bob])).wallets.map((wallet) => wallet.confidential)).toEqual([
        990n,
        10n,
      ]);
      // A snapshot between the evm_snapshot and its revert: it cannot start the journal after the revert.
      await network.takeSnapshot();
      const beforeRevert = network.snapshotEntries();
      expect(await rpc('evm_revert', [id])).toBe(true);
      afterRevert = await chainView(network, [alice, bob]);
      // The coprocessor follows: bob's handle is the zero one again, alice's balance the one before.
      expect(afterRevert.wallets.map((wallet) => wallet.confidential)).toEqual([1_000n, 0n]);
      crashedAfterRevert = crashCopy(dataDir, beforeRevert);

      await confidentialTransfer(network, alice, bob.address, 20n);
      await confidentialTransfer(network, alice, bob.address, 30n);
      await network.takeSnapshot();
      beforeReorg = network.snapshotEntries();
      // Back before the newest snapshot's block, and new blocks in place of the old: the second transfer is gone.
      await rpc('anvil_reorg', [1, []]);
      await rpc('anvil_rollback', [1]);
      expect((await chainView(network, [alice, bob])).wallets.map((wallet) => wallet.confidential)).toEqual([
        980n,
        20n,
      ]);
      // Transactions left in the pool with automine off, a dropped one, and blocks on an interval.
      await rpc('evm_setAutomine', [false]);
      await network.rpc({ method: 'anvil_setNextBlockBaseFeePerGas', params: ['0x3b9aca00'] });
      const op = network.operator.privateKey;
      const opNonce = Number(
        BigInt((await rpc('eth_getTransactionCount', [network.operator.address, 'latest'])) as string),
      );
      const kept = await rawTransfer(op, opNonce, 5n);
      const dropped = await rawTransfer(op, opNonce + 1, 6n);
      const waiting = await rawTransfer(op, opNonce + 3, 7n);
      await rpc('eth_sendRawTransaction', [kept.serialized]);
      await rpc('eth_sendRawTransaction', [dropped.serialized]);
      await rpc('anvil_dropTransaction', [dropped.hash]);
      await rpc('evm_setIntervalMining', [1]);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await rpc('evm_setIntervalMining', [0]);
      expect(await rpc('eth_getTransactionReceipt', [kept.hash])).not.toBeNull();
      // Stays in the pool (nonce gap) through every kind of start.
      await rpc('eth_sendRawTransaction', [waiting.serialized]);
      crashedAfterReorg = crashCopy(dataDir, beforeReorg);
      expected = await chainView(network, [alice, bob]);
    } finally {
      await network.close();
    }

    // The newest snapshot was taken before the revert's snapshot: the one before it starts, or the whole journal.
    const revertStart = await viewOf(crashedAfterRevert, [alice, bob]);
    expect(revertStart.view).toEqual(afterRevert);
    expect(revertStart.startup.snapshotEntries).toBeNull();
    // The same after the reorg and rollback: and after a graceful stop (its snapshot), and from the journal alone.
    const reorgStart = await viewOf(crashedAfterReorg, [alice, bob]);
    expect(reorgStart.view).toEqual(expected);
    expect(reorgStart.startup.snapshotEntries).not.toBe(beforeReorg);
    expect((await viewOf(dataDir, [alice, bob])).view).toEqual(expected);
    expect((await viewOf(dataDir, [alice, bob], true)).view).toEqual(expected);
    const again: EmbeddedNetwork = await createEmbeddedNetwork({ dataDir });
    try {
      const status = (await again.rpc({ method: 'txpool_status' })) as { queued: string };
      expect(Number(status.queued)).toBe(1);
      // Ids of evm_snapshot do not outlive the process, as with anvil started again on its --state.
      expect(await again.rpc({ method: 'evm_revert', params: ['0x0'] })).toBe(false);
      expect(await again.rpc({ method: 'hardhat_getAutomine' })).toBe(true);
    } finally {
      await again.close();
    }
  });

  it('mines the same next block on a snapshot taken right after a rollback as the process that rolled back', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const network = await createEmbeddedNetwork({ dataDir, snapshotEvery: 1_000_000 });
    let copy: string;
    let next: { timestamp: number; block: Block };
    const rpc: Rpc = (method, params) => network.rpc({ method, params });
    try {
      await fund(network, alice, 1_000n);
      await confidentialTransfer(network, alice, newWallet().address, 1n);
      // Anvil keeps the next base fee it computed after the old head (a busy block), not one from the new head.
      await rpc('anvil_rollback', [1]);
      await network.takeSnapshot();
      copy = crashCopy(dataDir, network.snapshotEntries());
      const timestamp = Number(BigInt((await block(rpc)).timestamp)) + 100;
      await rpc('evm_mine', [timestamp]);
      next = { timestamp, block: await block(rpc) };
    } finally {
      await network.close();
    }
    const restarted = await createEmbeddedNetwork({ dataDir: copy });
    try {
      expect(restarted.startup.replayedEntries).toBe(0);
      const again: Rpc = (method, params) => restarted.rpc({ method, params });
      await again('evm_mine', [next.timestamp]);
      const block2 = await block(again);
      expect(block2.baseFeePerGas).toBe(next.block.baseFeePerGas);
      expect(block2.hash).toBe(next.block.hash);
    } finally {
      await restarted.close();
    }
  });

  it('refuses to revert to a snapshot whose block a rollback removed (anvil would corrupt its head), and goes on', async () => {
    const dataDir = tempDir();
    const network = await createEmbeddedNetwork({ dataDir });
    const rpc: Rpc = (method, params) => network.rpc({ method, params });
    let head: Block;
    try {
      await rpc('evm_mine');
      await rpc('evm_mine');
      const id = await rpc('evm_snapshot');
      await rpc('anvil_rollback', [1]);
      await expect(rpc('evm_revert', [id])).rejects.toThrow(/no longer on the chain/);
      await rpc('evm_mine');
      head = await block(rpc);
    } finally {
      await network.close();
    }
    const again = await createEmbeddedNetwork({ dataDir });
    try {
      expect(await block((method, params) => again.rpc({ method, params }))).toEqual(head);
    } finally {
      await again.close();
    }
  });
});
