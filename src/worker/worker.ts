import type { TransactionRow } from '../db/schema/index.ts';
import type { Deps, OperationContext } from '../deps.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import {
  findTransactionById,
  leaseDueRows,
  leaseRow,
  releaseAllLeases,
  updateLeased,
} from './outbox.repository.ts';
import { fail } from './steps.ts';
import { hasValueMovingSubmission } from './submissions.repository.ts';
import { PreflightError, RevertedError } from './submissions.ts';

const MAX_BACKOFF_MS = 60_000;
const HOUR_MS = 3_600_000;

function backoffMs(attempts: number): number {
  const base = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempts, 16));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

function leaseEnd(deps: Deps): Date {
  return new Date(deps.clock.now().getTime() + deps.config.worker.leaseMs);
}

/** Claims up to `limit` runnable rows with a lease (SKIP LOCKED: several workers never take the same row). */
export function claimRows(deps: Deps, owner: string, limit: number): Promise<TransactionRow[]> {
  return leaseDueRows(deps.database.db, owner, deps.clock.now(), leaseEnd(deps), limit);
}

/** Takes the lease of one row (a request driving its own letter leg inline); undefined when someone holds it. */
export function claimRow(deps: Deps, id: string, owner: string): Promise<TransactionRow | undefined> {
  return leaseRow(deps.database.db, id, owner, deps.clock.now(), leaseEnd(deps));
}

/**
 * Advances one leased row as far as it can go now. Transient faults are retried later with backoff, never shown;
 * FAILED is written only when nothing moved.
 */
export async function processRow(deps: Deps, row: TransactionRow, logger: Logger): Promise<void> {
  const network = deps.network;
  if (!network) throw new Error('the worker needs the chain');
  const operation = deps.operations[row.type];
  const ctx: OperationContext = { deps, network };
  const { db } = deps.database;
  // The lease is renewed while the row is driven, so a slow chain (a receipt wait) never lets a second worker
  // take a row that is still in hand.
  const renewal = setInterval(() => {
    updateLeased(db, row, { leaseUntil: leaseEnd(deps) }).catch((error: unknown) =>
      logger.warn({ transactionId: row.id, err: error }, 'lease renewal failed'),
    );
  }, deps.config.worker.leaseMs / 3);
  renewal.unref();
  try {
    await operation.run(ctx, row);
    await updateLeased(db, row, { leaseOwner: null, leaseUntil: null });
  } catch (error) {
    const nothingMoved = !(await hasValueMovingSubmission(db, row.id).catch(() => true));
    if (error instanceof RevertedError || (error instanceof PreflightError && nothingMoved)) {
      logger.warn(
        { transactionId: row.id, type: row.type, reason: (error as Error).message },
        'transaction failed',
      );
      const code = (error instanceof PreflightError && error.errorCode) || operation.failureCode;
      await fail(ctx, row, code, (error as Error).message);
      return;
    }
    const attempts = row.attempts + 1;
    // Transient faults (an RPC or relayer outage) are retried without surfacing for the configured horizon from the
    // row's creation; past it, a row that never got past pre-flight is failed so it does not wait forever. A row
    // that signed anything that moves funds is never failed here: its fate is on the chain, not in the fault.
    const retryUntil = row.createdAt.getTime() + deps.config.worker.transientRetryHours * HOUR_MS;
    if (nothingMoved && row.status === 'QUEUED' && deps.clock.now().getTime() >= retryUntil) {
      logger.error(
        { transactionId: row.id, attempts, err: error },
        'transaction failed: transient faults outlasted the retry horizon before submission',
      );
      await fail(
        ctx,
        row,
        operation.failureCode,
        `The operation could not be submitted within ${deps.config.worker.transientRetryHours} hours (the network ` +
          'or the relayer kept failing); nothing moved. Try again.',
      );
      return;
    }
    logger.warn({ transactionId: row.id, attempts, err: error }, 'transient fault; will retry');
    // Guarded by the lease like the success path: a worker whose lease was taken over (it stalled past LEASE_MS)
    // must not reschedule or release a row the new owner is driving.
    await updateLeased(db, row, {
      attempts,
      nextAttemptAt: new Date(deps.clock.now().getTime() + backoffMs(attempts)),
      leaseOwner: null,
      leaseUntil: null,
    });
  } finally {
    clearInterval(renewal);
  }
}

/**
 * The embedded database is opened by one process at a time, so at start every lease in it belongs to a process
 * that is gone (kill -9, power loss): release them now instead of leaving the rows stalled for the lease (WORKER_LEASE_MS). On
 * PostgreSQL other live workers may hold leases, which expire on their own.
 */
export async function releaseOrphanedLeases(deps: Deps): Promise<number> {
  if (deps.database.kind !== 'pglite') return 0;
  return releaseAllLeases(deps.database.db);
}

/** The worker loop: claim, run up to `concurrency` rows at once, repeat; stops cleanly on demand. */
export async function startWorker(deps: Deps, logger: Logger): Promise<() => Promise<void>> {
  const owner = `worker-${newId()}`;
  const orphaned = await releaseOrphanedLeases(deps);
  if (orphaned > 0) logger.warn({ released: orphaned }, 'released leases left by a previous process');
  const { concurrency, pollMs } = deps.config.worker;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let wake: (() => void) | null = null;
  // A notification that arrives while the loop is claiming is kept for the next round rather than lost.
  let notified = false;
  // Requests notify when they queue work (deps.workSignal, across processes on PostgreSQL): no waiting for a poll.
  const unsubscribe = deps.workSignal.subscribe(() => {
    if (wake) wake();
    else notified = true;
  });

  const loop = (async () => {
    while (!stopped) {
      const room = concurrency - inFlight.size;
      let claimed: TransactionRow[] = [];
      if (room > 0) {
        claimed = await claimRows(deps, owner, room).catch((error: unknown) => {
          logger.error({ err: error }, 'claiming work failed');
          return [];
        });
        for (const row of claimed) {
          const task = processRow(deps, row, logger)
            .catch((error: unknown) =>
              logger.error({ err: error, transactionId: row.id }, 'worker task crashed'),
            )
            .finally(() => {
              inFlight.delete(task);
              wake?.();
            });
          inFlight.add(task);
        }
      }
      if (claimed.length > 0 && claimed.length === room) continue;
      if (notified) {
        notified = false;
        if (room > 0) continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();

  logger.info({ owner, concurrency }, 'worker started');
  return async () => {
    stopped = true;
    wake?.();
    unsubscribe();
    await loop;
    await Promise.allSettled([...inFlight]);
  };
}

/** How long creation and claim block on their leg before answering (the interface's ~20 s). */
export const BLOCKING_BUDGET_MS = 20_000;
const TERMINAL = new Set(['CONFIRMED', 'SETTLED', 'FAILED']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The inline driver: drives one row from the request that queued it, for at most `budgetMs`. It takes the row's
 * lease and runs it, or waits while a worker holds it; whatever is unfinished at the deadline a worker carries on.
 */
export async function driveInline(
  deps: Deps,
  transactionId: string,
  logger: Logger,
  budgetMs = BLOCKING_BUDGET_MS,
): Promise<TransactionRow> {
  const owner = `inline-${newId()}`;
  const deadline = Date.now() + budgetMs;
  let running: Promise<void> | null = null;
  for (;;) {
    const current = await findTransactionById(deps.database.db, transactionId);
    if (!current) throw new Error(`transaction ${transactionId} vanished`);
    if (TERMINAL.has(current.status) || Date.now() >= deadline) return current;
    // A leg backing off from a transient fault waits for its next attempt here too, rather than hammering an
    // RPC or relayer that is down for the whole budget.
    if (!running && current.nextAttemptAt <= deps.clock.now()) {
      const leased = await claimRow(deps, transactionId, owner);
      if (leased) {
        running = processRow(deps, leased, logger).finally(() => {
          running = null;
        });
      }
    }
    await Promise.race([running ?? sleep(100), sleep(Math.min(250, deadline - Date.now()))]);
  }
}
