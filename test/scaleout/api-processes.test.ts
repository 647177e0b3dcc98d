/**
 * Two API processes on one PostgreSQL, as `sealpay serve` twice: each its own Deps, pool, caches and app. What one
 * decides, the other honours at once: rate-limit budgets, an API key's revocation, a session's end and expiry.
 * (Idempotency across API processes is exercised by the scale-out run, with real processes and a chain.) And an API
 * key's spend limit, taken by concurrent transfers through both.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import type { App } from '../../src/http/types.ts';
import { SESSION_TTL_MS } from '../../src/modules/accounts/accounts.repository.ts';
import { closeDeps, createDeps } from '../../src/runtime.ts';
import { REFUSING_PORT } from '../faults/service.ts';
import { apiKeyOf, openTestDatabase, signup, toWindowStart } from '../harness.ts';
import { ManualClock } from '../support/clock.ts';

const READS_PER_MINUTE = 6;

const get = (app: App, headers: Record<string, string>, url = '/api/v1/me') =>
  app.inject({ method: 'GET', url, headers });

/**
 * Two apps, each with its own Deps, pool and caches, on one fresh PostgreSQL database, built in `beforeAll` and
 * closed in `afterAll`: `apps` fills once they are up.
 */
function twoApiProcesses(
  env: Record<string, string>,
  options: { clock?: ManualClock; network?: boolean } = {},
): App[] {
  const apps: App[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const { database, drop, url } = await openTestDatabase();
    cleanups.push(drop);
    const config = loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'sealpay-api-processes-')),
      LOG_LEVEL: 'silent',
      ...env,
    });
    for (const db of [database, await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 3 })]) {
      const deps = await createDeps(config, { database: db, ...options });
      const app = await buildApp(deps, { logger: false });
      await app.ready();
      apps.push(app);
      cleanups.push(async () => {
        await app.close();
        await closeDeps(deps);
      });
    }
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return apps;
}

describe.skipIf(!process.env.DATABASE_URL)('two API processes on one PostgreSQL', () => {
  const clock = new ManualClock();
  const apps = twoApiProcesses({ RATE_LIMIT_READS_PER_MINUTE: String(READS_PER_MINUTE) }, { clock });

  it('share one rate-limit budget', async () => {
    const [a, b] = apps as [App, App];
    const caller = await signup(a);
    toWindowStart(clock, 60_000);
    const statuses: number[] = [];
    for (let i = 0; i < READS_PER_MINUTE; i++)
      statuses.push((await get(i % 2 ? b : a, caller.headers)).statusCode);
    expect(statuses).toEqual(Array(READS_PER_MINUTE).fill(200));
    const over = await get(b, caller.headers);
    expect(over.statusCode).toBe(429);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    expect((await get(a, caller.headers)).statusCode).toBe(429);
    clock.advance(61_000);
    expect((await get(b, caller.headers)).statusCode).toBe(200);
  });

  it('honour an API key revoked on the other process at once', async () => {
    const [a, b] = apps as [App, App];
    const caller = await signup(a);
    const key = await apiKeyOf(a, caller);
    const bearer = { authorization: `Bearer ${key.plaintext}` };
    expect((await get(b, bearer)).statusCode).toBe(200);
    const revoked = await a.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: caller.headers,
    });
    expect(revoked.statusCode).toBe(200);
    expect((await get(b, bearer)).statusCode).toBe(401);
    expect((await get(a, bearer)).statusCode).toBe(401);
  });

  it('end a session logged out on one process, and expire it on both', async () => {
    const [a, b] = apps as [App, App];
    const first = await signup(a);
    expect((await get(b, first.headers)).statusCode).toBe(200);
    const logout = await b.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { ...first.headers, 'content-type': 'application/json' },
      payload: {},
    });
    expect(logout.statusCode).toBe(200);
    expect((await get(a, first.headers)).statusCode).toBe(401);

    const second = await signup(b);
    expect((await get(a, second.headers)).statusCode).toBe(200);
    clock.advance(SESSION_TTL_MS + 1000);
    expect((await get(a, second.headers)).statusCode).toBe(401);
    expect((await get(b, second.headers)).statusCode).toBe(401);
  });
});

/**
 * A key's spend limit across two API processes: each takes its transfers' spends under the key's row lock in the
 * shared database. The processes speak to a devnet they never reach: a transfer is only queued at request time.
 */
describe.skipIf(!process.env.DATABASE_URL)('a spend limit across two API processes on one PostgreSQL', () => {
  const apps = twoApiProcesses(
    {
      NETWORK: 'devnet',
      RPC_URL: `http://127.0.0.1:${REFUSING_PORT}/unreachable`,
      MASTER_KEY: randomBytes(32).toString('hex'),
      OPERATOR_PRIVATE_KEY: `0x${randomBytes(32).toString('hex')}`,
      STABLECOIN_ADDRESS: '0x0000000000000000000000000000000000000001',
      CONFIDENTIAL_TOKEN_ADDRESS: '0x0000000000000000000000000000000000000002',
      LETTER_VAULT_ADDRESS: '0x0000000000000000000000000000000000000003',
    },
    { network: true },
  );

  it('lets 20 concurrent transfers through both send exactly the limit', async () => {
    const [a, b] = apps as [App, App];
    const caller = await signup(a);
    const key = await apiKeyOf(a, caller, { name: 'limited', spendLimit: { amount: '10', period: '24h' } });
    const wallet = await a.inject({
      method: 'POST',
      url: '/api/v1/wallets',
      headers: caller.headers,
      payload: { type: 'CUSTODIAL' },
    });
    expect(wallet.statusCode).toBe(201);
    const walletId = wallet.json().data.wallet.id;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? b : a).inject({
          method: 'POST',
          url: '/api/v1/transfer',
          headers: key.headers,
          payload: { walletId, to: '0x000000000000000000000000000000000000dEaD', amount: '1' },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(10).fill(403)]);
    const refused = answers
      .filter((answer) => answer.statusCode === 403)
      .map((answer) => answer.json().error);
    expect(new Set(refused.map((error) => error.code))).toEqual(new Set(['spend_limit_exceeded']));
    const keys = (await get(b, caller.headers, '/api/v1/keys')).json().data.keys;
    expect(keys.find((k: { id: string }) => k.id === key.key.id).spentLast24h).toBe('10.00');
  });
});
