/**
 * The service as a child process (`node src/main.ts start`) and a small HTTP client for it: shared by the fault
 * tests (kill -9 at random moments) and by `npm run bench` (start to ready, transfers through the API).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Address } from 'viem';
import { createRemoteNetwork } from '../../src/adapters/chain/remote.ts';
import type { Network } from '../../src/adapters/chain/types.ts';
import { copyFromTemplate } from '../support/provided.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = join(ROOT, 'src', 'main.ts');

/** Budgets raised so load and fault runs are never answered 429 (the limiter still runs). */
export const LOAD_ENV: Record<string, string> = {
  RATE_LIMIT_READS_PER_MINUTE: '100000000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
  RATE_LIMIT_SIGNUPS_PER_HOUR: '100000',
  RATE_LIMIT_LOGIN_PER_15_MINUTES: '100000',
};

/**
 * How long a child process may take to be ready in the CI-only runs: a fresh devnet deploys the fhEVM host and
 * sealpay's contracts (or replays its journal), which takes minutes on a loaded 2-core machine.
 */
export const STARTUP_TIMEOUT_MS = 300_000;

export function freshDataDir(prefix = 'sealpay-bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A new data directory holding a copy of the run's template (`test/global/fixtures.ts`): the embedded chain
 * deployed and the embedded database migrated, as a first start leaves them. A service started on it skips
 * PGlite's initdb and the contracts' deployment (seconds each on the 2-core machine), for files whose subject is
 * not the first start. Outside the suite (the benchmarks) there is no template: the directory is empty, as
 * `freshDataDir`'s.
 */
export function seededDataDir(prefix: string): string {
  const dataDir = freshDataDir(prefix);
  copyFromTemplate('', dataDir);
  return dataDir;
}

/**
 * A port nothing listens on, for a process the caller is about to start. Chosen at random below the kernel's
 * ephemeral range (Linux hands 32768–60999 to `listen(0)` and to every outgoing connection's source port; macOS
 * 49152–65535): a port from `listen(0)` could be handed to another test file's connection in the second before the
 * child listens on it, and the child then died with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(20_000, 32_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000 after 100 tries');
}

/**
 * Where a test's connection must be refused (a provider or an endpoint that is down): port 9 (discard) of the
 * loopback. Nothing listens there, and the kernel never hands a port below 1024 to `listen(0)` or to an outgoing
 * connection, as it could a port freed a moment ago.
 */
export const REFUSING_PORT = 9;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly baseUrl: string;
  readonly dataDir: string;
  /** performance.now() just before the spawn. */
  readonly spawnedAt: number;
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines of stdout and stderr, for failure messages. */
  tail(): string;
  /** The last 200 lines of stdout and stderr. */
  output(): string;
}

export interface SpawnOptions {
  dataDir: string;
  port?: number;
  env?: Record<string, string>;
  /** The CLI command (default `start`). */
  command?: 'start' | 'serve' | 'worker' | 'devnet' | 'migrate';
  /** Arguments after the command (`devnet --block-time 1`). */
  args?: string[];
  /** A process group of its own, as a command typed in a terminal (the test can then signal the whole group). */
  detached?: boolean;
}

/** Spawns `node src/main.ts start` (or another command) on Node 24 (the runtime this process runs on). */
export async function spawnService(options: SpawnOptions): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(line);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  const spawnedAt = performance.now();
  // `start` is the embedded topology (API, worker and chain in one process over the embedded database): a
  // DATABASE_URL meant for the PostgreSQL test run must not leak into it (a caller that wants one passes it).
  const { DATABASE_URL: _postgres, ...inherited } = process.env;
  const child = spawn(process.execPath, [MAIN, options.command ?? 'start', ...(options.args ?? [])], {
    cwd: ROOT,
    env: {
      ...inherited,
      LOG_LEVEL: 'warn',
      ...options.env,
      PORT: String(port),
      DEVNET_PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: options.dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    dataDir: options.dataDir,
    spawnedAt,
    exited,
    tail: () => lines.slice(-40).join('\n'),
    output: () => lines.join('\n'),
  };
}

/** Waits until the process has printed a line matching `pattern` (a worker has no HTTP port to poll). */
export async function waitForOutput(
  service: ServiceProcess,
  pattern: RegExp,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (pattern.test(service.output())) return;
    if (service.child.exitCode !== null || service.child.signalCode !== null) {
      throw new Error(`the process exited before printing ${pattern}:\n${service.tail()}`);
    }
    if (performance.now() > deadline)
      throw new Error(`no ${pattern} after ${timeoutMs} ms:\n${service.tail()}`);
    await sleep(20);
  }
}

/** Polls `GET /readyz` until 200; returns the milliseconds since the spawn. */
export async function waitReady(service: ServiceProcess, timeoutMs = 120_000, pollMs = 10): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let dead = false;
  void service.exited.then(() => {
    dead = true;
  });
  for (;;) {
    if (dead) throw new Error(`the service exited before it was ready:\n${service.tail()}`);
    try {
      const response = await fetch(`${service.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - service.spawnedAt;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms:\n${service.tail()}`);
    await sleep(pollMs);
  }
}

/** The settings `sealpay devnet` wrote to `{dataDir}/devnet.env`. */
export function readDevnetEnv(dataDir: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of readFileSync(join(dataDir, 'devnet.env'), 'utf8').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) settings[line.slice(0, at)] = line.slice(at + 1);
  }
  return settings;
}

/** A `NETWORK=devnet` network (the service's own code path) from the settings of a devnet's `devnet.env`. */
export function devnetNetwork(settings: Record<string, string>): Network {
  return createRemoteNetwork({
    network: 'devnet',
    rpcUrl: settings.RPC_URL as string,
    operatorPrivateKey: settings.OPERATOR_PRIVATE_KEY as string,
    contracts: {
      stablecoin: settings.STABLECOIN_ADDRESS as Address,
      confidentialToken: settings.CONFIDENTIAL_TOKEN_ADDRESS as Address,
      letterVault: settings.LETTER_VAULT_ADDRESS as Address,
    },
  });
}

export async function kill9(service: ServiceProcess): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service.exited;
}

/** SIGTERM (graceful: close-with-grace drains the worker and closes the chain journal), then waits. */
export async function stopGracefully(service: ServiceProcess, timeoutMs = 30_000): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), timeoutMs);
  await service.exited;
  clearTimeout(timer);
}

/** A process as Linux's /proc shows it. */
export interface ProcessInfo {
  pid: number;
  parent: number;
  /** R, S, Z (a zombie: exited, not yet reaped)… */
  state: string;
  command: string[];
}

function processInfo(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last one.
    const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { pid, parent: Number(parent), state: state ?? '?', command };
  } catch {
    return null;
  }
}

/** The live descendants of `pid` (Linux), parents before their children. */
export function descendants(pid: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => processInfo(Number(name)) ?? []);
  const found: ProcessInfo[] = [];
  const parents = [pid];
  while (parents.length > 0) {
    const parent = parents.shift() as number;
    for (const child of all) {
      if (child.parent === parent && child.state !== 'Z') {
        found.push(child);
        parents.push(child.pid);
      }
    }
  }
  return found;
}

/** Waits until every one of `processes` has exited (a zombie counts as exited). */
export async function waitGone(processes: ProcessInfo[], timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const alive = processes.filter((p) => {
      const now = processInfo(p.pid);
      return now !== null && now.state !== 'Z' && now.command.join(' ') === p.command.join(' ');
    });
    if (alive.length === 0) return;
    if (performance.now() > deadline) {
      throw new Error(
        `still running after ${timeoutMs} ms: ${alive.map((p) => `${p.pid} ${p.command.join(' ')}`).join('; ')}`,
      );
    }
    await sleep(20);
  }
}

/** The service's anvil and the guard that runs it (the embedded network's chain engine). */
export function chainEngineOf(service: ServiceProcess): { guard: ProcessInfo; anvil: ProcessInfo } {
  const tree = descendants(service.child.pid as number);
  const guard = tree.find((p) => p.command.some((arg) => arg.endsWith('anvil-guard.ts')));
  const anvil = tree.find((p) => p.parent === guard?.pid);
  if (!guard || !anvil) throw new Error(`no anvil under process ${service.child.pid}`);
  return { guard, anvil };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of the API, read loosely by tests and benchmarks
export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

/** One JSON request; network errors throw (the caller decides whether a dead service is expected). */
// biome-ignore lint/suspicious/noExplicitAny: as above
export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<ApiResponse<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: response.status, body: body as T };
}

export interface Client {
  email: string;
  /** `authorization: Bearer svc_sk_…` */
  headers: Record<string, string>;
}

let accounts = 0;

/** Signs up an account (its session cookie creates an API key) and returns the key's headers. */
export async function signupWithKey(baseUrl: string): Promise<Client> {
  accounts += 1;
  const email = `bench${accounts}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const signed = await fetch(`${baseUrl}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'Correct-Horse-9', name: `Bench ${accounts}` }),
  });
  const text = await signed.text();
  if (signed.status !== 201) throw new Error(`signup: ${signed.status} ${text}`);
  const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  if (!cookie) throw new Error('signup set no session cookie');
  const key = await request(baseUrl, 'POST', '/api/v1/keys', {
    headers: { cookie: cookie.split(';')[0] as string },
    body: { name: 'bench' },
  });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { email, headers: { authorization: `Bearer ${key.body.data.plaintext}` } };
}

export async function createWallet(
  baseUrl: string,
  client: Client,
): Promise<{ id: string; address: string }> {
  const response = await request(baseUrl, 'POST', '/api/v1/wallets', {
    headers: client.headers,
    body: { type: 'CUSTODIAL' },
  });
  if (response.status !== 201) throw new Error(`wallet: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data.wallet;
}

export interface TransactionView {
  id: string;
  type: string;
  status: string;
  amount: string;
  walletId: string;
  txHash: string | null;
  errorCode: string | null;
  fromAddress: string | null;
  toAddress: string | null;
  settlementTxHash: string | null;
  metadata: Record<string, unknown> | null;
  direction?: string;
  logIndex?: number | null;
}

export const TERMINAL = new Set(['CONFIRMED', 'SETTLED', 'FAILED']);

/** Every transaction of the client's account (all pages). */
export async function listAll(baseUrl: string, client: Client): Promise<TransactionView[]> {
  const all: TransactionView[] = [];
  for (let page = 1; ; page++) {
    const response = await request(baseUrl, 'GET', `/api/v1/transactions?pageSize=100&page=${page}`, {
      headers: client.headers,
    });
    if (response.status !== 200) throw new Error(`list: ${response.status} ${JSON.stringify(response.body)}`);
    const { items, total } = response.body.data as { items: TransactionView[]; total: number };
    all.push(...items);
    if (items.length === 0 || all.length >= total) return all;
  }
}

/** Polls one transaction until terminal. */
export async function waitTerminal(
  baseUrl: string,
  client: Client,
  id: string,
  timeoutMs = 60_000,
): Promise<TransactionView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await request(baseUrl, 'GET', `/api/v1/transactions/${id}`, { headers: client.headers });
    const transaction = response.body?.data?.transaction as TransactionView | undefined;
    if (transaction && TERMINAL.has(transaction.status)) return transaction;
    if (Date.now() > deadline) throw new Error(`transaction ${id} still ${transaction?.status}`);
    await sleep(25);
  }
}
