import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { NetworkName } from './adapters/chain/types.ts';

export type Environment = 'sandbox' | 'production';

export interface RateLimitSettings {
  writesPerMinute: number;
  readsPerMinute: number;
  loginFailuresPer15Min: number;
  claimAttemptsPer15Min: number;
  signupsPerHour: number;
  previewsPerMinute: number;
  /** `POST /auth/password/forgot` per IP (the per-address limit is fixed: a few an hour). */
  passwordResetRequestsPerHour: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly network: NetworkName;
  readonly environment: Environment;
  /** `RPC_URL`: one JSON-RPC URL, or several separated by commas, in order of preference (failover). */
  readonly rpcUrl: string | null;
  /** How long one provider has to answer one request before the next provider is asked. */
  readonly rpcTimeoutMs: number;
  readonly publicOrigin: string;
  readonly masterKey: string | null;
  readonly sweepSecret: string | null;
  /** Bearer token of `/metrics`: required when set, and in production (unset there, `/metrics` answers 503). */
  readonly metricsToken: string | null;
  /** Where a `worker` process serves its own `/metrics` (it serves no API); null: nowhere. */
  readonly workerMetricsPort: number | null;
  /**
   * Which proxies' `X-Forwarded-For` entries to believe (Fastify's `trustProxy`): `false`; a hop count (the client
   * is the entry that many hops from the right); or the proxies' own addresses and CIDR ranges.
   */
  readonly trustProxy: false | number | string[];
  readonly signup: 'open' | 'closed';
  readonly zamaApiKey: string | null;
  readonly lobApiKey: string | null;
  /** Account emails over SMTP (`smtp://user:pass@host:587`); unset on `local`/`devnet` = the local mailbox. */
  readonly smtpUrl: string | null;
  /** The `From:` of account emails. */
  readonly emailFrom: string;
  readonly operatorPrivateKey: string | null;
  readonly contracts: {
    stablecoin?: string;
    confidentialToken?: string;
    letterVault?: string;
    transferBatcher?: string;
  };
  /** Return address printed on mailed letters (the real print provider needs one). */
  readonly mailFrom: {
    name: string;
    company: string | null;
    line1: string;
    line2: string | null;
    city: string;
    region: string;
    postal: string;
    country: string;
  } | null;
  readonly logLevel: string;
  readonly rateLimits: RateLimitSettings;
  /** Faucet: default amount and rolling 24 h cap per account, in public-stablecoin units (decimal strings). */
  readonly faucet: { defaultAmount: string; capPer24h: string; gasTopUp: string };
  /**
   * `transientRetryHours`: how long after its creation a row that moved nothing keeps retrying transient faults.
   * `leaseMs`: how long a claimed row is a worker's; renewed while driven, so it bounds takeover after a crash.
   */
  readonly worker: {
    enabled: boolean;
    pollMs: number;
    concurrency: number;
    transientRetryHours: number;
    leaseMs: number;
    /** Confidential transfers ready together share one transaction and one input proof, up to this many. */
    batchMax: number;
    /** How long the first transfer of a batch waits for others to join it. */
    batchWindowMs: number;
  };
  /**
   * The chain follower (money received): `confirmations` is how many blocks a block must have on top before its
   * logs are recorded (a reorg on a real network cannot then undo them); `pollMs` how often it reads the chain.
   */
  readonly follower: { confirmations: number; pollMs: number };
  /**
   * How the worker prices, replaces and confirms its transactions (docs/ARCHITECTURE.md, "Fees, replacement and
   * confirmations"). Fees are EIP-1559: `maxFeePerGas` = the base fee × `multiplierPercent`/100 + the chain's
   * priority fee, never above `maxFeePerGas` (wei). An attempt not mined after `stuckAfterBlocks` blocks, or
   * `stuckAfterMs` where blocks do not come, is replaced at the same nonce with both fees raised by ≥ 12.5 %.
   * `confirmations`: blocks (its own included) a mined transaction needs before its row is CONFIRMED/SETTLED.
   */
  readonly chainPolicy: {
    multiplierPercent: bigint;
    maxFeePerGas: bigint;
    stuckAfterBlocks: number;
    stuckAfterMs: number;
    confirmations: number;
  };
  /** The worker's reconciliation (src/modules/reconcile): every `intervalMinutes`, 0 never. */
  readonly reconcile: { intervalMinutes: number };
  readonly version: string;
}

class ConfigError extends Error {
  override name = 'ConfigError';
}

function text(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = 2 ** 31): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined || raw === null) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

/**
 * `TRUST_PROXY`: `off` (default); `on` = one proxy in front; a number of proxy hops; or a comma-separated list of
 * the proxies' addresses / CIDR ranges. Never "trust every hop": the leftmost `X-Forwarded-For` entry is whatever
 * the client wrote, and trusting it would let a client pick its own address for every per-IP limit.
 */
function trustedProxies(env: NodeJS.ProcessEnv): false | number | string[] {
  const raw = text(env, 'TRUST_PROXY');
  if (raw === null) return false;
  const lower = raw.toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(lower)) return false;
  if (['1', 'true', 'yes', 'on'].includes(lower)) return 1;
  if (/^\d+$/.test(raw)) return integer(env, 'TRUST_PROXY', 1, 1, 32);
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...extra] = entry.split('/');
    const family = isIP(address ?? '');
    const bits = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra.length > 0) {
      throw new ConfigError(
        `TRUST_PROXY must be off, on, a hop count, or proxy addresses/CIDR ranges, got "${entry}"`,
      );
    }
  }
  return entries;
}

/** A non-negative decimal (`"2"`, `"1.25"`, `"150.5"`) in units of 10^-`decimals`, as a bigint: no float. */
function decimal(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: string,
  decimals: number,
  min: bigint,
): bigint {
  const raw = text(env, name) ?? fallback;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(raw);
  if (!match || (match[2]?.length ?? 0) > decimals) {
    throw new ConfigError(`${name} must be a decimal number with at most ${decimals} decimals, got "${raw}"`);
  }
  const value =
    BigInt(match[1] ?? '0') * 10n ** BigInt(decimals) + BigInt((match[2] ?? '').padEnd(decimals, '0'));
  if (value < min) throw new ConfigError(`${name} is too small: "${raw}"`);
  return value;
}

/**
 * The fee cap per network (gwei): generous on the embedded chain and the devnet (nothing of value), a few times a
 * busy day's base fee on mainnet, and high on sepolia, whose base fee spikes far more than mainnet's.
 */
const MAX_FEE_GWEI: Record<NetworkName, string> = {
  local: '10000',
  devnet: '10000',
  sepolia: '2000',
  mainnet: '300',
};

/** Blocks (own included) before a row is CONFIRMED: the embedded chain and the devnet never reorganize. */
const DEFAULT_CONFIRMATIONS: Record<NetworkName, number> = { local: 0, devnet: 0, sepolia: 3, mainnet: 12 };

/** When blocks do not come (the embedded chain mines on demand), an attempt is stuck after this long. */
const STUCK_AFTER_SECONDS: Record<NetworkName, number> = { local: 10, devnet: 10, sepolia: 60, mainnet: 60 };

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function packageVersion(): string {
  const path = new URL('../package.json', import.meta.url);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version : '0.0.0';
}

/** Parses the environment once, fails fast on a malformed value, and freezes the result. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const network = oneOf(env, 'NETWORK', ['local', 'devnet', 'sepolia', 'mainnet'] as const, 'local');
  const publicOrigin = (text(env, 'PUBLIC_ORIGIN') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicOrigin);
  } catch {
    throw new ConfigError(`PUBLIC_ORIGIN must be an absolute origin, got "${publicOrigin}"`);
  }
  const config: Config = {
    port,
    host: text(env, 'HOST') ?? '127.0.0.1',
    dataDir: resolve(text(env, 'DATA_DIR') ?? './data'),
    databaseUrl: text(env, 'DATABASE_URL'),
    network,
    environment: network === 'mainnet' ? 'production' : 'sandbox',
    rpcUrl: text(env, 'RPC_URL'),
    rpcTimeoutMs: integer(env, 'RPC_TIMEOUT_MS', 10_000, 100, 600_000),
    publicOrigin,
    masterKey: text(env, 'MASTER_KEY'),
    sweepSecret: text(env, 'SWEEP_SECRET'),
    metricsToken: text(env, 'METRICS_TOKEN'),
    workerMetricsPort:
      text(env, 'WORKER_METRICS_PORT') === null ? null : integer(env, 'WORKER_METRICS_PORT', 0, 1, 65535),
    trustProxy: trustedProxies(env),
    signup: oneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'open'),
    zamaApiKey: text(env, 'ZAMA_API_KEY'),
    lobApiKey: text(env, 'LOB_API_KEY'),
    smtpUrl: text(env, 'SMTP_URL'),
    emailFrom: text(env, 'EMAIL_FROM') ?? `sealpay <no-reply@${new URL(publicOrigin).hostname}>`,
    operatorPrivateKey: text(env, 'OPERATOR_PRIVATE_KEY'),
    contracts: {
      ...(text(env, 'STABLECOIN_ADDRESS') ? { stablecoin: text(env, 'STABLECOIN_ADDRESS') as string } : {}),
      ...(text(env, 'CONFIDENTIAL_TOKEN_ADDRESS')
        ? { confidentialToken: text(env, 'CONFIDENTIAL_TOKEN_ADDRESS') as string }
        : {}),
      ...(text(env, 'LETTER_VAULT_ADDRESS')
        ? { letterVault: text(env, 'LETTER_VAULT_ADDRESS') as string }
        : {}),
      ...(text(env, 'TRANSFER_BATCHER_ADDRESS')
        ? { transferBatcher: text(env, 'TRANSFER_BATCHER_ADDRESS') as string }
        : {}),
    },
    mailFrom: text(env, 'MAIL_FROM_LINE1')
      ? {
          name: text(env, 'MAIL_FROM_NAME') ?? 'sealpay',
          company: text(env, 'MAIL_FROM_COMPANY'),
          line1: text(env, 'MAIL_FROM_LINE1') as string,
          line2: text(env, 'MAIL_FROM_LINE2'),
          city: text(env, 'MAIL_FROM_CITY') ?? '',
          region: text(env, 'MAIL_FROM_REGION') ?? '',
          postal: text(env, 'MAIL_FROM_POSTAL') ?? '',
          country: text(env, 'MAIL_FROM_COUNTRY') ?? 'US',
        }
      : null,
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    rateLimits: {
      writesPerMinute: integer(env, 'RATE_LIMIT_WRITES_PER_MINUTE', 30, 1),
      readsPerMinute: integer(env, 'RATE_LIMIT_READS_PER_MINUTE', 120, 1),
      loginFailuresPer15Min: integer(env, 'RATE_LIMIT_LOGIN_PER_15_MINUTES', 10, 1),
      claimAttemptsPer15Min: integer(env, 'RATE_LIMIT_CLAIMS_PER_15_MINUTES', 10, 1),
      signupsPerHour: integer(env, 'RATE_LIMIT_SIGNUPS_PER_HOUR', 30, 1),
      previewsPerMinute: integer(env, 'RATE_LIMIT_PREVIEWS_PER_MINUTE', 30, 1),
      passwordResetRequestsPerHour: integer(env, 'RATE_LIMIT_PASSWORD_RESETS_PER_HOUR', 10, 1),
    },
    faucet: {
      defaultAmount: text(env, 'FAUCET_DEFAULT_AMOUNT') ?? '100.00',
      capPer24h: '1000',
      gasTopUp: text(env, 'FAUCET_GAS_TOP_UP') ?? '0.05',
    },
    worker: {
      enabled: flag(env, 'WORKER', true),
      pollMs: integer(env, 'WORKER_POLL_MS', 100, 10),
      concurrency: integer(env, 'WORKER_CONCURRENCY', 8, 1, 256),
      transientRetryHours: integer(env, 'TRANSIENT_RETRY_HOURS', 24, 1, 24 * 365),
      leaseMs: integer(env, 'WORKER_LEASE_MS', 120_000, 3000),
      // 32 euint64 fill the 2048 bits one input proof carries.
      batchMax: integer(env, 'WORKER_BATCH_MAX', 32, 1, 32),
      batchWindowMs: integer(env, 'WORKER_BATCH_WINDOW_MS', 200, 0, 10_000),
    },
    follower: {
      // The embedded chain and the devnet never reorganize; real networks can, by a few blocks.
      confirmations: integer(env, 'CONFIRMATIONS', DEFAULT_CONFIRMATIONS[network], 0, 10_000),
      pollMs: integer(env, 'FOLLOWER_POLL_MS', 1000, 10),
    },
    chainPolicy: {
      multiplierPercent: decimal(env, 'FEE_MULTIPLIER', '2', 2, 100n),
      maxFeePerGas: decimal(env, 'MAX_FEE_PER_GAS_GWEI', MAX_FEE_GWEI[network], 9, 1n),
      stuckAfterBlocks: integer(env, 'STUCK_AFTER_BLOCKS', 3, 1, 10_000),
      stuckAfterMs: integer(env, 'STUCK_AFTER_SECONDS', STUCK_AFTER_SECONDS[network], 1, 86_400) * 1000,
      confirmations: integer(env, 'CONFIRMATIONS', DEFAULT_CONFIRMATIONS[network], 0, 10_000),
    },
    reconcile: { intervalMinutes: integer(env, 'RECONCILE_INTERVAL_MINUTES', 60, 0, 7 * 24 * 60) },
    version: packageVersion(),
  };
  if (network !== 'local' && !config.masterKey) {
    throw new ConfigError('MASTER_KEY is required outside the embedded network');
  }
  return Object.freeze(config);
}

/** `sealpay devnet`'s own settings: it needs none of the service's (no database, no master key). */
export interface DevnetSettings {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
}

export function loadDevnetSettings(env: NodeJS.ProcessEnv = process.env): DevnetSettings {
  return Object.freeze({
    dataDir: resolve(text(env, 'DATA_DIR') ?? './data'),
    host: text(env, 'DEVNET_HOST') ?? '127.0.0.1',
    port: integer(env, 'DEVNET_PORT', 8545, 0, 65535),
  });
}

export { ConfigError };
