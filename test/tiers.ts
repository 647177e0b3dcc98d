/**
 * The test suite's tiers: one vitest project each (`vitest.config.ts`), named by what their files need. Every
 * `*.test.ts` of `npm test` is in exactly one tier (`test/tiers.test.ts` checks it), so a file that fits no tier is
 * a failure, not a file that silently never runs.
 *
 * - `unit`: nothing but the code: no database, no chain, no child process (temporary files and a loopback server
 *   standing in for a provider's API are allowed). Seconds.
 * - `engine`: the embedded chain or database engines alone (anvil, a devnet, PGlite's thread, the runtime on its own
 *   PGlite): no test database.
 * - `api`: the test database (PGlite from the run's migrated image, or PostgreSQL from the run's template
 *   database), requests through `app.inject`; no chain.
 * - `chain`: the test database and a chain: the embedded one, each file on a copy of the chain the run deployed
 *   once (or a devnet child, for the few files about one); the examples run as child scripts against it.
 * - `process`: the service as child processes (`sealpay start`, `sealpay devnet`, the examples), killed with -9.
 *
 * The PostgreSQL pass (`npm run test:pg`) runs the tiers whose every file opens the test database (`DATABASE_TIERS`):
 * the others give the same result on either database, and run once.
 */

export const TIERS = {
  unit: [
    'clients/typescript/test/generated.test.ts',
    'src/adapters/chain/build.test.ts',
    'src/adapters/chain/fees.test.ts',
    'src/adapters/chain/journal.test.ts',
    'src/adapters/chain/remote.test.ts',
    'src/adapters/confidential/decryption-chunks.test.ts',
    'src/adapters/confidential/fhevm-db.test.ts',
    'src/adapters/confidential/serial-queries.test.ts',
    'src/adapters/mail/lob.test.ts',
    'src/adapters/mail/local.test.ts',
    'src/db/migrations.test.ts',
    'src/http/errors.test.ts',
    'src/lib/*.test.ts',
    'src/modules/letters/letter-pdf.test.ts',
    'src/modules/webhooks/address.test.ts',
    'src/operations.test.ts',
    'src/structure.test.ts',
    'test/documented-errors/gaps.test.ts',
    'test/tiers.test.ts',
    'test/vitest-crashes.test.ts',
    'test/web-state.test.ts',
  ],
  engine: [
    'src/adapters/chain/contracts.test.ts',
    'src/adapters/chain/dev-accounts.test.ts',
    'src/adapters/chain/dev-methods.test.ts',
    'src/adapters/chain/embedded.test.ts',
    'src/adapters/chain/hardhat-reverts.test.ts',
    'src/adapters/chain/jsonrpc.test.ts',
    'src/adapters/chain/providers.test.ts',
    'src/adapters/chain/snapshot.test.ts',
    'src/adapters/confidential/fhevm-host.test.ts',
    'src/db/pglite-thread.test.ts',
    'src/runtime.test.ts',
  ],
  api: [
    'clients/typescript/test/sandbox.test.ts',
    'src/adapters/email/email.test.ts',
    'src/db/indexes.test.ts',
    'src/db/locks.test.ts',
    'src/db/pool.test.ts',
    'src/db/work-signal.test.ts',
    'src/http/conventions.test.ts',
    'src/http/host-check.test.ts',
    'src/http/input.test.ts',
    'src/http/logger.test.ts',
    'src/http/openapi.test.ts',
    'src/http/rate-limit.test.ts',
    'src/modules/accounts/accounts.test.ts',
    'src/modules/keys/keys.test.ts',
    'src/modules/network/configuration.test.ts',
    'src/modules/notifications/mailbox.test.ts',
    'src/modules/recovery/password-reset.test.ts',
    'src/modules/sandbox/clock.test.ts',
    'src/modules/security/*.test.ts',
    'src/modules/transactions/list-cache.test.ts',
    'src/modules/transactions/paging.test.ts',
    'src/modules/transactions/production.test.ts',
    'src/modules/web/web.test.ts',
    'src/worker/outbox.repository.test.ts',
    'test/hardening/authorization.test.ts',
    'test/hardening/fuzz.test.ts',
  ],
  chain: [
    'clients/typescript/test/client.test.ts',
    'src/http/metrics.test.ts',
    'src/modules/incoming/follower.test.ts',
    'src/modules/keys/scopes.test.ts',
    'src/modules/letters/letters.test.ts',
    'src/modules/receipts/receipts.test.ts',
    'src/modules/reconcile/reconcile.test.ts',
    'src/modules/sandbox/triggers.test.ts',
    'src/modules/transactions/money.test.ts',
    'src/modules/transactions/operations/*.test.ts',
    'src/modules/wallets/*.test.ts',
    'src/modules/webhooks/webhooks.test.ts',
    'src/worker/chain-policy.test.ts',
    'src/worker/lapsed-lease.test.ts',
    'src/worker/nonce-repair.test.ts',
    'src/worker/worker.test.ts',
    'test/devnet/reconcile.test.ts',
    'test/examples.test.ts',
    'test/faults/approve-fault.test.ts',
    'test/faults/chain-outage-reads.test.ts',
    'test/faults/grant-fault.test.ts',
    'test/faults/injected.test.ts',
    'test/faults/rpc-outage.test.ts',
    'test/global/fixtures.test.ts',
    'test/hardening/secret-scan.test.ts',
    'test/scaleout/api-processes.test.ts',
  ],
  process: [
    'test/devnet/devnet.test.ts',
    'test/devnet/dev-methods.test.ts',
    'test/faults/batch-kill9.test.ts',
    'test/faults/chain-engine.test.ts',
    'test/faults/events-kill9.test.ts',
    'test/faults/kill9.test.ts',
    'test/faults/operator.test.ts',
    'test/hardening/data-dir.test.ts',
    'test/hardening/production-run.test.ts',
  ],
} as const satisfies Record<string, readonly string[]>;

export type Tier = keyof typeof TIERS;

/** The tiers the PostgreSQL pass runs: each of their files opens the test database. */
export const DATABASE_TIERS: readonly Tier[] = ['api', 'chain'];

/**
 * Every file the tiers must cover. The CI-only runs (scale-out, public chain, compatibility) name their files
 * otherwise (`*.kill9.ts`, `*.chain.ts`, `*.compat.ts`) and have configs of their own.
 */
export const SUITE_FILES = ['src/**/*.test.ts', 'test/**/*.test.ts', 'clients/**/*.test.ts'];
