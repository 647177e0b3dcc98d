import type { FastifyBaseLogger } from 'fastify';
import type { Network } from './adapters/chain/types.ts';
import type { PrintProvider } from './adapters/mail/index.ts';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { RateLimitStore } from './http/rate-limit.ts';
import type { Keyring } from './lib/secrets.ts';
import type { Clock } from './lib/time.ts';
import type { WorkSignal } from './worker/work-signal.ts';

/** Everything the feature modules need from the outside, built once by the composition root (src/main.ts). */
export interface Deps {
  readonly config: Config;
  readonly database: Database;
  readonly keyring: Keyring;
  readonly clock: Clock;
  readonly rateLimits: RateLimitStore;
  /** Null while the chain is not part of this process (tests of the API alone). */
  readonly network: Network | null;
  /** The print provider (local sandbox or Lob); null where none is configured (`503 mail_provider_not_configured`). */
  readonly mail: PrintProvider | null;
  /** Wakes workers when work is queued: in this process, and across processes on PostgreSQL (LISTEN/NOTIFY). */
  readonly workSignal: WorkSignal;
  readonly logger?: FastifyBaseLogger;
}
