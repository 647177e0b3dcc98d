/**
 * Two API processes on one PostgreSQL, as `sealpay serve` twice: each its own Deps, pool, caches and app. What one
 * decides, the other honours at once: rate-limit budgets, an API key's revocation, a session's end and expiry.
 * (Idempotency across API processes is exercised by the scale-out run, with real processes and a chain.)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import type { App } from '../../src/http/types.ts';
import { ManualClock } from '../../src/lib/time.ts';
import { SESSION_TTL_MS } from '../../src/modules/accounts/accounts.repository.ts';
import { closeDeps, createDeps } from '../../src/runtime.ts';
import { apiKeyOf, openTestDatabase, signup } from '../harness.ts';

const READS_PER_MINUTE = 6;

describe.skipIf(!process.env.DATABASE_URL)('two API processes on one PostgreSQL', () => {
  const apps: App[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const clock = new ManualClock();

  beforeAll(async () => {
    const { database, drop, url } = await openTestDatabase();
    cleanups.push(drop);
    const config = loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'sealpay-api-processes-')),
      LOG_LEVEL: 'silent',
      RATE_LIMIT_READS_PER_MINUTE: String(READS_PER_MINUTE),
    });
    for (const db of [database, await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 3 })]) {
      const deps = await createDeps(config, { database: db, clock });
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

  const get = (app: App, headers: Record<string, string>, url = '/api/v1/me') =>
    app.inject({ method: 'GET', url, headers });

  it('share one rate-limit budget', async () => {
    const [a, b] = apps as [App, App];
    const caller = await signup(a);
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
