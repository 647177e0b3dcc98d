import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPublicClient, custom } from 'viem';
import { decryptConfidentialBalance } from '../src/adapters/confidential/helpers.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Database, openDatabase } from '../src/db/client.ts';
import type { Deps } from '../src/deps.ts';
import type { App } from '../src/http/types.ts';
import type { Clock } from '../src/lib/time.ts';
import { openWalletKey } from '../src/modules/wallets/custody.ts';
import { findWalletById } from '../src/modules/wallets/wallets.repository.ts';
import { closeDeps, createDeps } from '../src/runtime.ts';
import { startWorker } from '../src/worker/worker.ts';
import { ManualClock } from './support/clock.ts';
import { copyFromTemplate, providedOrNull } from './support/provided.ts';

const silentLogger = {
  info: () => {},
  warn: () => {},
  error: (...args: unknown[]) => console.error(...args),
};

/**
 * A database for one test file: in-memory PGlite by default; when DATABASE_URL is set (the CI PostgreSQL run),
 * a fresh PostgreSQL database created for this file and dropped afterwards.
 */
export async function openTestDatabase(): Promise<{
  database: Database;
  drop: () => Promise<void>;
  /** The PostgreSQL database's URL (null on PGlite), for a second connection as another process would open. */
  url: string | null;
}> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const database = await openDatabase({
      databaseUrl: null,
      dataDir: null,
      image: providedOrNull('databaseImage'),
    });
    return { database, drop: async () => {}, url: null };
  }
  const name = `sealpay_test_${randomBytes(6).toString('hex')}`;
  const template = providedOrNull('databaseTemplate');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(template ? `create database ${name} template ${template}` : `create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize: 5 });
  return {
    database,
    url: url.toString(),
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

export interface TestContext {
  app: App;
  deps: Deps;
  clock: ManualClock;
  close: () => Promise<void>;
}

export interface TestOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Start the embedded chain (slow: only for tests that move money). */
  network?: boolean;
  /** Run the worker loop in the background (implies the network). */
  worker?: boolean;
  /**
   * Deploy the embedded chain from genesis in this file's data directory instead of starting from a copy of the
   * run's deployed chain (`seedChain`): for tests whose subject is the first start.
   */
  freshChain?: boolean;
}

/**
 * Puts a copy of the run's deployed embedded chain (`test/global/fixtures.ts`) in `dataDir/chain`, so the service
 * started on `dataDir` loads it (a warm start: its snapshot, nothing replayed) instead of deploying the fhEVM host
 * and sealpay's contracts. A copy, not a link: the file's chain writes its own journal and snapshots. Does nothing
 * where the run made no template. Returns whether it copied.
 */
export function seedChain(dataDir: string): boolean {
  return copyFromTemplate('chain', dataDir);
}

export async function createTestContext(options: TestOptions = {}): Promise<TestContext> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-test-'));
  const embedded = (options.env?.NETWORK ?? 'local') === 'local';
  if ((options.network || options.worker) && embedded && !options.freshChain) seedChain(dataDir);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...options.env });
  const { database, drop } = await openTestDatabase();
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock();
  const deps = await createDeps(config, {
    database,
    clock,
    network: options.network ?? options.worker ?? false,
  });
  const app = await buildApp(deps, { logger: process.env.TEST_LOG ? { level: 'error' } : false });
  await app.ready();
  const stopWorker = options.worker ? await startWorker(deps, silentLogger) : null;
  return {
    app,
    deps,
    clock,
    close: async () => {
      await stopWorker?.();
      await app.close();
      await closeDeps(deps);
      await drop();
    },
  };
}

export interface Caller {
  headers: Record<string, string>;
  userId: string;
  email: string;
  password: string;
}

let counter = 0;
export const PASSWORD = 'Correct-Horse-9';

/** Signs up a fresh account and returns headers that carry its session cookie. */
export async function signup(
  app: App,
  overrides: { email?: string; password?: string; ip?: string } = {},
): Promise<Caller> {
  counter += 1;
  const email = overrides.email ?? `user${counter}-${randomBytes(3).toString('hex')}@example.com`;
  const password = overrides.password ?? PASSWORD;
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email, password, name: `User ${counter}` },
    remoteAddress: overrides.ip ?? `10.0.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`,
  });
  if (response.statusCode !== 201) throw new Error(`signup failed: ${response.statusCode} ${response.body}`);
  return {
    headers: { cookie: sessionCookieOf(response.headers['set-cookie']) },
    userId: response.json().data.user.id,
    email,
    password,
  };
}

/**
 * Moves a test's clock to just past the start of the next window of a rate limit `windowMs` long (windows start at
 * whole multiples of their length), so a burst that must fall in one window cannot straddle a boundary and find
 * its counter reset halfway.
 */
export function toWindowStart(clock: ManualClock, windowMs: number): void {
  clock.advance(windowMs - (clock.now().getTime() % windowMs) + 100);
}

export function sessionCookieOf(setCookie: string | string[] | undefined): string {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const found = all.find((cookie) => cookie.startsWith('svc_session='));
  if (!found) throw new Error('no session cookie was set');
  return found.split(';')[0] as string;
}

/** Creates an API key from the caller's session; returns headers carrying it. */
export async function apiKeyOf(app: App, caller: Caller, body: Record<string, unknown> = { name: 'test' }) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: caller.headers,
    payload: body,
  });
  if (response.statusCode !== 201)
    throw new Error(`key creation failed: ${response.statusCode} ${response.body}`);
  const data = response.json().data;
  return {
    headers: { authorization: `Bearer ${data.plaintext}` },
    key: data.key,
    plaintext: data.plaintext as string,
  };
}

/** POSTs `payload` to `/api/v1${path}` with `headers`; an answer of 300 or more fails with its body. Returns `data`. */
export async function postData(app: App, headers: Record<string, string>, path: string, payload: object) {
  const response = await app.inject({ method: 'POST', url: `/api/v1${path}`, headers, payload });
  if (response.statusCode >= 300) throw new Error(`POST ${path}: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** Asserts the error envelope and returns the error. */
export function errorOf(response: { statusCode: number; json: () => unknown }) {
  const body = response.json() as {
    ok: boolean;
    error: { code: string; message: string; details?: unknown };
  };
  if (body.ok !== false || typeof body.error?.code !== 'string' || typeof body.error?.message !== 'string') {
    throw new Error(`not an error envelope: ${JSON.stringify(body)}`);
  }
  return { status: response.statusCode, ...body.error };
}

/** Polls a transaction until it reaches one of `statuses` (the interface's polling, sped up for tests). */
export async function waitForStatus(
  app: App,
  headers: Record<string, string>,
  id: string,
  statuses: string[] = ['CONFIRMED', 'SETTLED', 'FAILED'],
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await app.inject({ url: `/api/v1/transactions/${id}`, headers });
    const transaction = response.json().data?.transaction;
    if (transaction && statuses.includes(transaction.status)) return transaction;
    if (Date.now() > deadline)
      throw new Error(`transaction ${id} still ${transaction?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A viem client that reaches the chain through the service's own `POST /rpc`, as a wallet would. */
export function rpcClient(app: App) {
  return createPublicClient({
    transport: custom({
      request: async ({ method, params }) => {
        const response = await app.inject({
          method: 'POST',
          url: '/rpc',
          payload: { jsonrpc: '2.0', id: 1, method, params },
        });
        const body = response.json();
        if (body.error) throw new Error(body.error.message);
        return body.result;
      },
    }),
  });
}

/** Serves the test app over real HTTP on a free loopback port; returns its origin (closed with the context). */
export async function listenOnLoopback(app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
}

/** A custodial wallet's confidential balance as the chain holds it, decrypted with the wallet's own key. */
export async function confidentialBalanceOnChain(deps: Deps, walletId: string): Promise<bigint> {
  const wallet = await findWalletById(deps.database.db, walletId);
  if (!wallet || !deps.network) throw new Error('no such wallet, or no chain');
  return decryptConfidentialBalance(deps.network, openWalletKey(deps.keyring, wallet));
}
