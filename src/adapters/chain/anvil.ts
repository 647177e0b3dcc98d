/**
 * The EVM of the embedded network: anvil (Foundry), in a child process, driven over JSON-RPC on its IPC socket.
 *
 * - The binary comes from npm: Foundry's platform package (`@foundry-rs/anvil-linux-amd64`, an optional dependency:
 *   the registry this project is built from serves no other platform's), so `npm install` is all it needs there;
 *   elsewhere the error says which package to install.
 * - Nobody but the service may reach it: anvil answers every development method (impersonating a custodial wallet
 *   among them), and `/rpc`'s filter is only as strong as anvil's other doors. The service talks to it only over
 *   its IPC socket, in a directory only the service's user may enter (0700; the socket 0600). Anvil always listens
 *   on HTTP too (it has no flag to turn that off), so on Linux it runs in a network namespace of its own, empty
 *   (`unshare --net`, or `unshare --user --map-root-user --net` without root): its HTTP port exists only there,
 *   where nothing else is. Where no namespace can be made (macOS, a container or kernel that forbids them) it
 *   listens on a loopback port the kernel picks, without CORS, and the start says so once (`onUnisolated`).
 * - It runs under `anvil-guard.ts`, which kills it when the service's end of a pipe closes: whichever way the
 *   service exits, kill -9 included, anvil does not outlive it. Anvil writes nothing to the data directory; the
 *   embedded network takes its state with `anvil_dumpState` and writes the snapshot itself. A snapshot is loaded
 *   at anvil's start (`--load-state`, from a file in the socket's directory): anvil reads its IPC requests in a
 *   way that costs the square of their size, seconds for a snapshot's `anvil_loadState`.
 * - Automining is off: the embedded network mines every block with `evm_mine(timestamp)`, and anvil produces blocks
 *   deterministically (no random `prevrandao`), so a journal replayed on a loaded snapshot re-mines identical blocks.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { type AnvilIpc, connectAnvilIpc } from './anvil-ipc.ts';
import { type Eip1193, EMBEDDED_HARDFORK } from './evm.ts';

const require = createRequire(import.meta.url);
/** The anvil release this code is tested with (package.json pins its Linux x64 package to it). */
export const ANVIL_VERSION = '1.7.1';
const GUARD = fileURLToPath(new URL('./anvil-guard.ts', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const SOCKET_NAME = 'anvil.ipc';
const STATE_NAME = 'anvil-state.json';
/** The longest socket path every platform takes (sun_path: 108 bytes on Linux, 104 on macOS, with its NUL). */
const SOCKET_PATH_MAX = 103;
/** util-linux's `unshare` flags that give anvil an empty network namespace: as root, then as anyone else. */
const NAMESPACE_FLAGS = [['--net'], ['--user', '--map-root-user', '--net']];

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
  /**
   * Where anvil's IPC socket is made (and the state it starts from is written): a directory only this user may
   * enter, made (or set) 0700. Without it, or when its socket path would be too long for a socket, a private
   * directory under the system's temporary directory, removed at `close()`.
   */
  runDir?: string;
  /** A dump to start from (`dumpState()` of an anvil started with the same options). */
  state?: string;
  /** Called if anvil exits without `close()` (it crashed, or someone killed it). */
  onExit?: (reason: string) => void;
  /** Called at the start when anvil cannot be put in a network namespace of its own: why, and what it means. */
  onUnisolated?: (warning: string) => void;
}

/** A running anvil: EIP-1193 requests over its IPC socket, its state as a blob, and a stop. */
export interface AnvilProcess extends Eip1193 {
  readonly pid: number | undefined;
  /** Path of its IPC socket (mode 0600, in a 0700 directory). */
  readonly socketPath: string;
  /** Whether it runs in a network namespace of its own (false: its HTTP port is on this machine's loopback). */
  readonly isolated: boolean;
  /** `anvil_dumpState`: the chain (accounts, blocks, transactions, receipts), gzip'ed JSON as hex. */
  dumpState(): Promise<string>;
  /** Why anvil is gone, if it is (null while it runs). */
  exitReason(): string | null;
  close(): Promise<void>;
}

function anvilArguments(options: AnvilOptions, socketPath: string, stateFile: string | null): string[] {
  return [
    // Its HTTP server cannot be turned off: on a port the kernel picks, on the loopback of its namespace.
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--no-cors',
    '--ipc',
    socketPath,
    ...(stateFile ? ['--load-state', stateFile] : []),
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

/**
 * The command that runs anvil in an empty network namespace of its own (`unshare … -- anvil`), or null when none
 * can be made here: not Linux, no util-linux `unshare`, or namespaces forbidden (a container's seccomp profile, a
 * kernel or AppArmor policy against unprivileged user namespaces). `unshare` replaces itself with anvil (no
 * `--fork`), so the guard's child is anvil itself.
 */
async function namespacePrefix(): Promise<string[] | null> {
  if (process.platform !== 'linux') return null;
  for (const flags of NAMESPACE_FLAGS) {
    try {
      await promisify(execFile)('unshare', [...flags, 'true'], { timeout: 5_000 });
      return ['unshare', ...flags, '--'];
    } catch {
      // The next way, or none.
    }
  }
  return null;
}

/** The directory of anvil's socket, made 0700, and whether it is a private temporary one (removed at the end). */
function socketDirectory(runDir: string | undefined): { dir: string; temporary: boolean } {
  if (runDir && Buffer.byteLength(path.join(path.resolve(runDir), SOCKET_NAME)) <= SOCKET_PATH_MAX) {
    const dir = path.resolve(runDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    return { dir, temporary: false };
  }
  // mkdtemp makes it 0700.
  return { dir: mkdtempSync(path.join(tmpdir(), 'sealpay-anvil-')), temporary: true };
}

/** Starts anvil under its guard and waits until it answers on its IPC socket. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  const binary = anvilBinary();
  const namespace = await namespacePrefix();
  if (!namespace) {
    options.onUnisolated?.(
      'the chain engine (anvil) runs without a network namespace of its own (none can be made here): its HTTP port ' +
        'on 127.0.0.1 (without CORS) answers every development method, impersonating a custodial wallet included, ' +
        'to any local process or DNS-rebinding page that finds it; run sealpay where `unshare --net` or ' +
        '`unshare --user --map-root-user --net` works (Linux) to close it',
    );
  }
  const { dir, temporary } = socketDirectory(options.runDir);
  const socketPath = path.join(dir, SOCKET_NAME);
  // A socket or state left by an anvil that was killed: anvil would not bind over it.
  rmSync(socketPath, { force: true });
  const stateFile = options.state === undefined ? null : path.join(dir, STATE_NAME);
  if (stateFile && options.state !== undefined) {
    // `--load-state` reads plain JSON; the dump is gzip'ed JSON as hex.
    const json = await promisify(gunzip)(Buffer.from(options.state.replace(/^0x/, ''), 'hex'));
    writeFileSync(stateFile, json, { mode: 0o600 });
  }
  const cleanUp = () => {
    if (stateFile) rmSync(stateFile, { force: true });
    if (temporary) rmSync(dir, { recursive: true, force: true });
  };
  const child: ChildProcess = spawn(
    process.execPath,
    [GUARD, ...(namespace ?? []), binary, ...anvilArguments(options, socketPath, stateFile)],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: a Ctrl-C meant for the service must not stop anvil before the last snapshot.
      detached: true,
    },
  );
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
  const deadline = Date.now() + START_TIMEOUT_MS;
  let ipc: AnvilIpc;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`anvil did not start within ${START_TIMEOUT_MS / 1000} s:\n${lines.join('\n')}`));
      }, START_TIMEOUT_MS);
      const onLine = (line: string) => {
        if (/Listening on /.test(line)) {
          clearTimeout(timer);
          resolve();
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
    });
    ipc = await connectAnvilIpc(socketPath, deadline, () => exit);
    chmodSync(socketPath, 0o600);
  } catch (error) {
    child.stdin?.end();
    child.kill('SIGKILL');
    await exited;
    cleanUp();
    throw error;
  } finally {
    // Anvil has read its state (or is gone): the file is a copy of the snapshot, not kept.
    if (stateFile) rmSync(stateFile, { force: true });
  }
  listening = true;
  // The guard (and anvil) must never keep the service's event loop alive, nor outlive it.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    // A pipe is a socket at run time (it has `unref`), though typed as a plain stream.
    if (stream && 'unref' in stream && typeof stream.unref === 'function') stream.unref();
  }

  const engine: AnvilProcess = {
    pid: child.pid,
    socketPath,
    isolated: namespace !== null,
    request: (args) => ipc.request(args),
    async dumpState() {
      const state = await ipc.request({ method: 'anvil_dumpState' });
      if (typeof state !== 'string' || !state.startsWith('0x'))
        throw new Error('anvil_dumpState returned no state');
      return state;
    },
    exitReason: () => exit,
    async close() {
      closing = true;
      ipc.close();
      if (!exit) {
        // The guard kills anvil when its stdin closes.
        child.stdin?.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      cleanUp();
    },
  };
  try {
    // Anvil logs every request it serves; nobody reads them.
    await engine.request({ method: 'anvil_setLoggingEnabled', params: [false] });
  } catch (error) {
    await engine.close();
    throw error;
  }
  return engine;
}
