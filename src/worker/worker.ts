import type { TransactionRow, TransactionType } from '../db/schema/index.ts';
import type { Deps, OperationContext } from '../deps.ts';
import { type Backoff, backoffMs } from '../lib/backoff.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { checkFinality, FINALITY_CHECK_MS } from './finality.ts';
import {
  findTransactionById,
  leaseDueRows,
  leaseRow,
  releaseAllLeases,
  updateLeased,
} from './outbox.repository.ts';
import { hasSandboxPreflight, SandboxFault, sandboxPreflight } from './sandbox-faults.ts';
import { fail } from './steps.ts';
import { hasValueMovingSubmission } from './submissions.repository.ts';
import { AwaitingChain, PreflightError, RevertedError } from './submissions.ts';

/** A transaction's retries: 250 ms doubling up to a minute (src/lib/backoff.ts). */
const RETRY: Backoff = { firstMs: 250, factor: 2, maxMs: 60_000 };
const HOUR_MS = 3_600_000;

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
  const ctx = operationContext(deps, logger);
  const { db } = deps.database;
  const renewal = renewLeases(deps, [row], logger);
  try {
    sandboxPreflight(deps, row);
    await deps.operations[row.type].run(ctx, row);
    await updateLeased(db, [row], { leaseOwner: null, leaseUntil: null });
  } catch (error) {
    await recover(ctx, row, error, logger);
  } finally {
    clearInterval(renewal);
  }
}

function operationContext(deps: Deps, logger: Logger): OperationContext {
  const network = deps.network;
  if (!network) throw new Error('the worker needs the chain');
  return { deps, network, logger };
}

/**
 * The leases are renewed while the rows are driven, so a slow chain (a receipt wait) never lets a second worker
 * take a row that is still in hand.
 */
function renewLeases(deps: Deps, rows: TransactionRow[], logger: Logger): NodeJS.Timeout {
  const renewal = setInterval(() => {
    updateLeased(deps.database.db, rows, { leaseUntil: leaseEnd(deps) }).catch((error: unknown) =>
      logger.warn({ transactionIds: rows.map((row) => row.id), err: error }, 'lease renewal failed'),
    );
  }, deps.config.worker.leaseMs / 3);
  renewal.unref();
  return renewal;
}

/**
 * Rows of a type with `Operation.batch`, ready together: one batch (one chain transaction, one input proof) where
 * the operation can make one; the rows it hands back, and a lone row, go through `processRow`.
 */
export async function processBatch(deps: Deps, claimed: TransactionRow[], logger: Logger): Promise<void> {
  // A sandbox magic amount's row goes alone, through the pre-flight that acts on it.
  const triggered = claimed.filter((row) => hasSandboxPreflight(deps, row));
  const rows = triggered.length > 0 ? claimed.filter((row) => !triggered.includes(row)) : claimed;
  if (triggered.length > 0) await Promise.all(triggered.map((row) => processRow(deps, row, logger)));
  const [first] = rows;
  const batch = first && deps.operations[first.type].batch;
  if (!first || !batch || rows.length === 1) {
    await Promise.all(rows.map((row) => processRow(deps, row, logger)));
    return;
  }
  const ctx = operationContext(deps, logger);
  // Renewed until the last row that goes alone has run: those run one after another, and a lease left to lapse
  // meanwhile let another worker batch a row this one then also sent alone (`claimGoingAlone` now refuses that
  // too). A released row's renewal matches no lease and changes nothing.
  const renewal = renewLeases(deps, rows, logger);
  try {
    let alone: TransactionRow[] = [];
    try {
      alone = await batch.run(ctx, rows);
      const done = rows.filter((row) => !alone.includes(row));
      await updateLeased(deps.database.db, done, { leaseOwner: null, leaseUntil: null });
    } catch (error) {
      // Each row is then what it would be after a fault of its own: retried later, or resumed from its batch.
      await Promise.all(rows.map((row) => recover(ctx, row, error, logger)));
    }
    // Sent one after another: rows of one wallet take that wallet's nonces in order either way.
    for (const row of alone) await processRow(deps, row, logger);
  } finally {
    clearInterval(renewal);
  }
}

/**
 * What follows a fault while a row was driven: FAILED when nothing moved and the fault is final, else retried
 * with backoff (never shown) until the retry horizon.
 */
async function recover(ctx: OperationContext, row: TransactionRow, error: unknown, logger: Logger) {
  const { deps } = ctx;
  const { db } = deps.database;
  const operation = deps.operations[row.type];
  if (error instanceof AwaitingChain) {
    // Not a fault: the chain is not there yet (confirmations, a replacement to sign). No attempt is counted.
    await updateLeased(db, [row], {
      nextAttemptAt: new Date(deps.clock.now().getTime() + error.retryInMs),
      leaseOwner: null,
      leaseUntil: null,
    });
    if (error.retryInMs === 0) deps.workSignal.notify('transactions');
    return;
  }
  {
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
    await updateLeased(db, [row], {
      attempts,
      nextAttemptAt:
        error instanceof SandboxFault
          ? error.until
          : new Date(deps.clock.now().getTime() + backoffMs(RETRY, attempts)),
      leaseOwner: null,
      leaseUntil: null,
    });
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

/** Claimed rows that may join a batch, by type (only where the network has a batcher), and the others. */
function splitJoinable(deps: Deps, claimed: TransactionRow[]) {
  const joinable = new Map<TransactionType, TransactionRow[]>();
  const single: TransactionRow[] = [];
  const batching = deps.network?.transferBatcher && deps.config.worker.batchMax > 1;
  for (const row of claimed) {
    if (batching && deps.operations[row.type].batch?.canJoin(row)) {
      joinable.set(row.type, [...(joinable.get(row.type) ?? []), row]);
    } else {
      single.push(row);
    }
  }
  return { joinable, single };
}

/**
 * The first rows of a batch wait `batchWindowMs` for others of their type: the loop adds what it claims meanwhile
 * to the open batch (`close` hands it over and closes it), and at the end of the window the rows queued since are
 * leased too, up to `batchMax` in all. Then they go out together, `batchMax` at most per batch.
 */
async function collectBatches(
  deps: Deps,
  owner: string,
  type: TransactionType,
  close: () => TransactionRow[],
  logger: Logger,
): Promise<void> {
  const { batchMax, batchWindowMs } = deps.config.worker;
  if (batchWindowMs > 0) await new Promise((resolve) => setTimeout(resolve, batchWindowMs));
  const rows = close();
  if (rows.length < batchMax) {
    const more = await leaseDueRows(
      deps.database.db,
      owner,
      deps.clock.now(),
      leaseEnd(deps),
      batchMax - rows.length,
      type,
    ).catch((error: unknown) => {
      logger.error({ err: error }, 'claiming work failed');
      return [];
    });
    rows.push(...more);
  }
  const batches: TransactionRow[][] = [];
  for (let start = 0; start < rows.length; start += batchMax)
    batches.push(rows.slice(start, start + batchMax));
  await Promise.all(batches.map((batch) => processBatch(deps, batch, logger)));
}

/**
 * Every `FINALITY_CHECK_MS`, a look for reorgs deeper than `CONFIRMATIONS` (`checkFinality`), one at a time;
 * returns the stop.
 */
function watchFinality(deps: Deps, logger: Logger): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      checkFinality(operationContext(deps, logger)).then(
        () => undefined,
        (error: unknown) => logger.warn({ err: error }, 'finality check failed; it runs again'),
      ),
    );
  }, FINALITY_CHECK_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** The worker loop: claim, run up to `concurrency` rows at once, repeat; stops cleanly on demand. */
export async function startWorker(deps: Deps, logger: Logger): Promise<() => Promise<void>> {
  const owner = `worker-${newId()}`;
  const orphaned = await releaseOrphanedLeases(deps);
  if (orphaned > 0) logger.warn({ released: orphaned }, 'released leases left by a previous process');
  const { concurrency, pollMs } = deps.config.worker;
  const inFlight = new Set<Promise<void>>();
  // The open batch of each type (see collectBatches): rows claimed while it waits join it.
  const collecting = new Map<TransactionType, TransactionRow[]>();
  let stopped = false;
  let wake: (() => void) | null = null;
  // A notification that arrives while the loop is claiming is kept for the next round rather than lost.
  let notified = false;
  // Requests notify when they queue work (deps.workSignal, across processes on PostgreSQL): no waiting for a poll.
  const unsubscribe = deps.workSignal.subscribe('transactions', () => {
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
        const { joinable, single } = splitJoinable(deps, claimed);
        const tasks: [string, () => Promise<void>][] = [
          ...single.map((row): [string, () => Promise<void>] => [
            row.id,
            () => processRow(deps, row, logger),
          ]),
        ];
        for (const [type, rows] of joinable) {
          const open = collecting.get(type);
          if (open) {
            open.push(...rows);
            continue;
          }
          collecting.set(type, rows);
          const close = () => {
            collecting.delete(type);
            return rows;
          };
          tasks.push([`${type} batch`, () => collectBatches(deps, owner, type, close, logger)]);
        }
        for (const [name, run] of tasks) {
          const task = run()
            .catch((error: unknown) =>
              logger.error({ err: error, transactionId: name }, 'worker task crashed'),
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

  const finality = watchFinality(deps, logger);
  logger.info({ owner, concurrency }, 'worker started');
  return async () => {
    stopped = true;
    await finality();
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
