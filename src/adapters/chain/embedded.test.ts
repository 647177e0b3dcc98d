/**
 * The embedded network across restarts: the journal replays to identical blocks, balances and decryptions, a torn
 * last line (kill -9) is tolerated, concurrent writers stay consistent, and a warm start stays fast.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Address, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  decryptConfidentialBalance,
  encodeApprove,
  encodeConfidentialTransfer,
  encodeMint,
  encodeWrap,
  getConfidentialBalanceHandle,
  getGasBalance,
  getStablecoinBalance,
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

interface Wallet {
  address: Address;
  privateKey: Hex;
}

function newWallet(): Wallet {
  const privateKey = generatePrivateKey();
  return { address: privateKeyToAccount(privateKey).address, privateKey };
}

async function fund(network: EmbeddedNetwork, wallet: Wallet, confidential: bigint): Promise<void> {
  const op = network.operator.privateKey;
  const { stablecoin, confidentialToken } = network.contracts;
  await sendTransactionOrThrow(network, { privateKey: op, to: wallet.address, value: parseEther('1') });
  await sendTransactionOrThrow(network, {
    privateKey: op,
    to: stablecoin,
    data: encodeMint(wallet.address, confidential),
  });
  await sendTransactionOrThrow(network, {
    privateKey: wallet.privateKey,
    to: stablecoin,
    data: encodeApprove(confidentialToken, confidential),
  });
  await sendTransactionOrThrow(network, {
    privateKey: wallet.privateKey,
    to: confidentialToken,
    data: encodeWrap(wallet.address, confidential),
  });
}

async function confidentialTransfer(network: EmbeddedNetwork, from: Wallet, to: Address, amount: bigint) {
  const encrypted = await network.rail.encryptAmount({
    contract: network.contracts.confidentialToken,
    caller: from.address,
    amount,
  });
  return sendTransactionOrThrow(network, {
    privateKey: from.privateKey,
    to: network.contracts.confidentialToken,
    data: encodeConfidentialTransfer(to, encrypted),
  });
}

interface Snapshot {
  blockNumber: bigint;
  blockHashes: Hex[];
  wallets: { gas: bigint; stable: bigint; handle: Hex; confidential: bigint }[];
}

async function snapshot(network: EmbeddedNetwork, wallets: Wallet[]): Promise<Snapshot> {
  const blockNumber = await network.publicClient.getBlockNumber();
  const blockHashes: Hex[] = [];
  for (let n = 0n; n <= blockNumber; n++) {
    blockHashes.push((await network.publicClient.getBlock({ blockNumber: n })).hash);
  }
  const rows = [];
  for (const wallet of wallets) {
    rows.push({
      gas: await getGasBalance(network, wallet.address),
      stable: await getStablecoinBalance(network, wallet.address),
      handle: await getConfidentialBalanceHandle(network, wallet.address),
      confidential: await decryptConfidentialBalance(network, wallet.privateKey),
    });
  }
  return { blockNumber, blockHashes, wallets: rows };
}

describe('embedded network persistence', () => {
  const dataDir = tempDir();
  const alice = newWallet();
  const bob = newWallet();
  let before: Snapshot;
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
      before = await snapshot(network, [alice, bob]);
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
      expect(await snapshot(network, [alice, bob])).toEqual(before);
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
      before = await snapshot(network, [alice, bob]);
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
      expect(await snapshot(network, [alice, bob])).toEqual(before);
      // New writes land after the cut, and survive another restart.
      await confidentialTransfer(network, alice, bob.address, 6n);
      before = await snapshot(network, [alice, bob]);
    } finally {
      await network.close();
    }
    const again = await createEmbeddedNetwork({ dataDir });
    try {
      expect(again.startup.droppedBytes).toBe(0);
      expect(await snapshot(again, [alice, bob])).toEqual(before);
    } finally {
      await again.close();
    }
  });

  it('refuses methods that would rewrite history, and a second process on the same data directory', async () => {
    const network = await createEmbeddedNetwork({ dataDir });
    try {
      await expect(createEmbeddedNetwork({ dataDir })).rejects.toThrow(/in use/);
      await expect(network.rpc({ method: 'evm_snapshot' })).rejects.toThrow(/not supported/);
      await expect(network.rpc({ method: 'hardhat_reset' })).rejects.toThrow(/not supported/);
      await expect(network.rpc({ method: 'no_suchMethod' })).rejects.toThrow(/not found/);
    } finally {
      await network.close();
    }
  });
});

describe('embedded network under load', () => {
  it('keeps concurrent writers from several wallets consistent, and a warm start with 200+ transactions fast', async () => {
    const dataDir = tempDir();
    const network = await createEmbeddedNetwork({ dataDir });
    const wallets = [newWallet(), newWallet(), newWallet(), newWallet()];
    let before: Snapshot;
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
      before = await snapshot(network, wallets);
    } finally {
      await network.close();
    }
    expect(network.journalLength()).toBeGreaterThan(200);

    const warm = await createEmbeddedNetwork({ dataDir });
    try {
      timings.warmStartMs = warm.startup.durationMs;
      timings.journalEntries = warm.startup.replayedEntries;
      expect(warm.startup.durationMs).toBeLessThan(10_000);
      expect(await snapshot(warm, wallets)).toEqual(before);
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
      [fileURLToPath(new URL('./embedded.crash-child.ts', import.meta.url)), dataDir],
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
