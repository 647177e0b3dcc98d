import type { ProviderObserver } from './adapters/chain/providers.ts';
import type { FeeQuote } from './adapters/chain/tx.ts';
import type { ConfidentialRail, ContractAddresses, Network } from './adapters/chain/types.ts';
import { createEmailSender } from './adapters/email/index.ts';
import { createPrintProvider } from './adapters/mail/index.ts';
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/client.ts';
import { PostgresRateLimitStore } from './db/rate-limits.ts';
import type { UserRow } from './db/schema/index.ts';
import { DatabaseClock } from './db/test-clock.ts';
import { createWorkSignal } from './db/work-signal.ts';
import type { Deps } from './deps.ts';
import { BoundedMap, ExpiringValue } from './lib/cache.ts';
import { CredentialCache } from './lib/credential-cache.ts';
import { createServiceMetrics, type ServiceMetrics } from './lib/metrics.ts';
import { AccountPageCache } from './lib/page-cache.ts';
import { MemoryRateLimitStore } from './lib/rate-limit.ts';
import { loadKeyring } from './lib/secrets.ts';
import { type Clock, systemClock } from './lib/time.ts';
import { readRun } from './modules/reconcile/reconcile.repository.ts';
import { RECONCILE_JOB } from './modules/reconcile/reconcile.service.ts';
import { operations } from './operations.ts';

/** Decrypted balances kept per process: bounded so the cache cannot grow without limit. */
const MAX_CACHED_BALANCES = 10_000;
const MAX_CACHED_WALLETS = 10_000;

export interface RuntimeOptions {
  /** Starts the chain adapter (embedded network or RPC). Off for commands that only touch the database. */
  network?: boolean;
  clock?: Clock;
  database?: Database;
  logger?: {
    info: (...args: never[]) => void;
    warn: (...args: never[]) => void;
    error: (...args: never[]) => void;
  };
}

/** Opens the database (migrated), the keyring and, when asked, the network: the dependencies of every command. */
export async function createDeps(config: Config, options: RuntimeOptions = {}): Promise<Deps> {
  const database =
    options.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      // The pool's own message only ("Connection terminated unexpectedly"): never the connection string.
      onPoolError: (error) => {
        const warn = (options.logger?.warn ?? console.warn) as (message: string) => void;
        warn(`database connection dropped (${error.message}); the pool replaces it`);
      },
    }));
  await database.migrate();
  const keyring = loadKeyring({
    masterKey: config.masterKey,
    previous: process.env.MASTER_KEY_PREVIOUS ?? null,
    dataDir: config.dataDir,
  });
  const rateLimits =
    database.kind === 'postgres' ? new PostgresRateLimitStore(database.db) : new MemoryRateLimitStore();
  // The reconciliation's gauges read the last run from the database, whichever worker made it.
  const metrics = createServiceMetrics(() => readRun(database.db, RECONCILE_JOB));
  let network: Network | null = null;
  if (options.network) {
    // Loaded on demand: commands without a chain never pay for the EVM and the fhEVM stack.
    const { createNetwork } = await import('./adapters/chain/index.ts');
    network = await createNetwork({
      network: config.network,
      dataDir: config.dataDir,
      ...(config.rpcUrl ? { rpcUrl: config.rpcUrl } : {}),
      rpcTimeoutMs: config.rpcTimeoutMs,
      rpcObserver: providerMetrics(metrics),
      ...(config.zamaApiKey ? { zamaApiKey: config.zamaApiKey } : {}),
      ...(config.operatorPrivateKey ? { operatorPrivateKey: config.operatorPrivateKey } : {}),
      contracts: config.contracts as Partial<ContractAddresses>,
      ...(config.contracts.transferBatcher ? { transferBatcher: config.contracts.transferBatcher } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }
  if (network) network = withCountedProofs(network, metrics);
  const wallClock = options.clock ?? systemClock;
  // The test clock lives in the database: every process of a sandbox deployment sees the same time.
  const testClock =
    config.environment === 'sandbox'
      ? await DatabaseClock.open(database.db, wallClock, { shared: database.kind === 'postgres' })
      : null;
  const clock: Clock = testClock ?? wallClock;
  const mail = createPrintProvider({
    network: config.network,
    lobApiKey: config.lobApiKey,
    dataDir: config.dataDir,
    now: () => clock.now(),
    ...(config.mailFrom ? { sender: config.mailFrom } : {}),
  });
  const email = createEmailSender({
    network: config.network,
    smtpUrl: config.smtpUrl,
    from: config.emailFrom,
    dataDir: config.dataDir,
    now: () => clock.now(),
  });
  const workSignal = createWorkSignal(database, {
    warn: (object, message) =>
      options.logger
        ? (options.logger.warn as (o: object, m: string) => void)(object, message)
        : console.warn(`sealpay: ${message}`),
  });
  // One process owns the embedded database and sees every change it must evict for; PostgreSQL is shared.
  const credentialCache = database.kind === 'pglite' ? new CredentialCache<UserRow>() : null;
  return {
    config,
    database,
    keyring,
    clock,
    testClock,
    wallClock,
    rateLimits,
    network,
    mail,
    email,
    workSignal,
    operations,
    credentialCache,
    transactionPages: database.transactionChanges
      ? new AccountPageCache(database.transactionChanges.subscribe)
      : null,
    balanceCache: new BoundedMap<string, bigint>(MAX_CACHED_BALANCES),
    walletIdentities: new BoundedMap(MAX_CACHED_WALLETS),
    // The estimate's max fee carries viem's margin over the base fee, which cannot rise that far within a second
    // (at most 12.5 % per block).
    feeCache: new ExpiringValue<FeeQuote>(1000),
    metrics,
  };
}

/** The JSON-RPC providers' requests, failures, latency and standing, as the service's metrics. */
function providerMetrics(metrics: ServiceMetrics): ProviderObserver {
  const labels = (provider: { position: number; host: string }) => ({
    provider: String(provider.position),
    host: provider.host,
  });
  return {
    request({ provider, method, seconds, failure }) {
      metrics.rpcRequests.inc({ ...labels(provider), method });
      metrics.rpcDuration.observe(labels(provider), seconds);
      if (failure) metrics.rpcErrors.inc({ ...labels(provider), reason: failure });
    },
    availability(provider, available) {
      metrics.rpcAvailable.set(labels(provider), available ? 1 : 0);
    },
  };
}

/**
 * The network with a rail that counts every input proof it builds and the amounts in it, whichever module asks
 * (a Proxy: a remote network's settings are getters that must stay lazy).
 */
function withCountedProofs(network: Network, metrics: ServiceMetrics): Network {
  const { rail } = network;
  const counted: ConfidentialRail = {
    kind: rail.kind,
    async encryptAmount(params) {
      const encrypted = await rail.encryptAmount(params);
      metrics.inputProofs.inc();
      metrics.encryptedAmounts.inc();
      return encrypted;
    },
    async encryptAmounts(params) {
      const encrypted = await rail.encryptAmounts(params);
      metrics.inputProofs.inc();
      metrics.encryptedAmounts.inc(params.amounts.length);
      return encrypted;
    },
    userDecrypt: (params) => rail.userDecrypt(params),
    userDecryptMany: (params) => rail.userDecryptMany(params),
    publicDecrypt: (handles) => rail.publicDecrypt(handles),
  };
  return new Proxy(network, {
    get: (target, property) => (property === 'rail' ? counted : Reflect.get(target, property, target)),
  });
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.workSignal.close();
  await deps.network?.close();
  await deps.email?.close();
  await deps.database.close();
}
