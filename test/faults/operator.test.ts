/**
 * Operator commands against a running embedded service (issue: `accounts disable` opened a second PGlite on the
 * same files, did nothing while the service ran and was lost at the next restart). Real processes: the service,
 * and the CLI as a separate `node src/main.ts accounts …`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { acquirePidLock, LockHeldError } from '../../src/lib/pid-lock.ts';
import {
  kill9,
  MAIN,
  ROOT,
  request,
  type ServiceProcess,
  seededDataDir,
  signupWithKey,
  spawnService,
  stopGracefully,
  waitReady,
} from './service.ts';

const run = promisify(execFile);
const running: ServiceProcess[] = [];
afterAll(async () => {
  for (const service of running) await kill9(service);
});

async function start(dataDir: string): Promise<ServiceProcess> {
  const service = await spawnService({ dataDir });
  running.push(service);
  await waitReady(service);
  return service;
}

/** `sealpay …` as an operator types it, in the service's DATA_DIR (never the PostgreSQL run's database). */
async function sealpay(dataDir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const { DATABASE_URL: _postgres, ...env } = process.env;
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], {
      cwd: ROOT,
      env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

const me = (service: ServiceProcess, headers: Record<string, string>) =>
  request(service.baseUrl, 'GET', '/api/v1/me', { headers });

describe('the pid lock', () => {
  it('refuses a second holder while the first lives, and takes over a dead one', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sealpay-lock-')), 'test.lock');
    const release = acquirePidLock(file, 'the test resource');
    expect(() => acquirePidLock(file, 'the test resource')).toThrow(LockHeldError);
    release();
    const again = acquirePidLock(file, 'the test resource');
    again();
  });
});

describe('operator commands while the service runs', () => {
  // Five service starts and seven CLI runs: ~53 s on a busy 2-core machine (on main too), hence 180 s.
  it('disable and enable take effect at once, survive SIGTERM and kill -9; a second start is refused', async () => {
    const dataDir = seededDataDir('sealpay-operator-');
    let service = await start(dataDir);
    const alice = await signupWithKey(service.baseUrl);
    expect((await me(service, alice.headers)).status).toBe(200);

    const disabled = await sealpay(dataDir, 'accounts', 'disable', '--email', alice.email);
    expect(disabled.code, disabled.out).toBe(0);
    expect(disabled.out).toContain('disabled');
    const refused = await me(service, alice.headers);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('account_disabled');

    // A second process on the same data directory stops with a clear message, and the first keeps serving.
    const second = await sealpay(dataDir, 'start');
    expect(second.code).toBe(2);
    expect(second.out).toMatch(/embedded database .* is in use by process \d+/);
    expect(second.out).not.toMatch(/\n\s+at /);
    expect((await request(service.baseUrl, 'GET', '/healthz')).status).toBe(200);

    await stopGracefully(service);
    service = await start(dataDir);
    expect((await me(service, alice.headers)).status).toBe(403);

    const enabled = await sealpay(dataDir, 'accounts', 'enable', '--email', alice.email);
    expect(enabled.code, enabled.out).toBe(0);
    expect((await me(service, alice.headers)).status).toBe(200);

    await kill9(service);
    service = await start(dataDir);
    expect((await me(service, alice.headers)).status).toBe(200);

    // An account created while the service runs logs in with its temporary password at once.
    const created = await sealpay(
      dataDir,
      'accounts',
      'create',
      '--email',
      'ops@example.com',
      '--name',
      'Ops',
    );
    expect(created.code, created.out).toBe(0);
    const password = /temporary password[^:]*: (\S+)/.exec(created.out)?.[1];
    expect(password).toBeDefined();
    const login = await request(service.baseUrl, 'POST', '/api/v1/auth/login', {
      body: { email: 'ops@example.com', password },
    });
    expect(login.status).toBe(200);
    expect(login.body.data.user.mustChangePassword).toBe(true);

    const unknown = await sealpay(dataDir, 'accounts', 'disable', '--email', 'nobody@example.com');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain('no account with email nobody@example.com');

    const migrate = await sealpay(dataDir, 'migrate');
    expect(migrate.code).toBe(0);
    expect(migrate.out).toContain('applied the migrations');

    // With the service stopped, the command opens the database itself.
    await stopGracefully(service);
    const offline = await sealpay(dataDir, 'accounts', 'disable', '--email', 'ops@example.com');
    expect(offline.code, offline.out).toBe(0);
    service = await start(dataDir);
    const after = await request(service.baseUrl, 'POST', '/api/v1/auth/login', {
      body: { email: 'ops@example.com', password },
    });
    expect(after.status).toBe(403);
    expect(after.body.error.code).toBe('account_disabled');
    // Three starts of a service on an embedded database created on disk: ~57 s alone here, more beside other files.
  }, 180_000);
});
