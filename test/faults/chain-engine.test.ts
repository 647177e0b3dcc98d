/**
 * The embedded network's EVM runs in a child process (anvil, under a guard): it must never outlive the service,
 * whichever way the service stops, and a Ctrl-C in a terminal (SIGINT to the whole foreground process group) must
 * not stop it before the service has taken its last snapshot. Real processes, Linux's /proc to see them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  chainEngineOf,
  freshDataDir,
  kill9,
  type ServiceProcess,
  spawnService,
  stopGracefully,
  waitForOutput,
  waitGone,
  waitReady,
} from './service.ts';

const running: ServiceProcess[] = [];
afterAll(async () => {
  for (const service of running) await kill9(service);
});

describe('the chain engine process (anvil)', () => {
  it('goes with `npm start` on kill -9 and on SIGTERM, and a restart on the same DATA_DIR serves again', async () => {
    const dataDir = freshDataDir('sealpay-engine-');
    let service = await spawnService({ dataDir });
    running.push(service);
    await waitReady(service);
    let engine = chainEngineOf(service);
    expect(engine.anvil.command[0]).toMatch(/@foundry-rs\/anvil-[a-z0-9-]+\/bin\/anvil$/);
    // A port the kernel chose, on the loopback only.
    expect(engine.anvil.command.join(' ')).toContain('--host 127.0.0.1 --port 0');

    await kill9(service);
    await waitGone([engine.guard, engine.anvil]);

    service = await spawnService({ dataDir, port: service.port });
    running.push(service);
    await waitReady(service);
    engine = chainEngineOf(service);
    await stopGracefully(service);
    expect((await service.exited).code).toBe(0);
    await waitGone([engine.guard, engine.anvil]);
  });

  it('a Ctrl-C stops `sealpay devnet` after its last snapshot: the next start replays nothing', async () => {
    const dataDir = freshDataDir('sealpay-engine-devnet-');
    let devnet = await spawnService({ command: 'devnet', dataDir, detached: true });
    running.push(devnet);
    await waitForOutput(devnet, /sealpay devnet: JSON-RPC/);
    const engine = chainEngineOf(devnet);
    // The terminal sends SIGINT to its foreground process group: the devnet's, not its anvil's.
    process.kill(-(devnet.child.pid as number), 'SIGINT');
    expect((await devnet.exited).code).toBe(0);
    await waitGone([engine.guard, engine.anvil]);
    expect(devnet.output()).toMatch(/chain snapshot \d+\.snapshot/);

    devnet = await spawnService({ command: 'devnet', dataDir, port: devnet.port });
    running.push(devnet);
    await waitForOutput(devnet, /sealpay devnet: JSON-RPC/);
    expect(devnet.output()).toMatch(/snapshot of \d+ entries, then 0 journal entries replayed/);
  });
});
