/**
 * The development methods of `sealpay devnet` in a real process, killed with SIGKILL after each kind of history they
 * make: blocks on an interval (`--block-time`), an `evm_revert`, and an `anvil_reorg` (which a dApp's relayer client
 * sees: a handle of a block reorganized away is not decryptable until its transaction is mined again). After each
 * kill the devnet starts with the same head, block hashes, balances and decryptions. How each method answers
 * (against a plain anvil) and how a start picks its snapshot: src/adapters/chain/dev-methods.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { type Address, getAddress, type Hex, toHex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { signTransaction } from '../../src/adapters/chain/tx.ts';
import type { Network } from '../../src/adapters/chain/types.ts';
import { encodeConfidentialTransfer } from '../../src/adapters/confidential/helpers.ts';
import {
  chainEngineOf,
  devnetNetwork,
  freshDataDir,
  kill9,
  readDevnetEnv,
  type ServiceProcess,
  spawnService,
  waitForOutput,
  waitGone,
} from '../faults/service.ts';
import { chainView, confidentialTransfer, fund, newWallet, type Wallet } from '../support/chain-fixtures.ts';

/** Each test starts a devnet process twice (a start is ~5 s on a quiet machine, ~25 s on a loaded one). */
const TWO_STARTS_MS = 180_000;

const running: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((service) => kill9(service)));
});

async function startDevnet(dataDir: string, options: { port?: number; args?: string[] } = {}) {
  const devnet = await spawnService({ command: 'devnet', dataDir, ...options });
  running.push(devnet);
  await waitForOutput(devnet, /sealpay devnet: JSON-RPC/);
  return devnet;
}

async function rpc(url: string, method: string, params: unknown = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Kills the devnet with SIGKILL (its anvil goes with it) and starts it again on the same port and data directory. */
async function killAndRestart(devnet: ServiceProcess): Promise<ServiceProcess> {
  const engine = chainEngineOf(devnet);
  await kill9(devnet);
  await waitGone([engine.guard, engine.anvil]);
  return startDevnet(devnet.dataDir, { port: devnet.port });
}

/** A confidential transfer signed but not sent: its raw bytes can be mined again in a reorg. */
async function signedConfidentialTransfer(network: Network, from: Wallet, to: Address, amount: bigint) {
  const encrypted = await network.rail.encryptAmount({
    contract: network.contracts.confidentialToken,
    caller: from.address,
    amount,
  });
  return signTransaction(network, {
    privateKey: from.privateKey,
    to: network.contracts.confidentialToken,
    data: encodeConfidentialTransfer(to, encrypted),
    gas: 1_000_000n,
  });
}

describe('sealpay devnet --block-time', () => {
  it(
    'mines a block every N seconds, answers eth_sendRawTransactionSync once mined, and keeps every block through kill -9',
    async () => {
      const dataDir = freshDataDir('sealpay-devnet-interval-');
      let devnet = await startDevnet(dataDir, { args: ['--block-time', '1'] });
      expect(devnet.output()).toContain('a block every 1 s');
      const url = readDevnetEnv(dataDir).RPC_URL as string;
      const network = devnetNetwork(readDevnetEnv(dataDir));
      expect(await rpc(url, 'hardhat_getAutomine')).toBe(false);
      expect(await rpc(url, 'anvil_getIntervalMining')).toBe(1);
      const start = Number(await network.publicClient.getBlockNumber({ cacheTime: 0 }));
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(Number(await network.publicClient.getBlockNumber({ cacheTime: 0 }))).toBeGreaterThanOrEqual(
        start + 2,
      );

      // A transaction waits in the pool for the next block; the Sync form answers with its receipt once mined.
      const signed = await signTransaction(network, {
        privateKey: network.operator.privateKey,
        to: getAddress(toHex(randomBytes(20))),
        value: 1n,
      });
      const receipt = (await rpc(url, 'eth_sendRawTransactionSync', [signed.serialized])) as {
        transactionHash: Hex;
        blockNumber: Hex;
      };
      expect(receipt.transactionHash).toBe(signed.hash);
      const alice = newWallet();
      const bob = newWallet();
      await fund(network, alice, 1_000n);
      await confidentialTransfer(network, alice, bob.address, 7n);

      // Stopped, so that the head seen is the head journaled; then killed.
      expect(await rpc(url, 'evm_setIntervalMining', [0])).toBeNull();
      const before = await chainView(network, [alice, bob]);
      expect(before.wallets.map((wallet) => wallet.confidential)).toEqual([993n, 7n]);
      devnet = await killAndRestart(devnet);
      expect(await chainView(network, [alice, bob])).toEqual(before);
      // Started without --block-time: automine, as anvil started without it.
      expect(await rpc(url, 'hardhat_getAutomine')).toBe(true);
    },
    TWO_STARTS_MS,
  );
});

describe('sealpay devnet after evm_revert and anvil_reorg', () => {
  const dataDir = freshDataDir('sealpay-devnet-rewind-');
  let devnet: ServiceProcess;
  let url: string;
  let network: Network;
  const alice = newWallet();
  const bob = newWallet();

  it(
    'restarts after kill -9 to the chain evm_revert left',
    async () => {
      devnet = await startDevnet(dataDir);
      url = readDevnetEnv(dataDir).RPC_URL as string;
      network = devnetNetwork(readDevnetEnv(dataDir));
      await fund(network, alice, 1_000n);
      const id = await rpc(url, 'evm_snapshot');
      await confidentialTransfer(network, alice, bob.address, 10n);
      expect((await chainView(network, [alice, bob])).wallets[1]?.confidential).toBe(10n);
      expect(await rpc(url, 'evm_revert', [id])).toBe(true);
      await confidentialTransfer(network, alice, bob.address, 4n);
      const before = await chainView(network, [alice, bob]);
      expect(before.wallets.map((wallet) => wallet.confidential)).toEqual([996n, 4n]);
      devnet = await killAndRestart(devnet);
      expect(await chainView(network, [alice, bob])).toEqual(before);
      // The id was this process's: as anvil restarted on its --state, it reverts nothing now.
      expect(await rpc(url, 'evm_revert', [id])).toBe(false);
    },
    TWO_STARTS_MS,
  );

  it(
    'after anvil_reorg, the relayer decrypts for the chain as it now is, and so after kill -9',
    async () => {
      const transfer = await signedConfidentialTransfer(network, alice, bob.address, 25n);
      await rpc(url, 'eth_sendRawTransaction', [transfer.serialized]);
      const mined = await chainView(network, [alice, bob]);
      expect(mined.wallets.map((wallet) => wallet.confidential)).toEqual([971n, 29n]);
      const bobsHandle = mined.wallets[1]?.handle as Hex;

      // The transfer's block reorganized away: balances and handles as before it, and the handle it made is not
      // decryptable (the relayer refuses it: bob may no longer read it).
      expect(await rpc(url, 'anvil_reorg', [1, []])).toBeNull();
      expect(await rpc(url, 'eth_getTransactionReceipt', [transfer.hash])).toBeNull();
      const reorged = await chainView(network, [alice, bob]);
      expect(reorged.blockNumber).toBe(mined.blockNumber);
      expect(reorged.wallets.map((wallet) => wallet.confidential)).toEqual([996n, 4n]);
      expect(reorged.wallets[1]?.handle).not.toBe(bobsHandle);
      await expect(
        network.rail.userDecrypt({
          handle: bobsHandle,
          contract: network.contracts.confidentialToken,
          privateKey: bob.privateKey,
        }),
      ).rejects.toThrow(/not authorized/i);

      // Mined again in the new chain's last block: decryptable again, to the same value.
      expect(await rpc(url, 'anvil_reorg', [1, [[transfer.serialized, 0]]])).toBeNull();
      const again = await chainView(network, [alice, bob]);
      expect(again.wallets.map((wallet) => wallet.confidential)).toEqual([971n, 29n]);
      expect(again.wallets[1]?.handle).toBe(bobsHandle);
      expect(again.blockHashes.at(-1)).not.toBe(mined.blockHashes.at(-1));

      devnet = await killAndRestart(devnet);
      expect(await chainView(network, [alice, bob])).toEqual(again);
    },
    TWO_STARTS_MS,
  );
});
