/**
 * Snapshots of the embedded network: a start loads the newest one and replays only the journal after it, to the
 * chain a full replay of the journal gives (every block hash, balances, handles, decryptions), after kill -9 at any
 * moment, one while a snapshot is being written included; a damaged snapshot, or one that would load another chain,
 * is passed over; data directories without a snapshot (made before anvil, or stopped before their first) start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  type FSWatcher,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Hex, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ChainView,
  chainView,
  confidentialTransfer,
  fund,
  newWallet,
  type Wallet,
} from '../../../test/support/chain-fixtures.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork, type EmbeddedNetworkOptions } from './embedded.ts';
import { listSnapshots, readSnapshot, writeSnapshot } from './snapshot.ts';
import { sendTransactionOrThrow } from './tx.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-snapshot-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const snapshotsDir = (dataDir: string) => path.join(dataDir, 'chain', 'snapshots');

interface Ack {
  hash: Hex;
  blockNumber: bigint;
  blockHash: Hex;
}

/** The crash child: confidential transfers from `sender` to `recipient` until killed. */
function startChild(dataDir: string, every: number, sender: Wallet, recipient: Wallet) {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('../../../test/children/snapshot-crash.ts', import.meta.url)),
      dataDir,
      String(every),
      sender.privateKey,
      recipient.address,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  const acks: Ack[] = [];
  const snapshots: number[] = [];
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const [word, ...rest] = line.split(' ');
      if (word === 'acked') {
        acks.push({
          hash: rest[1] as Hex,
          blockNumber: BigInt(rest[2] as string),
          blockHash: rest[3] as Hex,
        });
      } else if (word === 'snapshot') snapshots.push(Number(rest[0]));
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitUntil = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 120_000;
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    while (!condition()) {
      if (gone) throw new Error(`the crash child exited before ${what}`);
      if (Date.now() > deadline) throw new Error(`no ${what} after 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  return { child, acks, snapshots, waitUntil, kill, exited };
}

/** Every acknowledged receipt is on the chain in the same block, with the same hash (the service stores those). */
async function expectAcknowledged(network: EmbeddedNetwork, acks: Ack[]): Promise<void> {
  for (const ack of acks) {
    const receipt = await network.publicClient.getTransactionReceipt({ hash: ack.hash });
    expect({ number: receipt.blockNumber, hash: receipt.blockHash }).toEqual({
      number: ack.blockNumber,
      hash: ack.blockHash,
    });
  }
}

async function withNetwork<T>(
  options: EmbeddedNetworkOptions,
  fn: (network: EmbeddedNetwork) => Promise<T>,
): Promise<T> {
  const network = await createEmbeddedNetwork(options);
  try {
    return await fn(network);
  } finally {
    await network.close();
  }
}

async function waitForSnapshotOfAll(network: EmbeddedNetwork): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (network.snapshotEntries() !== network.journalLength()) {
    if (Date.now() > deadline) throw new Error('no snapshot of the whole journal after 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * After a crash: the start from the newest snapshot, a start after a graceful stop, and a start from the journal
 * alone (snapshots removed) all give the same chain, and every acknowledged receipt is in it.
 */
async function expectSameChainEveryWay(dataDir: string, wallets: Wallet[], acks: Ack[]): Promise<ChainView> {
  const newest = listSnapshots(snapshotsDir(dataDir))[0];
  const fromSnapshot = await withNetwork({ dataDir }, async (network) => {
    expect(network.startup.snapshotEntries).toBe(newest?.entries);
    expect(network.startup.replayedEntries).toBe(network.journalLength() - (newest?.entries ?? 0));
    await expectAcknowledged(network, acks);
    return chainView(network, wallets);
  });
  await withNetwork({ dataDir }, async (network) => {
    // The graceful stop took a snapshot of everything: nothing is replayed.
    expect(network.startup.replayedEntries).toBe(0);
    expect(network.startup.snapshotEntries).toBe(network.journalLength());
    expect(await chainView(network, wallets)).toEqual(fromSnapshot);
  });
  rmSync(snapshotsDir(dataDir), { recursive: true });
  await withNetwork({ dataDir }, async (network) => {
    expect(network.startup.snapshotEntries).toBeNull();
    expect(network.startup.replayedEntries).toBe(network.journalLength());
    expect(await chainView(network, wallets)).toEqual(fromSnapshot);
    await waitForSnapshotOfAll(network);
  });
  return fromSnapshot;
}

describe('embedded network snapshots', () => {
  it('after kill -9, a start loads the newest snapshot and replays only the journal after it, to the same chain a full replay gives', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const run = startChild(dataDir, 30, alice, bob);
    // A snapshot, then more transfers after it, then the kill.
    await run.waitUntil(() => run.snapshots.length > 0, 'a snapshot');
    const acksAtSnapshot = run.acks.length;
    await run.waitUntil(() => run.acks.length >= acksAtSnapshot + 8, 'transfers after the snapshot');
    await run.kill();

    const view = await expectSameChainEveryWay(dataDir, [alice, bob], run.acks);
    // Every acknowledged transfer moved 1 (one more may have been journaled but not acknowledged).
    const received = view.wallets[1]?.confidential ?? 0n;
    expect(received).toBeGreaterThanOrEqual(BigInt(run.acks.length));
    expect(received).toBeLessThanOrEqual(BigInt(run.acks.length) + 1n);
  });

  it('a kill -9 while a snapshot is being written leaves a temporary file, passed over and removed at the next start', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const acks: Ack[] = [];
    let torn: string[] = [];
    // The kill lands as the temporary file appears; if the write finished first, the next snapshot is tried.
    for (let attempt = 0; attempt < 8 && torn.length === 0; attempt++) {
      const run = startChild(dataDir, 4, alice, bob);
      await run.waitUntil(() => run.snapshots.length > 0, 'a snapshot');
      let watcher: FSWatcher | undefined;
      await new Promise<void>((resolve) => {
        watcher = watch(snapshotsDir(dataDir), (_event, name) => {
          if (name?.endsWith('.tmp')) {
            run.child.kill('SIGKILL');
            resolve();
          }
        });
        void run.exited.then(() => resolve());
      });
      watcher?.close();
      await run.exited;
      acks.push(...run.acks);
      torn = readdirSync(snapshotsDir(dataDir)).filter((name) => name.endsWith('.tmp'));
    }
    expect(torn.length).toBeGreaterThan(0);
    console.info(`torn snapshot write caught: ${torn.join(', ')}`);

    await expectSameChainEveryWay(dataDir, [alice, bob], acks);
    expect(readdirSync(snapshotsDir(dataDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('passes over a damaged snapshot and one that would load another chain: the one before, then the journal', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const warnings: string[] = [];
    const logger = { info() {}, warn: (message: string) => warnings.push(message), error() {} };
    const view = await withNetwork({ dataDir, logger }, async (network) => {
      await fund(network, alice, 1_000n);
      await confidentialTransfer(network, alice, bob.address, 10n);
      await network.takeSnapshot();
      await confidentialTransfer(network, alice, bob.address, 20n);
      return chainView(network, [alice, bob]);
    });
    // The graceful stop took the newest; the one taken after the first transfer is still there.
    const [newest, older] = listSnapshots(snapshotsDir(dataDir));
    if (!newest || !older) throw new Error('two snapshots expected');

    // Torn (cut short) or altered: its checksum tells.
    truncateSync(newest.file, 1000);
    await withNetwork({ dataDir, logger }, async (network) => {
      expect(network.startup.snapshotEntries).toBe(older.entries);
      expect(network.startup.replayedEntries).toBe(network.journalLength() - older.entries);
      expect(await chainView(network, [alice, bob])).toEqual(view);
    });
    expect(warnings.join('\n')).toMatch(/not used: torn/);

    // Whole, but its state loads to another head than the one it records: never a wrong chain.
    const intact = readSnapshot(newest.file);
    await writeSnapshot(snapshotsDir(dataDir), {
      ...intact,
      head: { ...intact.head, hash: `0x${'11'.repeat(32)}` },
    });
    await withNetwork({ dataDir, logger }, async (network) => {
      expect(network.startup.snapshotEntries).toBe(older.entries);
      expect(await chainView(network, [alice, bob])).toEqual(view);
    });
    expect(warnings.join('\n')).toMatch(
      /not used: it loads to block \d+ \(0x[0-9a-f]+\), it was taken at block/,
    );

    // Nothing usable left: the whole journal.
    for (const { file } of listSnapshots(snapshotsDir(dataDir))) {
      const bytes = readFileSync(file);
      const at = bytes.length - 2;
      bytes.writeUInt8(bytes.readUInt8(at) ^ 1, at);
      writeFileSync(file, bytes);
    }
    await withNetwork({ dataDir, logger }, async (network) => {
      expect(network.startup.snapshotEntries).toBeNull();
      expect(network.startup.replayedEntries).toBe(network.journalLength());
      expect(await chainView(network, [alice, bob])).toEqual(view);
    });
    expect(warnings.join('\n')).toMatch(/not used: its content does not match its checksum/);
  });

  it('puts back what the state dump lacks: a transaction waiting in the pool behind a nonce gap, an impersonated account', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const impersonated = newWallet().address;
    const account = privateKeyToAccount(alice.privateKey);
    const transfer = (nonce: number) =>
      account.signTransaction({
        type: 'eip1559',
        chainId: 31337,
        nonce,
        to: impersonated,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
    const waiting = await withNetwork({ dataDir }, async (network) => {
      await sendTransactionOrThrow(network, {
        privateKey: network.operator.privateKey,
        to: alice.address,
        value: parseEther('1'),
      });
      // Nonce 1 before nonce 0: it waits in the pool.
      const hash = (await network.rpc({
        method: 'eth_sendRawTransaction',
        params: [await transfer(1)],
      })) as Hex;
      await network.rpc({ method: 'hardhat_impersonateAccount', params: [impersonated] });
      await network.rpc({ method: 'hardhat_setBalance', params: [impersonated, '0xde0b6b3a7640000'] });
      return hash;
    });
    const view = await withNetwork({ dataDir }, async (network) => {
      expect(network.startup.replayedEntries).toBe(0);
      expect(await network.rpc({ method: 'txpool_status' })).toEqual({ pending: '0x0', queued: '0x1' });
      // Still impersonated: the node signs for it.
      await network.rpc({
        method: 'eth_sendTransaction',
        params: [{ from: impersonated, to: alice.address, value: '0x1', gas: '0x5208' }],
      });
      // The gap filled: both of alice's transactions are mined in the next block.
      await network.rpc({ method: 'eth_sendRawTransaction', params: [await transfer(0)] });
      const mined = await network.publicClient.getTransactionReceipt({ hash: waiting });
      expect(mined.status).toBe('success');
      return chainView(network, [alice]);
    });
    // The journal alone gives the same blocks.
    rmSync(snapshotsDir(dataDir), { recursive: true });
    await withNetwork({ dataDir }, async (network) => {
      expect(network.startup.snapshotEntries).toBeNull();
      expect(await chainView(network, [alice])).toEqual(view);
    });
  });

  it('a data directory stopped before its first snapshot replays its journal once, then starts from a snapshot', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const view = await withNetwork({ dataDir }, async (network) => {
      await fund(network, alice, 1_000n);
      await confidentialTransfer(network, alice, bob.address, 10n);
      return chainView(network, [alice, bob]);
    });
    rmSync(snapshotsDir(dataDir), { recursive: true });
    await withNetwork({ dataDir }, async (network) => {
      expect(network.startup.snapshotEntries).toBeNull();
      expect(network.startup.replayedEntries).toBe(network.journalLength());
      expect(await chainView(network, [alice, bob])).toEqual(view);
      // The replay's result is saved without waiting for a stop.
      await waitForSnapshotOfAll(network);
    });
    await withNetwork({ dataDir }, async (network) => {
      expect(network.startup.replayedEntries).toBe(0);
      expect(await chainView(network, [alice, bob])).toEqual(view);
    });
  });

  it('a data directory made before anvil keeps EDR and its block hashes, replaying its journal, with no snapshot', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    const bob = newWallet();
    const view = await withNetwork({ dataDir, newDirectoryEngine: 'edr' }, async (network) => {
      expect(network.startup.engine).toBe('edr');
      await fund(network, alice, 1_000n);
      await confidentialTransfer(network, alice, bob.address, 10n);
      return chainView(network, [alice, bob]);
    });
    // As earlier versions wrote it: no engine named.
    const stateFile = path.join(dataDir, 'chain', 'state.json');
    const { engine: _engine, ...earlier } = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<
      string,
      unknown
    >;
    writeFileSync(stateFile, JSON.stringify(earlier));
    await withNetwork({ dataDir }, async (network) => {
      expect(network.startup.engine).toBe('edr');
      expect(network.startup.replayedEntries).toBe(network.journalLength());
      expect(await chainView(network, [alice, bob])).toEqual(view);
      await expect(network.takeSnapshot()).rejects.toThrow(/no snapshots/);
    });
    expect(listSnapshots(snapshotsDir(dataDir))).toEqual([]);
  });
});
