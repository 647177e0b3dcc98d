/**
 * Process state lives on `Deps`, never in module variables: two services built in one process (here over one
 * embedded database, as two API processes share PostgreSQL) keep their own caches and wake-ups.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyOf, signup } from '../test/harness.ts';
import { ManualClock } from '../test/support/clock.ts';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { type Database, openDatabase } from './db/client.ts';
import type { Deps } from './deps.ts';
import type { App } from './http/types.ts';
import { sha256Hex } from './lib/secrets.ts';
import { closeDeps, createDeps } from './runtime.ts';

interface Service {
  deps: Deps;
  app: App;
}

let database: Database;
let first: Service;
let second: Service;

async function service(dataDir: string): Promise<Service> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { database, clock: new ManualClock() });
  const app = await buildApp(deps, { logger: false });
  await app.ready();
  return { deps, app };
}

beforeAll(async () => {
  // The credential cache exists on the embedded database only: both services share one in-memory PGlite.
  database = await openDatabase({ databaseUrl: null, dataDir: null });
  // One DATA_DIR, so both load the same master key (and sign session cookies alike).
  const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-two-services-'));
  first = await service(dataDir);
  second = await service(dataDir);
});

afterAll(async () => {
  await first.app.close();
  await second.app.close();
  await first.deps.workSignal.close();
  await closeDeps(second.deps);
});

function me(target: Service, headers: Record<string, string>) {
  return target.app.inject({ url: '/api/v1/me', headers });
}

describe('two services in one process', () => {
  it('cache credentials each for itself: a key revoked in one was never cached in the other', async () => {
    const caller = await signup(first.app);
    const key = await apiKeyOf(first.app, caller);
    const hash = sha256Hex(key.plaintext);
    const firstCache = first.deps.credentialCache;
    const secondCache = second.deps.credentialCache;
    if (!firstCache || !secondCache) throw new Error('the embedded database has a credential cache');
    expect(firstCache).not.toBe(secondCache);

    expect((await me(first, key.headers)).statusCode).toBe(200);
    expect(firstCache.get(hash)?.id).toBe(key.key.id);
    expect(secondCache.get(hash)).toBeUndefined();

    const revoked = await first.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: caller.headers,
    });
    expect(revoked.statusCode).toBe(200);
    expect(firstCache.get(hash)).toBeUndefined();
    // The other service reads the revocation from the database: it had nothing cached to go stale.
    expect((await me(second, key.headers)).statusCode).toBe(401);
    expect((await me(first, key.headers)).statusCode).toBe(401);
  });

  it('evict in their own cache only: a revocation in one leaves the other holding what it had resolved', async () => {
    const caller = await signup(first.app);
    const key = await apiKeyOf(first.app, caller);
    const hash = sha256Hex(key.plaintext);
    expect((await me(first, key.headers)).statusCode).toBe(200);
    expect((await me(second, key.headers)).statusCode).toBe(200);
    await second.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.key.id}`, headers: caller.headers });
    expect(second.deps.credentialCache?.get(hash)).toBeUndefined();
    // Why the cache is for one process owning its database: a second one would not hear of the revocation.
    expect(first.deps.credentialCache?.get(hash)?.id).toBe(key.key.id);
  });

  it('keep their own decrypted balances and fee estimates', async () => {
    first.deps.balanceCache.set('token:address:handle', 42n);
    expect(first.deps.balanceCache.get('token:address:handle')).toBe(42n);
    expect(second.deps.balanceCache.get('token:address:handle')).toBeUndefined();

    const fees = (baseFeePerGas: bigint) => async () => ({ baseFeePerGas, maxPriorityFeePerGas: 1n });
    expect((await first.deps.feeCache.get(fees(10n))).baseFeePerGas).toBe(10n);
    expect((await second.deps.feeCache.get(fees(20n))).baseFeePerGas).toBe(20n);
    // Within its second, each service answers from its own quote.
    expect((await first.deps.feeCache.get(fees(30n))).baseFeePerGas).toBe(10n);
  });

  it('wake only their own workers', async () => {
    const woken: string[] = [];
    const stopFirst = first.deps.workSignal.subscribe('transactions', () => woken.push('first'));
    const stopSecond = second.deps.workSignal.subscribe('transactions', () => woken.push('second'));
    first.deps.workSignal.notify('transactions');
    expect(woken).toEqual(['first']);
    stopFirst();
    stopSecond();
  });
});
