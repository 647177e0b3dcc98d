/**
 * The embedded network's EVM runs in a child process (anvil, under a guard): it must never outlive the service,
 * whichever way the service stops, and a Ctrl-C in a terminal (SIGINT to the whole foreground process group) must
 * not stop it before the service has taken its last snapshot; no one but the service may reach it. Real processes,
 * Linux's /proc to see them.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chainEngineOf,
  freshDataDir,
  kill9,
  type ServiceProcess,
  STARTUP_TIMEOUT_MS,
  spawnService,
  stopGracefully,
  waitForOutput,
  waitGone,
  waitReady,
} from './service.ts';

const running: ServiceProcess[] = [];

/**
 * The TCP ports `pid` listens on, as its own network namespace numbers them: the LISTEN rows of its
 * /proc/<pid>/net/tcp{,6} (its namespace's table) whose socket is one of its open files.
 */
function listeningPorts(pid: number): number[] {
  const sockets = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return /^socket:\[(\d+)\]$/.exec(target)?.[1] ?? [];
    }),
  );
  return ['tcp', 'tcp6'].flatMap((table) =>
    readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // local_address (hex ip:port), st (0A = LISTEN), inode
      .filter((fields) => fields[3] === '0A' && sockets.has(fields[9] ?? ''))
      .map((fields) => Number.parseInt((fields[1] ?? '').split(':')[1] ?? '', 16)),
  );
}

/** What answers `web3_clientVersion` on 127.0.0.1:port from this process (null: nothing, or not JSON-RPC). */
async function clientVersionAt(port: number): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'web3_clientVersion', params: [] }),
      signal: AbortSignal.timeout(5_000),
    });
    return ((await response.json()) as { result?: string }).result ?? null;
  } catch {
    return null;
  }
}
afterAll(async () => {
  for (const service of running) await kill9(service);
});

describe('the chain engine process (anvil)', () => {
  it(
    'goes with `npm start` on kill -9 and on SIGTERM, and a restart on the same DATA_DIR serves again',
    async () => {
      const dataDir = freshDataDir('sealpay-engine-');
      let service = await spawnService({ dataDir });
      running.push(service);
      await waitReady(service, STARTUP_TIMEOUT_MS);
      let engine = chainEngineOf(service);
      expect(engine.anvil.command[0]).toMatch(/@foundry-rs\/anvil-[a-z0-9-]+\/bin\/anvil$/);
      // A port the kernel chose, on the loopback (of its own network namespace: below).
      expect(engine.anvil.command.join(' ')).toContain('--host 127.0.0.1 --port 0');

      await kill9(service);
      await waitGone([engine.guard, engine.anvil]);

      service = await spawnService({ dataDir, port: service.port });
      running.push(service);
      await waitReady(service, STARTUP_TIMEOUT_MS);
      engine = chainEngineOf(service);
      await stopGracefully(service);
      expect((await service.exited).code).toBe(0);
      await waitGone([engine.guard, engine.anvil]);
    },
    2 * STARTUP_TIMEOUT_MS,
  );

  it(
    'is reachable only through its IPC socket (0600, in a 0700 directory): no TCP port of anvil answers here',
    async () => {
      const dataDir = freshDataDir('sealpay-engine-ipc-');
      const service = await spawnService({ dataDir });
      running.push(service);
      await waitReady(service, STARTUP_TIMEOUT_MS);
      const { anvil } = chainEngineOf(service);

      // Anvil always listens on HTTP: in a network namespace of its own, where nothing of this machine is.
      const ports = listeningPorts(anvil.pid);
      expect(ports.length).toBeGreaterThan(0);
      expect(readlinkSync(`/proc/${anvil.pid}/ns/net`)).not.toBe(readlinkSync('/proc/self/ns/net'));
      for (const port of ports) expect(await clientVersionAt(port)).toBeNull();

      const socketDir = join(dataDir, 'chain', 'anvil');
      const socket = statSync(join(socketDir, 'anvil.ipc'));
      expect(socket.isSocket()).toBe(true);
      expect(socket.mode & 0o777).toBe(0o600);
      expect(statSync(socketDir).mode & 0o777).toBe(0o700);
      expect(anvil.command).toContain(join(socketDir, 'anvil.ipc'));

      // The chain still answers the service, through the socket.
      const answer = await fetch(`${service.baseUrl}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      });
      expect(BigInt(((await answer.json()) as { result: string }).result)).toBeGreaterThan(0n);
      await stopGracefully(service);
      expect((await service.exited).code).toBe(0);
    },
    STARTUP_TIMEOUT_MS + 60_000,
  );

  it(
    'a Ctrl-C stops `sealpay devnet` after its last snapshot: the next start replays nothing',
    async () => {
      const dataDir = freshDataDir('sealpay-engine-devnet-');
      let devnet = await spawnService({ command: 'devnet', dataDir, detached: true });
      running.push(devnet);
      await waitForOutput(devnet, /sealpay devnet: JSON-RPC/, STARTUP_TIMEOUT_MS);
      // On a fresh clone too: the devnet builds the contracts it deploys (incremental), as `npm start` does.
      expect(devnet.output()).toMatch(/^devnet: build: (contracts up to date|compiled .+ in \d+ ms)/m);
      const engine = chainEngineOf(devnet);
      // The terminal sends SIGINT to its foreground process group: the devnet's, not its anvil's.
      process.kill(-(devnet.child.pid as number), 'SIGINT');
      expect((await devnet.exited).code).toBe(0);
      await waitGone([engine.guard, engine.anvil]);
      expect(devnet.output()).toMatch(/chain snapshot \d+\.snapshot/);

      devnet = await spawnService({ command: 'devnet', dataDir, port: devnet.port });
      running.push(devnet);
      await waitForOutput(devnet, /sealpay devnet: JSON-RPC/, STARTUP_TIMEOUT_MS);
      expect(devnet.output()).toMatch(/snapshot of \d+ entries, then 0 journal entries replayed/);
    },
    2 * STARTUP_TIMEOUT_MS,
  );
});
