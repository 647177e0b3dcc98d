/**
 * The data directory is private (issue 25, item 2): a real `start` found 968 of 1,105 files of `DATA_DIR/pgdata`
 * mode 0666 (the write-ahead log held password hashes) and `DATA_DIR` 0755. Real processes here: `start` and
 * `devnet` on a data directory left open to everyone, then real writes; afterwards every directory is 0700 and every
 * file 0600, those the embedded database wrote during the run included.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createWallet,
  freshDataDir,
  request,
  type ServiceProcess,
  signupWithKey,
  spawnService,
  stopGracefully,
  waitForOutput,
  waitReady,
  waitTerminal,
} from '../faults/service.ts';
import { API } from './openapi.ts';

const started: ServiceProcess[] = [];
afterEach(async () => {
  for (const service of started.splice(0)) {
    await stopGracefully(service);
    rmSync(service.dataDir, { recursive: true, force: true });
  }
});

/** A data directory as a careless setup leaves it: 0755, with a 0666 file and a 0755 folder holding a 0644 file. */
function openDataDir(prefix: string): string {
  const dir = freshDataDir(prefix);
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'notes.txt'), 'left here\n');
  chmodSync(join(dir, 'notes.txt'), 0o666);
  mkdirSync(join(dir, 'extra'), { mode: 0o755 });
  chmodSync(join(dir, 'extra'), 0o755);
  writeFileSync(join(dir, 'extra', 'inside.txt'), 'x');
  chmodSync(join(dir, 'extra', 'inside.txt'), 0o644);
  return dir;
}

interface Entry {
  path: string;
  mode: number;
  directory: boolean;
  modifiedMs: number;
}

function entries(dir: string): Entry[] {
  const found: Entry[] = [];
  const visit = (path: string) => {
    const stats = lstatSync(path);
    if (stats.isSymbolicLink()) return;
    found.push({ path, mode: stats.mode & 0o777, directory: stats.isDirectory(), modifiedMs: stats.mtimeMs });
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

/** Every entry that is not private: a directory other than 0700, a file or socket with a group or other bit. */
function open(dir: string): string[] {
  return entries(dir)
    .filter((entry) => (entry.directory ? entry.mode !== 0o700 : (entry.mode & 0o077) !== 0))
    .map((entry) => `${entry.path} ${entry.mode.toString(8)}`);
}

describe('DATA_DIR is private', () => {
  it('start tightens a DATA_DIR left open, says so once, and everything written during the run is 0700/0600', async () => {
    const dataDir = openDataDir('sealpay-private-');
    const service = await spawnService({ dataDir });
    started.push(service);
    await waitReady(service);
    expect(service.output().match(/entries made private/g)).toHaveLength(1);
    expect(service.output()).toContain(`DATA_DIR ${dataDir} was open to other users`);
    expect(lstatSync(join(dataDir, 'notes.txt')).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(dataDir, 'extra', 'inside.txt')).mode & 0o777).toBe(0o600);

    // Real writes: an account and its key, a wallet, a faucet payment confirmed on the embedded chain, a reset email.
    const writesFrom = Date.now();
    const client = await signupWithKey(service.baseUrl);
    const wallet = await createWallet(service.baseUrl, client);
    const fund = await request(service.baseUrl, 'POST', `${API}/fund`, {
      headers: client.headers,
      body: { walletId: wallet.id, amount: '5' },
    });
    expect(fund.status).toBe(201);
    expect((await waitTerminal(service.baseUrl, client, fund.body.data.transaction.id)).status).toBe(
      'CONFIRMED',
    );
    const forgot = await request(service.baseUrl, 'POST', `${API}/auth/password/forgot`, {
      body: { email: client.email },
    });
    expect(forgot.status).toBe(202);
    await waitForMailbox(service);

    const written = entries(join(dataDir, 'pgdata')).filter(
      (entry) => !entry.directory && entry.modifiedMs >= writesFrom,
    );
    expect(written.length).toBeGreaterThan(0);
    expect(open(dataDir)).toEqual([]);
    // A graceful stop writes the chain's snapshot: private too.
    await stopGracefully(service);
    expect(open(dataDir)).toEqual([]);
    expect(entries(dataDir).filter((entry) => entry.path.includes('snapshot')).length).toBeGreaterThan(0);
  }, 240_000);

  it('devnet does the same with its DATA_DIR', async () => {
    const dataDir = openDataDir('sealpay-private-devnet-');
    const service = await spawnService({ dataDir, command: 'devnet' });
    started.push(service);
    await waitForOutput(service, /sealpay devnet: JSON-RPC/);
    expect(service.output()).toContain(`DATA_DIR ${dataDir} was open to other users`);
    expect(open(dataDir)).toEqual([]);
    expect(lstatSync(join(dataDir, 'devnet.env')).mode & 0o777).toBe(0o600);
  }, 240_000);
});

/** The reset email lands in the local mailbox when the worker's email loop sends it. */
async function waitForMailbox(service: ServiceProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const listed = await request(service.baseUrl, 'GET', `${API}/sandbox/mailbox`);
    if (listed.status === 200 && listed.body.data.messages.length > 0) return;
    if (Date.now() > deadline) throw new Error(`no email in the mailbox: ${JSON.stringify(listed.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
