/**
 * Zama template compatibility: a dApp of our own (`test/zama-dapp`: an encrypted counter, and a contract that
 * records its published total only on a valid KMS proof, `FHE.checkSignatures`), built as Zama's
 * `fhevm-hardhat-template` builds one (Hardhat 2, `@fhevm/hardhat-plugin` 0.4.2, `@fhevm/solidity` 0.11.1, pinned in
 * its package.json and installed by the project's `npm ci`), runs its tests with `npx hardhat test --network
 * localhost` against `sealpay devnet` started as the README says. Nothing in the dApp knows it is not `hardhat node`:
 * the plugin's setup checks the host contracts (owners, signers, verifiers' domains) before the first test, the
 * tests sign with the node's accounts, every FHE step goes through the devnet's relayer methods (encrypted inputs,
 * user and public decryption), and an `evm_snapshot`/`evm_revert` takes the counter back.
 *
 * Then the devnet is killed with SIGKILL, started again, and the same tests pass again on the chain it kept.
 *
 * `@fhevm/hardhat-plugin` asserts that `localhost` is on port 8545, so each run takes a free loopback address
 * (127.x.y.z) with that port instead of a free port. The compiler is solc-js from npm (test/zama-dapp's
 * hardhat.config.ts); nothing is downloaded (the output is checked for Hardhat's download messages).
 *
 * Run by `.ci/run`: `npx vitest run --config test/compat/vitest.config.ts`.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_VERSION } from '../../src/adapters/chain/node-identity.ts';
import {
  freshDataDir,
  kill9,
  ROOT,
  type ServiceProcess,
  STARTUP_TIMEOUT_MS,
  spawnService,
  stopGracefully,
  waitForOutput,
} from '../faults/service.ts';

const DAPP = join(ROOT, 'test', 'zama-dapp');
/** The only port the plugin accepts for `--network localhost`. */
const PLUGIN_PORT = 8545;

/** A loopback address whose port 8545 is free now (any 127.x.y.z reaches this machine). */
async function freeLoopbackAddress(): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const host = `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(PLUGIN_PORT, host, () => server.close(() => resolve(true)));
    });
    if (free) return host;
  }
  throw new Error(`no loopback address with port ${PLUGIN_PORT} free`);
}

/** Runs `npx hardhat <args>` in the dApp's folder; resolves with its exit code and output. */
function hardhat(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['hardhat', ...args], {
      cwd: DAPP,
      env: { ...process.env, ...env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** What every run of the dApp's tests must show: the five tests, all passing, the plugin's setup included. */
function expectAllPassed(run: { code: number | null; output: string }): void {
  expect(run.output, run.output).toMatch(/5 passing/);
  expect(run.output).not.toMatch(/failing/);
  expect(run.code, run.output).toBe(0);
  expect(run.output).toContain('verifies the KMS proof on chain');
}

describe('a dApp built on Zama’s Hardhat plugin, against sealpay devnet', () => {
  const dataDir = freshDataDir('sealpay-zama-dapp-');
  let host: string;
  let devnet: ServiceProcess | null = null;

  const startDevnet = async () => {
    devnet = await spawnService({
      command: 'devnet',
      dataDir,
      port: PLUGIN_PORT,
      env: { DEVNET_HOST: host },
    });
    await waitForOutput(devnet, /sealpay devnet: JSON-RPC/, STARTUP_TIMEOUT_MS);
    return devnet;
  };

  afterAll(async () => {
    if (devnet) await stopGracefully(devnet).catch(() => kill9(devnet as ServiceProcess));
  });

  it('compiles the dApp with solc-js from npm, downloading nothing', async () => {
    // From a clean folder, on the in-process `hardhat` network: this is also where the plugin computes and caches
    // the host contracts' addresses, which it cannot do on `--network localhost` (see the README).
    const clean = await hardhat(['clean']);
    expect(clean.code, clean.output).toBe(0);
    const compile = await hardhat(['compile']);
    expect(compile.code, compile.output).toBe(0);
    expect(compile.output).toMatch(/Compiled \d+ Solidity files? successfully/);
    expect(compile.output).not.toMatch(/Download/i);
  });

  it('passes its tests with `npx hardhat test --network localhost`', async () => {
    host = await freeLoopbackAddress();
    const node = await startDevnet();
    expect(node.output()).toContain(`http://${host}:${PLUGIN_PORT}`);
    const response = await fetch(`http://${host}:${PLUGIN_PORT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'web3_clientVersion', params: [] }),
    });
    expect(((await response.json()) as { result: string }).result).toBe(CLIENT_VERSION);

    expectAllPassed(
      await hardhat(['test', '--network', 'localhost'], {
        SEALPAY_DEVNET_URL: `http://${host}:${PLUGIN_PORT}`,
      }),
    );
  });

  it('passes them again on the chain the devnet kept through kill -9', async () => {
    await kill9(devnet as ServiceProcess);
    const node = await startDevnet();
    expect(node.output()).toMatch(
      /embedded chain ready in \d+ ms \((snapshot of \d+ entries, then )?\d+ journal entries replayed\)/,
    );
    expectAllPassed(
      await hardhat(['test', '--network', 'localhost'], {
        SEALPAY_DEVNET_URL: `http://${host}:${PLUGIN_PORT}`,
      }),
    );
  });
});
