/**
 * `sealpay devnet` answers a transaction or a call that fails as a real `hardhat node` does (it names itself one:
 * tools such as hardhat-ethers then skip gas estimation and read the revert from the send's answer). One scenario
 * is run on a `hardhat node` (Hardhat from node_modules, in a project folder of its own) and on a devnet, and their
 * answers are compared: node-signed sends (with the gas limit hardhat-ethers gives and without any), a raw signed
 * send, `eth_estimateGas` and `eth_call`, for each way a call fails (a reason string, a custom error, no data, a
 * panic, a malformed reason, an invalid opcode, out of gas, a constructor's revert); whether the failed transaction
 * is mined; and a send with automine off. The only difference allowed is the transaction's hash, which must be the
 * hash of the transaction each node mined.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, encodeFunctionData, type Hex, http, parseGwei } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, STARTUP_TIMEOUT_MS } from '../../../test/faults/service.ts';
import { deriveDevAccounts } from './dev-accounts.ts';
import { type Devnet, startDevnet } from './devnet.ts';
import { EMBEDDED_CHAIN_ID } from './evm.ts';
import { estimateGasLimit, isRevert } from './tx.ts';

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Reverter {
  error Nope(uint256 code);
  uint256 public x;
  function reason() external { x += 1; revert("nope: it's \\"odd\\""); }
  function custom() external { x += 1; revert Nope(7); }
  function bare() external { x += 1; revert(); }
  function panic(uint256 a) external returns (uint256) { x += 1; return 1 / a; }
  function malformed() external { x += 1; assembly { mstore(0, shl(224, 0x08c379a0)) revert(0, 8) } }
  function unknownPanic() external { x += 1; assembly { mstore(0, shl(224, 0x4e487b71)) mstore(4, 0x99) revert(0, 36) } }
  function invalidOpcode() external { x += 1; assembly { invalid() } }
  function burn() external { for (uint256 i = 0; i < 1000000; i++) { x += i; } }
  function fine() external { x += 1; }
}
contract RevertingConstructor { constructor() { revert("no"); } }
`;

interface Compiled {
  abi: { type: string; name?: string; inputs?: unknown[] }[];
  bytecode: Hex;
  constructorReverts: Hex;
}

function compile(): Compiled {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Reverter.sol': { content: SOURCE } },
        settings: {
          evmVersion: 'cancun',
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<string, { abi: Compiled['abi']; evm: { bytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const contracts = output.contracts['Reverter.sol'] ?? {};
  const reverter = contracts.Reverter;
  const constructorReverts = contracts.RevertingConstructor;
  if (!reverter || !constructorReverts) throw new Error('solc compiled no Reverter');
  return {
    abi: reverter.abi,
    bytecode: `0x${reverter.evm.bytecode.object}`,
    constructorReverts: `0x${constructorReverts.evm.bytecode.object}`,
  };
}

type Answer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

async function rpc(url: string, method: string, params: unknown[] = []): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as Answer;
}

async function result<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc(url, method, params);
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

/** A real `hardhat node` in a project folder of its own (Hardhat refuses to run outside a project that has it). */
async function startHardhatNode(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sealpay-hardhat-node-'));
  writeFileSync(path.join(dir, 'hardhat.config.js'), 'module.exports = {};\n');
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/hardhat/internal/cli/cli.js'),
      'node',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: dir, env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' }, stdio: 'pipe' },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Started HTTP and WebSocket JSON-RPC server')) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`hardhat node exited (${code}):\n${output}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child, dir };
}

/** The receipt of `hash` once the node has it. */
async function receiptOf(url: string, hash: unknown): Promise<{ status: string; contractAddress: Hex }> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const receipt = await result<{ status: string; contractAddress: Hex } | null>(
      url,
      'eth_getTransactionReceipt',
      [hash],
    );
    if (receipt) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no receipt for ${String(hash)}`);
}

const isHash = (value: unknown) => typeof value === 'string' && /^0x[0-9a-f]{64}$/.test(value);

/**
 * A send's answer and what it left: whether it mined a block holding one transaction, that transaction's receipt
 * status, and the answer with that transaction's hash (in `data.txHash` or as the result) named, not spelled.
 */
async function sendAndSee(url: string, method: string, params: unknown[]) {
  const before = Number(BigInt(await result<string>(url, 'eth_blockNumber')));
  const answer = await rpc(url, method, params);
  const head = await result<{ number: string; transactions: string[] }>(url, 'eth_getBlockByNumber', [
    'latest',
    false,
  ]);
  const mined = Number(BigInt(head.number)) === before + 1 && head.transactions.length === 1;
  const minedHash = mined ? head.transactions[0] : null;
  const name = (hash: unknown) => (hash === minedHash ? 'the mined transaction' : hash);
  const status = minedHash ? (await receiptOf(url, minedHash)).status : null;
  if (answer.error) {
    const data = answer.error.data as Record<string, unknown> | undefined;
    const named = data && 'txHash' in data ? { ...data, txHash: name(data.txHash) } : data;
    return { mined, status, error: { ...answer.error, data: named } };
  }
  return { mined, status, result: isHash(answer.result) ? name(answer.result) : answer.result };
}

/** Every way a call fails, sent, estimated and called; returns what is compared between two nodes. */
async function scenario(url: string, compiled: Compiled): Promise<Record<string, unknown>> {
  const [from] = await result<string[]>(url, 'eth_accounts');
  const deployed = await receiptOf(
    url,
    await result(url, 'eth_sendTransaction', [{ from, data: compiled.bytecode, gas: '0x200000' }]),
  );
  const to = deployed.contractAddress;
  const call = (functionName: string, args: unknown[] = []) =>
    encodeFunctionData({ abi: compiled.abi as never, functionName, args } as never);
  const seen: Record<string, unknown> = {};
  // hardhat-ethers' limit for a node that answers hardhat_metadata: min(EIP-7825's cap, the block's).
  const hardhatEthersGas = '0x1000000';
  const failing: [string, Hex][] = [
    ['reason', call('reason')],
    ['custom', call('custom')],
    ['bare', call('bare')],
    ['panic', call('panic', [0n])],
    ['malformed', call('malformed')],
    ['unknownPanic', call('unknownPanic')],
    ['invalidOpcode', call('invalidOpcode')],
  ];
  for (const [name, data] of failing) {
    seen[`${name}: send`] = await sendAndSee(url, 'eth_sendTransaction', [
      { from, to, data, gas: hardhatEthersGas },
    ]);
    seen[`${name}: send without gas`] = await sendAndSee(url, 'eth_sendTransaction', [{ from, to, data }]);
    seen[`${name}: estimate`] = await rpc(url, 'eth_estimateGas', [{ from, to, data }]);
    seen[`${name}: call`] = await rpc(url, 'eth_call', [{ from, to, data }, 'latest']);
  }
  // Out of gas: a limit the call cannot finish in, and a loop past every limit.
  seen['out of gas: send'] = await sendAndSee(url, 'eth_sendTransaction', [
    { from, to, data: call('fine'), gas: '0x5300' },
  ]);
  seen['out of gas: call'] = await rpc(url, 'eth_call', [
    { from, to, data: call('fine'), gas: '0x5300' },
    'latest',
  ]);
  seen['out of gas: estimate'] = await rpc(url, 'eth_estimateGas', [{ from, to, data: call('burn') }]);
  seen['constructor: send'] = await sendAndSee(url, 'eth_sendTransaction', [
    { from, data: compiled.constructorReverts, gas: hardhatEthersGas },
  ]);
  seen['constructor: estimate'] = await rpc(url, 'eth_estimateGas', [
    { from, data: compiled.constructorReverts },
  ]);
  seen['constructor: call'] = await rpc(url, 'eth_call', [
    { from, data: compiled.constructorReverts },
    'latest',
  ]);

  // A transaction signed by the sender (a wallet, not the node).
  const signer = privateKeyToAccount((deriveDevAccounts()[2] as { privateKey: Hex }).privateKey);
  const nonce = await result<string>(url, 'eth_getTransactionCount', [signer.address, 'pending']);
  const raw = await signer.signTransaction({
    type: 'eip1559',
    chainId: EMBEDDED_CHAIN_ID,
    nonce: Number(BigInt(nonce)),
    to,
    data: call('reason'),
    gas: 100_000n,
    maxFeePerGas: parseGwei('100'),
    maxPriorityFeePerGas: parseGwei('1'),
  });
  seen['raw: send'] = await sendAndSee(url, 'eth_sendRawTransaction', [raw]);

  // Automine off: the send is answered with its hash, and mined reverted by the next block.
  await result(url, 'evm_setAutomine', [false]);
  const pooled = await rpc(url, 'eth_sendTransaction', [
    { from, to, data: call('reason'), gas: hardhatEthersGas },
  ]);
  seen['automine off: send'] = isHash(pooled.result) ? 'a transaction hash' : pooled;
  await result(url, 'evm_mine');
  seen['automine off: mined'] = (await receiptOf(url, pooled.result)).status;
  await result(url, 'evm_setAutomine', [true]);
  seen['state after every failure'] = await rpc(url, 'eth_call', [{ to, data: call('x') }, 'latest']);

  // sealpay's own client reads the answer of a call that would revert as a revert.
  const publicClient = createPublicClient({ transport: http(url) });
  seen['isRevert of an estimate'] = await estimateGasLimit(
    { publicClient, chain: { id: EMBEDDED_CHAIN_ID } as never },
    from as Hex,
    { to, data: call('custom') },
  ).then(
    () => 'no error',
    (error: unknown) => isRevert(error),
  );
  return seen;
}

describe('sealpay devnet against hardhat node: a transaction or a call that fails', () => {
  let devnet: Devnet;
  let hardhat: { url: string; child: ChildProcess; dir: string };
  let compiled: Compiled;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-devnet-reverts-'));

  beforeAll(async () => {
    compiled = compile();
    [hardhat, devnet] = await Promise.all([
      startHardhatNode(),
      startDevnet({ dataDir, host: '127.0.0.1', port: 0 }),
    ]);
  }, STARTUP_TIMEOUT_MS);

  afterAll(async () => {
    hardhat?.child.kill('SIGKILL');
    await devnet?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (hardhat) rmSync(hardhat.dir, { recursive: true, force: true });
  });

  it(
    'answers every send, estimate and call as hardhat node does, and mines failed sends as it does',
    async () => {
      const expected = await scenario(hardhat.url, compiled);
      // What Hardhat answers, in a few words, so that a change of Hardhat is seen here first.
      expect.soft(expected['reason: send']).toEqual({
        mined: true,
        status: '0x0',
        error: {
          code: -32603,
          message: `Error: VM Exception while processing transaction: reverted with reason string 'nope: it's "odd"'`,
          data: {
            message: `Error: VM Exception while processing transaction: reverted with reason string 'nope: it's "odd"'`,
            txHash: 'the mined transaction',
            data: expect.stringMatching(/^0x08c379a0/),
          },
        },
      });
      expect.soft(expected['out of gas: send']).toMatchObject({ mined: true, error: { code: -32000 } });
      expect.soft(expected['automine off: send']).toBe('a transaction hash');
      expect.soft(expected['isRevert of an estimate']).toBe(true);

      const answered = await scenario(devnet.rpcUrl, compiled);
      for (const key of Object.keys(expected))
        expect({ [key]: answered[key] }).toEqual({ [key]: expected[key] });
      expect(Object.keys(answered)).toEqual(Object.keys(expected));
    },
    STARTUP_TIMEOUT_MS,
  );
});
