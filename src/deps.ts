import type { FeeQuote } from './adapters/chain/tx.ts';
import type { Network } from './adapters/chain/types.ts';
import type { EmailSender } from './adapters/email/index.ts';
import type { PrintProvider } from './adapters/mail/index.ts';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type {
  TransactionDirection,
  TransactionRow,
  TransactionType,
  UserRow,
  WalletRow,
} from './db/schema/index.ts';
import type { DatabaseClock } from './db/test-clock.ts';
import type { WorkSignal } from './db/work-signal.ts';
import type { BoundedMap, ExpiringValue } from './lib/cache.ts';
import type { CredentialCache } from './lib/credential-cache.ts';
import type { TransactionErrorCode } from './lib/errors.ts';
import type { Logger } from './lib/logger.ts';
import type { ServiceMetrics } from './lib/metrics.ts';
import type { AccountPageCache } from './lib/page-cache.ts';
import type { RateLimitStore } from './lib/rate-limit.ts';
import type { Keyring } from './lib/secrets.ts';
import type { Clock } from './lib/time.ts';

/** Everything the feature modules need from the outside, built once by the composition root (src/runtime.ts). */
export interface Deps {
  readonly config: Config;
  readonly database: Database;
  readonly keyring: Keyring;
  /**
   * The service's time: everything that reads time reads it here (expiry, sessions, rate-limit and faucet windows,
   * retry schedules). In the sandbox it is the test clock (`testClock`), real time plus an offset that only grows.
   */
  readonly clock: Clock;
  /** The sandbox's test clock (the same object as `clock`); null in production, where time is never moved. */
  readonly testClock: DatabaseClock | null;
  /**
   * Real time, whatever the test clock says: TOTP windows (an authenticator app knows nothing of the test clock)
   * and webhook signatures' timestamps (a receiver checks them against its own clock).
   */
  readonly wallClock: Clock;
  readonly rateLimits: RateLimitStore;
  /** Null while the chain is not part of this process (tests of the API alone). */
  readonly network: Network | null;
  /** The print provider (local sandbox or Lob); null where none is configured (`503 mail_provider_not_configured`). */
  readonly mail: PrintProvider | null;
  /**
   * Account emails (reset links, security notices): SMTP, or the local mailbox on the sandbox networks; null where
   * neither is configured (nothing is queued then).
   */
  readonly email: EmailSender | null;
  /** Wakes workers when work is queued: in this process, and across processes on PostgreSQL (LISTEN/NOTIFY). */
  readonly workSignal: WorkSignal;
  /** What every transaction type is and does (src/operations.ts): the worker and the inline driver run these. */
  readonly operations: Operations;
  /** Resolved API keys and sessions, on the embedded database only (null on PostgreSQL: every request reads it). */
  readonly credentialCache: CredentialCache<UserRow> | null;
  /** `GET /transactions` answers while the account's transactions are unchanged: embedded database only. */
  readonly transactionPages: AccountPageCache | null;
  /**
   * Decrypted confidential balances by token, address and handle. A handle names one immutable ciphertext, so a
   * cached decryption never goes stale: a balance that changes gets a new handle.
   */
  readonly balanceCache: BoundedMap<string, bigint>;
  /** What never changes about a wallet, by `userId\nwalletId` (see `ownWalletIdentity`). */
  readonly walletIdentities: BoundedMap<string, WalletIdentity>;
  /** The chain's fee quote (base fee and tip, two calls), kept a second: the worker signs many transactions a second. */
  readonly feeCache: ExpiringValue<FeeQuote>;
  /** The process's counters (input proofs, encrypted amounts, batch sizes), shown on `/metrics`. */
  readonly metrics: ServiceMetrics;
}

/** What an operation works with: the dependencies, and the chain (the worker runs only where there is one). */
export interface OperationContext {
  deps: Deps;
  network: Network;
  /** Where the worker logs what the chain did (a reorg); absent where no one listens. */
  logger?: Logger;
}

/**
 * One transaction type: every fact about it (its direction, what it does to its wallet and to a key's spend limit,
 * how clients queue it, its failure code) and its state machine. `run` advances a leased row as far as it can go now (it is called again,
 * from the row's status and step, after a crash or a transient fault); `onFailure` changes what else must change
 * when a row of the type is FAILED (a letter leg puts its letter back).
 */
export interface Operation {
  /** The token symbol a row of this type carries. */
  readonly token: string;
  /** The row's `errorCode` when it fails and the failure names no code of its own. */
  readonly failureCode: TransactionErrorCode;
  /** Which way a queued row of the type moves money for its wallet: `in` (paid into it) or `out`. */
  readonly direction: TransactionDirection;
  /**
   * Whether a row of the type brings its wallet confidential money that later rows may spend: a batch holds back a
   * wallet's later rows until such a row ends (`findRowsAwaitingEarlierCredits`).
   */
  readonly creditsWallet: boolean;
  /** Whether its amount leaves the account through the API key that asked for it (counted by the key's spend limit). */
  readonly spendsKeyLimit: boolean;
  /** Whether it is a letter's leg, moving money into or out of the letters' vault (reconciling the vault waits for it). */
  readonly letterLeg: boolean;
  /**
   * How a client queues it directly (absent for a type that only a letter queues): its route under the API prefix
   * (`/mint`; the routes register at these paths), and the check the request is refused on before the row is queued
   * (the worker checks again before it signs).
   */
  readonly queue?: {
    readonly path: `/${string}`;
    check?(deps: Deps, wallet: WalletIdentity, amount: bigint): Promise<void>;
  };
  run(ctx: OperationContext, row: TransactionRow): Promise<void>;
  /**
   * Rows of the type that are ready together and may share one chain transaction (and one input proof): the
   * worker leases the rows that `canJoin`, waits a short window for more, and hands them to `run`, which advances
   * each row's own state and returns those that must go alone (through the `run` above). A row a batch took keeps
   * being advanced by the `run` above after a crash: that `run` resumes the batch.
   */
  readonly batch?: {
    canJoin(row: TransactionRow): boolean;
    run(ctx: OperationContext, rows: TransactionRow[]): Promise<TransactionRow[]>;
  };
  onFailure?(ctx: OperationContext, row: TransactionRow): Promise<void>;
  /**
   * The row's mined transaction was reorganized away after its confirmations (a reorg deeper than
   * `CONFIRMATIONS`, seen by `checkFinality`): what must be looked at again (a letter leg marks its letter
   * `needsReview`). The worker has logged and counted it already.
   */
  onDeepReorg?(ctx: OperationContext, row: TransactionRow): Promise<void>;
}

/** One operation per transaction type: a type without one does not compile. */
export type Operations = Readonly<Record<TransactionType, Operation>>;

/** The types whose descriptor says `yes`, in the registry's order: every per-type list is derived here. */
export function typesWhere<Type extends string = TransactionType>(
  operations: Readonly<Record<Type, Operation>>,
  yes: (operation: Operation) => boolean,
): Type[] {
  return (Object.keys(operations) as Type[]).filter((type) => yes(operations[type]));
}

/** What never changes about a wallet: whose it is, its address, its custody (wallets are never deleted). */
export type WalletIdentity = Pick<WalletRow, 'id' | 'userId' | 'address' | 'type'>;
