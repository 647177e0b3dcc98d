/**
 * The EVM of the embedded network: anvil (Foundry), in a child process, driven over JSON-RPC on a loopback port.
 *
 * - The binary comes from npm: Foundry's platform package (`@foundry-rs/anvil-linux-amd64`, an optional dependency:
 *   the registry this project is built from serves no other platform's), so `npm install` is all it needs there;
 *   elsewhere the error says which package to install.
 * - Anvil listens on a port the kernel picks (`--port 0`; we read it from anvil's "Listening on" line), so tests and
 *   services running side by side never clash.
 * - It runs under `anvil-guard.ts`, which kills it when the service's end of a pipe closes: whichever way the
 *   service exits, kill -9 included, anvil does not outlive it. Anvil writes nothing to the data directory; the
 *   embedded network takes its state with `anvil_dumpState` and writes the snapshot itself.
 * - Automining is off: the embedded network mines every block with `evm_mine(timestamp)`, and anvil produces blocks
 *   deterministically (no random `prevrandao`), so a journal replayed on a loaded snapshot re-mines identical blocks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type Eip1193, EMBEDDED_HARDFORK, RpcError } from './evm.ts';

const require = createRequire(import.meta.url);
/** The anvil release this code is tested with (package.json pins its Linux x64 package to it). */
export const ANVIL_VERSION = '1.7.1';
const GUARD = fileURLToPath(new URL('./anvil-guard.ts', import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** Foundry's platform packages of anvil (those `@foundry-rs/anvil` would pick). */
const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** Path of the anvil binary installed by npm for this platform. */
export function anvilBinary(): string {
  const platform = `${process.platform}-${process.arch}`;
  const name = PLATFORM_PACKAGES[platform];
  if (!name) throw new Error(`anvil (@foundry-rs/anvil) has no binary for ${platform}`);
  try {
    return require.resolve(`${name}/bin/${process.platform === 'win32' ? 'anvil.exe' : 'anvil'}`);
  } catch {
    throw new Error(
      `The anvil binary for ${platform} is not installed: run \`npm install --no-save ${name}@${ANVIL_VERSION}\``,
    );
  }
}

/**
 * How to start anvil: the genesis, chain and fee settings the embedded network fixes so a replay yields the
 * same blocks.
 */
export interface AnvilOptions {
  /** Genesis timestamp (seconds): fixed per data directory so the genesis block is always the same. */
  genesisTimestamp: number;
  chainId: number;
  blockGasLimit: bigint;
  baseFeePerGas: bigint;
  /** Called if anvil exits without `close()` (it crashed, or someone killed it). */
  onExit?: (reason: string) => void;
}

/** A running anvil: EIP-1193 requests, its state as a blob, and a stop. */
export interface AnvilProcess extends Eip1193 {
  readonly url: string;
  readonly pid: number | undefined;
  /** `anvil_dumpState`: the chain (accounts, blocks, transactions, receipts), gzip'ed JSON as hex. */
  dumpState(): Promise<string>;
  /** `anvil_loadState` of a dump, on a fresh anvil started with the same options. */
  loadState(state: string): Promise<void>;
  /** Why anvil is gone, if it is (null while it runs). */
  exitReason(): string | null;
  close(): Promise<void>;
}

function anvilArguments(options: AnvilOptions): string[] {
  return [
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--chain-id',
    String(options.chainId),
    '--hardfork',
    EMBEDDED_HARDFORK.toLowerCase(),
    '--timestamp',
    String(options.genesisTimestamp),
    '--gas-limit',
    String(options.blockGasLimit),
    '--base-fee',
    String(options.baseFeePerGas),
    // No funded development accounts (their keys are public), no mining of its own, first in first out.
    '--accounts',
    '0',
    '--no-mining',
    '--order',
    'fifo',
    // States are loaded over JSON-RPC: a snapshot is larger than the default 2 MB request limit.
    '--no-request-size-limit',
    '--disable-console-log',
    // The state of only the last 64 blocks is kept, in memory (anvil writes nothing to disk): every state anvil
    // keeps is a full copy (~1.5 MB at 2,000 transfers). Blocks, transactions, receipts and logs are all kept.
    '--prune-history',
    '64',
  ];
}

/** Keeps the last lines a stream printed (for error messages) and reports each line to `onLine`. */
function collectLines(stream: Readable, lines: string[], onLine: (line: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.trim()) continue;
      lines.push(line);
      if (lines.length > 40) lines.shift();
      onLine(line);
    }
  });
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

/** Starts anvil under its guard and waits until it answers. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  const binary = anvilBinary();
  const child: ChildProcess = spawn(process.execPath, [GUARD, binary, ...anvilArguments(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C meant for the service must not stop anvil before the last snapshot.
    detached: true,
  });
  const lines: string[] = [];
  let exit: string | null = null;
  let closing = false;
  let listening = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = describeExit(code, signal);
      if (listening && !closing) options.onExit?.(exit);
      resolve();
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`anvil did not start within ${START_TIMEOUT_MS / 1000} s:\n${lines.join('\n')}`));
    }, START_TIMEOUT_MS);
    const onLine = (line: string) => {
      const listening = /Listening on ([\d.]+):(\d+)/.exec(line);
      if (listening) {
        clearTimeout(timer);
        resolve(`http://${listening[1]}:${listening[2]}`);
      }
    };
    collectLines(child.stdout as Readable, lines, onLine);
    collectLines(child.stderr as Readable, lines, onLine);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`anvil could not be started: ${error.message}`));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`anvil ${exit} before it listened:\n${lines.join('\n')}`));
    });
  }).catch(async (error: unknown) => {
    child.stdin?.end();
    child.kill('SIGKILL');
    await exited;
    throw error;
  });
  listening = true;
  // The guard (and anvil) must never keep the service's event loop alive, nor outlive it.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    // A pipe is a socket at run time (it has `unref`), though typed as a plain stream.
    if (stream && 'unref' in stream && typeof stream.unref === 'function') stream.unref();
  }

  let nextId = 1;
  const request = async ({ method, params }: { method: string; params?: unknown }): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }),
      });
    } catch (error) {
      if (exit) throw new Error(`The chain engine (anvil) is not running: it ${exit}`);
      throw new Error(`The chain engine (anvil) did not answer: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const body = (await response.json()) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
    return body.result;
  };

  const engine: AnvilProcess = {
    url,
    pid: child.pid,
    request,
    async dumpState() {
      const state = await request({ method: 'anvil_dumpState' });
      if (typeof state !== 'string' || !state.startsWith('0x'))
        throw new Error('anvil_dumpState returned no state');
      return state;
    },
    async loadState(state) {
      const loaded = await request({ method: 'anvil_loadState', params: [state] });
      if (loaded !== true) throw new Error('anvil_loadState did not load the state');
    },
    exitReason: () => exit,
    async close() {
      closing = true;
      if (exit) return;
      // The guard kills anvil when its stdin closes.
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
  try {
    // Anvil logs every request it serves; nobody reads them.
    await request({ method: 'anvil_setLoggingEnabled', params: [false] });
  } catch (error) {
    await engine.close();
    throw error;
  }
  return engine;
}
