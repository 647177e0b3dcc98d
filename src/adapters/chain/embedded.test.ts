/**
 * The embedded network across restarts: a graceful stop's snapshot (and the journal) restore identical blocks,
 * balances and decryptions, a torn last line (kill -9) is tolerated, concurrent writers stay consistent, and a warm
 * start stays fast. Snapshots themselves (a journal tail, kill -9 while one is written, a damaged one, data
 * directories without one): snapshot.test.ts.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Address, type Hex, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ChainView,
  chainView,
  confidentialTransfer,
  fund,
  newWallet,
} from '../../../test/support/chain-fixtures.ts';
import {
  decryptConfidentialBalance,
  getGasBalance,
  verifyConfidentialTransfer,
} from '../confidential/helpers.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork } from './embedded.ts';
import { sendTransactionOrThrow } from './tx.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-embedded-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('embedded network persistence', () => {
  const dataDir = tempDir();
  const alice = newWallet();
  const bob = newWallet();
  let before: ChainView;
  let transferHash: Hex;
  let contracts: EmbeddedNetwork['contracts'];

  it('starts cold, keeps the operator key private, and moves money', async () => {
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      expect(network.startup.firstStart).toBe(true);
      expect(network.startup.durationMs).toBeLessThan(10_000);
      const keyFile = path.join(dataDir, 'chain', 'operator.key');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(network.operator.privateKey);
      contracts = network.contracts;

      await fund(network, alice, 1_000_000n);
      const receipt = await confidentialTransfer(network, alice, bob.address, 123_456n);
      transferHash = receipt.transactionHash;
      // Time travel is journaled too.
      await network.rpc({ method: 'evm_increaseTime', params: [3600] });
      await sendTransactionOrThrow(network, { privateKey: alice.privateKey, to: bob.address, value: 1n });
      before = await chainView(network, [alice, bob]);
      expect(before.wallets[0]?.confidential).toBe(1_000_000n - 123_456n);
      expect(before.wallets[1]?.confidential).toBe(123_456n);
    } finally {
      await network.close();
    }
  });

  it('restarts on the same data directory with identical blocks, balances and decryptions', async () => {
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      expect(network.startup.firstStart).toBe(false);
      expect(network.contracts).toEqual(contracts);
      expect(await chainView(network, [alice, bob])).toEqual(before);
      const receipt = await network.publicClient.getTransactionReceipt({ hash: transferHash });
      const verified = await verifyConfidentialTransfer({
        network,
        receipt,
        from: alice.address,
        to: bob.address,
        expectedAmount: 123_456n,
        decryptAs: alice.privateKey,
      });
      expect(verified.ok).toBe(true);
      // The clock offset survived: the next block is more than an hour ahead of wall time.
      await sendTransactionOrThrow(network, { privateKey: alice.privateKey, to: bob.address, value: 1n });
      const block = await network.publicClient.getBlock();
      expect(Number(block.timestamp)).toBeGreaterThan(Date.now() / 1000 + 3500);
      before = await chainView(network, [alice, bob]);
    } finally {
      await network.close();
    }
  });

  it('tolerates a journal whose last line was torn', async () => {
    appendFileSync(
      path.join(dataDir, 'chain', 'journal.jsonl'),
      '{"k":"tx","m":"eth_sendRawTransaction","p":["0x02f8',
    );
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      expect(network.startup.droppedBytes).toBeGreaterThan(0);
      expect(await chainView(network, [alice, bob])).toEqual(before);
      // New writes land after the cut, and survive another restart.
      await confidentialTransfer(network, alice, bob.address, 6n);
      before = await chainView(network, [alice, bob]);
    } finally {
      await network.close();
    }
    const again = await createEmbeddedNetwork({ dataDir });
    try {
      expect(again.startup.droppedBytes).toBe(0);
      expect(await chainView(again, [alice, bob])).toEqual(before);
    } finally {
      await again.close();
    }
  });

  it('refuses a reset, a second process on the same data directory, and what the journal would not see', async () => {
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      await expect(createEmbeddedNetwork({ dataDir })).rejects.toThrow(/in use/);
      await expect(network.rpc({ method: 'hardhat_reset' })).rejects.toThrow(/not supported/);
      await expect(network.rpc({ method: 'anvil_reset' })).rejects.toThrow(/not found/);
      // Anvil would pool it without the journal seeing it.
      await expect(network.rpc({ method: 'eth_sendUnsignedTransaction' })).rejects.toThrow(/not supported/);
      await expect(network.rpc({ method: 'no_suchMethod' })).rejects.toThrow(/not found/);
    } finally {
      await network.close();
    }
  });
});

describe('eth_sendRawTransactionSync (EIP-7966)', () => {
  it('answers with the receipt, and is journaled as eth_sendRawTransaction', async () => {
    const dataDir = tempDir();
    const alice = newWallet();
    let hash: Hex;
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      await sendTransactionOrThrow(network, {
        privateKey: network.operator.privateKey,
        to: alice.address,
        value: parseEther('1'),
      });
      const serialized = await privateKeyToAccount(alice.privateKey).signTransaction({
        type: 'eip1559',
        chainId: network.chainId,
        nonce: 0,
        to: network.operator.address,
        value: 7n,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      const before = network.journalLength();
      const receipt = (await network.rpc({ method: 'eth_sendRawTransactionSync', params: [serialized] })) as {
        status: string;
        transactionHash: Hex;
      };
      expect(receipt.status).toBe('0x1');
      hash = receipt.transactionHash;
      expect(network.journalLength()).toBe(before + 1);
    } finally {
      await network.close();
    }
    // The journal alone brings it back.
    rmSync(path.join(dataDir, 'chain', 'snapshots'), { recursive: true });
    const again = await createEmbeddedNetwork({ dataDir });
    try {
      expect(again.startup.snapshotEntries).toBeNull();
      expect((await again.publicClient.getTransactionReceipt({ hash })).status).toBe('success');
    } finally {
      await again.close();
    }
  });
});

describe('embedded network under load', () => {
  it('keeps concurrent writers from several wallets consistent, and a warm start with 200+ transactions fast', async () => {
    const dataDir = tempDir();
    const network = await createEmbeddedNetwork({ dataDir });
    const wallets = [newWallet(), newWallet(), newWallet(), newWallet()];
    let before: ChainView;
    const timings: Record<string, number> = {};
    try {
      for (const wallet of wallets) await fund(network, wallet, 1_000_000n);
      const started = performance.now();
      // Each wallet sends its transfers in sequence (one nonce after another), the four wallets at once.
      await Promise.all(
        wallets.map(async (wallet, i) => {
          const to = wallets[(i + 1) % wallets.length]?.address as Address;
          for (let n = 0; n < 25; n++) await confidentialTransfer(network, wallet, to, 1_000n + BigInt(n));
        }),
      );
      timings.confidentialTransfersMs = performance.now() - started;
      // And a burst of plain transfers signed in parallel with explicit nonces.
      const op = network.operator;
      const nonce = await network.publicClient.getTransactionCount({
        address: op.address,
        blockTag: 'pending',
      });
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          sendTransactionOrThrow(network, {
            privateKey: op.privateKey,
            to: wallets[i % 4]?.address as Address,
            value: 1n,
            nonce: nonce + i,
            gas: 21_000n,
          }),
        ),
      );
      for (const wallet of wallets) {
        // Every wallet sent 100_000 + 300 and received the same from its neighbour.
        expect(await decryptConfidentialBalance(network, wallet.privateKey)).toBe(1_000_000n);
      }
      before = await chainView(network, wallets);
    } finally {
      await network.close();
    }
    expect(network.journalLength()).toBeGreaterThan(200);

    const warm = await createEmbeddedNetwork({ dataDir });
    try {
      timings.warmStartMs = warm.startup.durationMs;
      timings.journalEntries = warm.startup.replayedEntries;
      expect(warm.startup.durationMs).toBeLessThan(10_000);
      expect(await chainView(warm, wallets)).toEqual(before);
    } finally {
      await warm.close();
    }
    console.info(`embedded network timings: ${JSON.stringify(timings)}`);
  });
});

describe('embedded network after kill -9', () => {
  it('restarts from whatever the killed process had journaled', async () => {
    const dataDir = tempDir();
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../../../test/children/embedded-crash.ts', import.meta.url)), dataDir],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let sent = 0;
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        for (const match of chunk.matchAll(/sent (\d+)/g)) sent = Number(match[1]);
        if (sent >= 30) {
          child.removeAllListeners('exit');
          child.kill('SIGKILL');
          child.on('exit', () => resolve());
        }
      });
    });
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      // Every acknowledged transaction is there (maybe one more that was journaled but not yet acknowledged).
      const balance = await getGasBalance(network, '0x00000000000000000000000000000000000000aa');
      const count = balance / parseEther('0.001');
      expect(count).toBeGreaterThanOrEqual(BigInt(sent));
      expect(count).toBeLessThanOrEqual(BigInt(sent) + 1n);
      // And the chain keeps going.
      await sendTransactionOrThrow(network, {
        privateKey: network.operator.privateKey,
        to: '0x00000000000000000000000000000000000000aa',
        value: 1n,
      });
    } finally {
      await network.close();
    }
  });
});
